"""What every top-level script shares: a start-up without TensorFlow's C++ INFO lines and, on
Linux without an accelerator, with TensorFlow's BFC allocator (scripts import this module before
TensorFlow), its flags made from its options dataclass and listed by --help, bad input (or a
diverged training) as one line on stderr and exit status 1; a run stopped by SIGTERM or Ctrl-C
as one line and exit status 128 + the signal (143, 130); a multi-worker run that lost a worker
as one line and exit status 75 (start the group again). Each such line is the last on stderr."""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable

from bert_tf.errors import (
    RESTART_EXIT_STATUS,
    SIGNAL_EXIT_STATUS_BASE,
    InputError,
    Preempted,
    TrainingDiverged,
    WorkerLost,
)
from bert_tf.io import filesystem


def accelerator_present() -> bool:
    """Whether this machine has an accelerator's driver: NVIDIA's (Linux's, or WSL's GPU
    device) or a Cloud TPU VM's devices."""
    paths = ("/proc/driver/nvidia/version", "/dev/dxg", "/dev/accel0", "/dev/vfio/0")
    return any(filesystem.exists(path) for path in paths)


# Read when TensorFlow loads, so set on import. 1 drops only the C++ runtime's INFO lines (the
# CPU-instruction banner, XLA and tf.data set-up notes); its warnings and errors stay. On a
# machine without an accelerator, 3: its errors too, of which a healthy run prints only
# lines about devices that are not there (the failed "cuInit" of a GPU). A
# TF_CPP_MIN_LOG_LEVEL the user set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1" if accelerator_present() else "3")


def physical_memory_mb() -> int:
    """This machine's memory in MiB (on Linux)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)


def uses_bfc_allocator_by_default() -> bool:
    """Whether scripts choose TensorFlow's BFC allocator here: on Linux without an accelerator,
    where it was measured."""
    return sys.platform.startswith("linux") and not accelerator_present()


# Also read when TensorFlow loads. On a CPU, TensorFlow's default allocator is the C library's
# malloc, which on Linux maps every block over 32 MiB afresh and unmaps it when freed: a step's
# vocabulary-sized logits and their gradients are such blocks, page-faulted in again at every
# step. TensorFlow's BFC allocator keeps freed blocks for the next step: 1.14x (Mini) and 1.41x
# (Tiny) the sequences/s of pre-training at batch 32 for 6-10% more peak memory, the same
# weights (benchmarks/README.md). Its memory limit (64 GiB unless set) becomes the machine's,
# so that it refuses nothing malloc would give. A user's setting wins.
if uses_bfc_allocator_by_default():
    os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
    os.environ.setdefault("TF_CPU_BFC_MEM_LIMIT_IN_MB", str(physical_memory_mb()))


def flag_value(argv: list[str], name: str) -> str | None:
    """The value the command line `argv` gives the flag `name` (`--name=value` or `--name
    value`), None where it gives none; what follows a bare "--" (a launcher's worker command)
    is not this command's."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        flag, _, value = arg.lstrip("-").partition("=")
        if flag == name:
            return value or (argv[i + 1] if i + 1 < len(argv) else "")
    return None


# A worker of a multi-worker run holds SIGTERM back from its start (every thread TensorFlow
# starts inherits the mask) until its strategy is built, where TensorFlow installs a SIGTERM
# handler that only logs it: `preemption.sigterm_held` then records one held back, and training
# stops every worker at its first step (a notice while it waits for its peers waits too).
if flag_value(sys.argv, "distribution_strategy") == "multi_worker_mirrored":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def run(main: Callable[[list[str]], None]) -> None:
    """`absl.app.run(main)`, turning `InputError`, missing files and `TrainingDiverged` into
    one clear line.

    Bugs keep their traceback; only errors in what the user gave are shortened.
    """
    from absl import app, flags

    def guarded(argv: list[str]) -> None:
        program = os.path.basename(sys.argv[0])
        try:
            check_path_schemes(flags.FLAGS)
            main(argv)
        except (InputError, FileNotFoundError, TrainingDiverged) as e:
            _exit_with_line(f"{program}: error: {e}", 1)
        except Preempted as e:
            _exit_with_line(f"{program}: {e}", SIGNAL_EXIT_STATUS_BASE + e.signal_number)
        except WorkerLost as e:
            _exit_with_line(f"{program}: {e}", RESTART_EXIT_STATUS)
        except KeyboardInterrupt:  # Ctrl-C outside training's steps: nothing to save there
            _exit_with_line(
                f"{program}: interrupted by Ctrl-C (SIGINT)",
                SIGNAL_EXIT_STATUS_BASE + signal.SIGINT,
            )
        except Exception as e:  # last: only a file system's refusal, the rest is a bug
            if not is_file_system_error(e):
                raise
            # TensorFlow puts the path on a line of its own: one line, path included.
            _exit_with_line(f"{program}: error: {' '.join(str(e).split())}", 1)

    app.run(guarded, flags_parser=parse_flags)


def _exit_with_line(line: str, status: int) -> None:
    """Prints `line` on stderr as the run's last and exits with `status`.

    Exit handlers still run (a worker's scratch folder is removed), but stderr is closed to
    what comes after the line: TensorFlow's C++ runtime logs while the interpreter shuts down
    (a multi-worker run's gRPC links to peers already gone: "failed to connect to all
    addresses"), and under load those lines landed after ours, hiding what to do next.
    A SIGTERM from here on is ignored: it asks for the exit under way, and must not turn its
    status into 143 (a launcher stops a lost worker's survivors as they exit with 75).
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # (kept while the interpreter shuts down)
    print(line, file=sys.stderr, flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stderr.fileno())
    os.close(devnull)
    sys.exit(status)


# The flags that name files or folders (--input_file, --output_dir, --init_checkpoint, the
# converter's --input and --output, ...).
_PATH_FLAG = re.compile(r"(_file|_dir|_checkpoint|^input|^output)$")


def check_path_schemes(flag_values) -> None:
    """Raises `InputError` naming the flag when a path's scheme (`http://`, `s3://`) is none
    that TensorFlow's file system serves here: one line before any work, not an error from
    deep inside it (or, with Python's own file functions, a local folder named `s3:`)."""
    for name in list(flag_values):  # importing TensorFlow below defines flags of its own
        value = flag_values[name].value
        if not (_PATH_FLAG.search(name) and isinstance(value, str) and "://" in value):
            continue
        import tensorflow as tf  # only for a path with a scheme

        served = [scheme for scheme in tf.io.gfile.get_registered_schemes() if scheme]
        for path in value.split(","):
            scheme = path.split("://", 1)[0] if "://" in path else "file"
            if scheme not in served:
                others = ", ".join(f"{s}://" for s in served if s != "file")
                raise InputError(
                    f"--{name}={value}: TensorFlow has no file system for {scheme}:// here; "
                    f"expected a local path or one of {others}"
                )


def is_file_system_error(error: BaseException) -> bool:
    """Whether `error` is TensorFlow's file system refusing a path (not found, forbidden, no
    network): the user's to fix, said in one line that names the path."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return False
    kinds = (
        tf.errors.NotFoundError,
        tf.errors.PermissionDeniedError,
        tf.errors.UnauthenticatedError,
        tf.errors.UnavailableError,
        tf.errors.DeadlineExceededError,
        tf.errors.FailedPreconditionError,  # what a gs:// path gives without network
        tf.errors.UnimplementedError,
    )
    return isinstance(error, kinds) and "://" in str(error)


def parse_flags(argv: list[str]) -> list[str]:
    """absl's flag parsing, except that --help (and --helpfull) exit with status 0: printing
    the help asked for is a success (absl exits 1)."""
    from absl import app, flags

    try:
        return flags.FLAGS(argv)
    except SystemExit:  # only absl's help flags exit while parsing, once the help is printed
        sys.exit(0)
    except flags.Error:
        return app.parse_flags_with_usage(argv)  # parses again: absl's error message, status 1


def run_with_options(
    options_class, function: Callable, report: Callable[[dict], None] | None = None
) -> None:
    """`run` a script whose flags are `define_flags(options_class)`: the options the flags give
    checked (`check_options`), then `function(options)`, then `report(what it returned)`. A
    script that imports TensorFlow only in `function` says a flag error as its first line,
    before TensorFlow's start-up lines."""
    from absl import flags

    from bert_tf.options import check_options

    def main(argv: list[str]) -> None:
        del argv
        options = options_from_flags(options_class, flags.FLAGS)
        check_options(options)
        results = function(options)
        if report is not None:
            report(results)

    run(main)


def require(flag_values, *names: str) -> None:
    """Raises `InputError` naming the first of the flags `names` left unset."""
    for name in names:
        if not getattr(flag_values, name):
            raise InputError(f"--{name} is required")


def define_flags(options_class) -> None:
    """An absl flag for every field of the options dataclass: its name, default, help and
    type; an option checked by `one_of` with a default is an enum flag. The flags belong to
    the script that calls this, so its --help lists them (absl's --help shows only the main
    module's flags)."""
    from absl import flags

    from bert_tf.options import option_fields

    flags.disclaim_key_flags()  # absl then credits each flag to our caller, not to this module

    definers = {
        bool: flags.DEFINE_bool,
        int: flags.DEFINE_integer,
        float: flags.DEFINE_float,
        str: flags.DEFINE_string,
    }
    for field, kind in option_fields(options_class):
        default = field.default
        help_text = field.metadata["help"]
        choices = getattr(field.metadata.get("check"), "choices", None)
        if choices and default is not None:
            flags.DEFINE_enum(field.name, default, list(choices), help_text)
        else:
            definers[kind](field.name, default, help_text)


def options_from_flags(options_class, flag_values):
    """An options dataclass filled from the flags of the same names."""
    import dataclasses

    names = [field.name for field in dataclasses.fields(options_class)]
    return options_class(**{name: flag_values[name].value for name in names})
