"""What every top-level script shares: bad input becomes one line on stderr and exit status 1."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from bert_tf.errors import InputError


def run(main: Callable[[list[str]], None]) -> None:
    """`absl.app.run(main)`, turning `InputError` (and missing files) into one clear line.

    Bugs keep their traceback; only errors in what the user gave are shortened.
    """
    from absl import app

    def guarded(argv: list[str]) -> None:
        try:
            main(argv)
        except (InputError, FileNotFoundError) as e:
            program = os.path.basename(sys.argv[0])
            print(f"{program}: error: {e}", file=sys.stderr)
            sys.exit(1)

    app.run(guarded)


def require(flag_values, *names: str) -> None:
    """Raises `InputError` naming the first of the flags `names` left unset."""
    for name in names:
        if not getattr(flag_values, name):
            raise InputError(f"--{name} is required")


def define_tpu_flags() -> None:
    """The original scripts' TPU flags, with their defaults."""
    from absl import flags

    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
    flags.DEFINE_string(
        "tpu_name", None, "The Cloud TPU to use for training (name or grpc:// url)."
    )
    flags.DEFINE_string("tpu_zone", None, "[Optional] GCE zone where the Cloud TPU is located in.")
    flags.DEFINE_string("gcp_project", None, "[Optional] Project name for the Cloud TPU.")
    flags.DEFINE_string("master", None, "[Optional] TensorFlow master URL.")
    flags.DEFINE_integer(
        "num_tpu_cores", 8, "Only used if `use_tpu` is True. Total number of TPU cores to use."
    )


def define_runtime_flags() -> None:
    """Ours, shared by the training scripts: distribution, precision, XLA, accumulation,
    seed, logging and checkpoint retention."""
    from absl import flags

    from bert_tf.distribute import STRATEGIES
    from bert_tf.training import DTYPES

    flags.DEFINE_enum(
        "distribution_strategy",
        "one_device",
        list(STRATEGIES),
        "one_device, mirrored (GPUs of this machine), multi_worker_mirrored (TF_CONFIG) or tpu "
        "(also chosen by --use_tpu).",
    )
    flags.DEFINE_integer(
        "num_gpus",
        1,
        "Replicas of --distribution_strategy=mirrored (on a machine without GPUs: logical CPU "
        "devices).",
    )
    flags.DEFINE_enum(
        "dtype",
        "float32",
        list(DTYPES),
        "Compute dtype: float32, mixed_float16 (with dynamic loss scaling) or mixed_bfloat16.",
    )
    flags.DEFINE_bool(
        "use_xla",
        False,
        "Compile with XLA (the whole step on one device; else the forward and backward pass). "
        "On CPUs leave it off with mixed_bfloat16: XLA:CPU does not use the AMX bfloat16 "
        "matmuls that oneDNN uses.",
    )
    flags.DEFINE_integer(
        "gradient_accumulation_steps",
        1,
        "Micro-batches summed per update; train_batch_size stays the batch of one update.",
    )
    flags.DEFINE_integer("seed", None, "Seed of initialization, dropout and input order.")
    flags.DEFINE_integer("log_steps", 100, "Log and write summaries every this many steps.")
    flags.DEFINE_integer("keep_checkpoint_max", 5, "How many training checkpoints to keep.")


def options_from_flags(options_class, flag_values):
    """An options dataclass filled from the flags of the same names."""
    import dataclasses

    names = [field.name for field in dataclasses.fields(options_class)]
    return options_class(**{name: flag_values[name].value for name in names})
