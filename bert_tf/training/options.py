"""The options every training script takes, read before TensorFlow starts (this module imports
none of it, so that a flag error is the first line a script prints): the original's TPU flags,
ours for distribution, precision, XLA and checkpoints (`TrainingOptions`), evaluation's
(`EvalOptions`), and the plain `TrainerSettings` that `training.setup` takes from them."""

from __future__ import annotations

import dataclasses

from bert_tf.options import Options, greater_than_zero, one_of, option, options, positive

# The compute dtypes (Keras dtype policies) the scripts offer; mixed_float16 needs loss scaling.
DTYPES = ("float32", "mixed_float16", "mixed_bfloat16")
# The tf.distribute strategies (`training.distribute.get_strategy`).
STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


@options
class TpuOptions(Options):
    """The original scripts' TPU flags, with their defaults."""

    use_tpu: bool = option(False, "Whether to use TPU or GPU/CPU.")
    tpu_name: str | None = option(None, "The Cloud TPU to use for training (name or grpc:// url).")
    tpu_zone: str | None = option(None, "[Optional] GCE zone where the Cloud TPU is located in.")
    gcp_project: str | None = option(None, "[Optional] Project name for the Cloud TPU.")
    master: str | None = option(None, "[Optional] TensorFlow master URL.")
    num_tpu_cores: int = option(
        8, "Only used if `use_tpu` is True. Total number of TPU cores to use."
    )


@options
class DistributionOptions(TpuOptions):
    """Where the training scripts run: the original's TPU flags and ours for GPUs and
    workers."""

    distribution_strategy: str = option(
        "one_device",
        "one_device, mirrored (GPUs of this machine), multi_worker_mirrored (TF_CONFIG) or tpu "
        "(also chosen by --use_tpu).",
        one_of(*STRATEGIES),
    )
    num_gpus: int = option(
        1,
        "Replicas of --distribution_strategy=mirrored (on a machine without GPUs: logical CPU "
        "devices).",
        positive,
    )


@options
class TrainingOptions(DistributionOptions):
    """The original's flags that pre-training and fine-tuning share, with its defaults, and ours
    for precision, XLA, accumulation, seed, logging and checkpoint retention."""

    dtype: str = option(
        "float32",
        "Compute dtype: float32, mixed_float16 (with dynamic loss scaling) or mixed_bfloat16.",
        one_of(*DTYPES),
    )
    use_xla: bool = option(
        False,
        "Compile with XLA (the whole step on one device; else the forward and backward pass). "
        "On CPUs leave it off with mixed_bfloat16: XLA:CPU does not use the AMX bfloat16 "
        "matmuls that oneDNN uses.",
    )
    gradient_accumulation_steps: int = option(
        1,
        "Micro-batches summed per update; train_batch_size stays the batch of one update.",
        positive,
    )
    seed: int | None = option(None, "Seed of initialization, dropout and input order.")
    log_steps: int = option(100, "Log and write summaries every this many steps.", positive)
    keep_checkpoint_max: int = option(5, "How many training checkpoints to keep.", positive)

    bert_config_file: str = option(
        None,
        "The config json file corresponding to the pre-trained BERT model. This specifies the "
        "model architecture.",
        required=True,
    )
    output_dir: str = option(
        None,
        "The output directory where the model checkpoints will be written.",
        required=True,
    )
    init_checkpoint: str | None = option(
        None,
        "Initial checkpoint (usually from a pre-trained BERT model): the original format, a "
        "bert_tf checkpoint or a Hugging Face BERT directory (config.json, model.safetensors).",
    )
    max_seq_length: int = option(
        128, "The maximum total input sequence length after WordPiece tokenization.", positive
    )
    do_train: bool = option(False, "Whether to run training.")
    train_batch_size: int = option(32, "Total batch size for training.", positive)
    learning_rate: float = option(5e-5, "The initial learning rate for Adam.", greater_than_zero)
    save_checkpoints_steps: int = option(1000, "How often to save the model checkpoint.", positive)
    iterations_per_loop: int = option(
        1000, "How many steps to make in each call into the device.", positive
    )

    def trainer_settings(self, **more) -> TrainerSettings:
        """The plain values `build_trainer` and `train` take (`more`: a script's own, such as
        pre-training's optimizer); every `*_batch_size` option is a global batch to check."""
        batch_sizes = {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if field.name.endswith("_batch_size")
        }
        names = [field.name for field in dataclasses.fields(TrainerSettings)]
        values = {name: getattr(self, name) for name in names if hasattr(self, name)}
        return TrainerSettings(**{**values, "batch_sizes": batch_sizes, **more})


@dataclasses.dataclass(frozen=True)
class TrainerSettings:
    """What `build_trainer` and `train` take: plain values (the scripts make them of their
    options, `TrainingOptions.trainer_settings`; from Python, give them directly)."""

    output_dir: str
    learning_rate: float
    batch_sizes: dict  # name -> global batch ("train_batch_size": 32, ...)
    init_checkpoint: str | None = None
    do_train: bool = True
    dtype: str = "float32"
    use_xla: bool = False
    seed: int | None = None
    gradient_accumulation_steps: int = 1
    keep_checkpoint_max: int = 5
    keep_checkpoint_every_n_steps: int | None = None
    optimizer: str = "adamw"
    iterations_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    log_steps: int = 100


@options
class EvalOptions(Options):
    """--do_eval: evaluation apart from training (and, fine-tuning, from the test set)."""

    do_eval: bool = option(False, "Whether to run eval on the dev set.")
    eval_batch_size: int = option(8, "Total batch size for eval.", positive)
