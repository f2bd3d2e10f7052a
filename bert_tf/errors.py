"""The exceptions a script turns into one line on stderr and a non-zero exit.

Library functions raise `InputError` when a file, flag or argument is wrong in a way the user can
fix; its message names the file or flag, the value received and what was expected.
`TrainingDiverged` is not the input's fault: the loss became NaN or infinite. `Preempted`: a
termination signal (or Ctrl-C) stopped training after saving a checkpoint (exit status 128 +
the signal's number, as a process ended by it: 143 for SIGTERM, so schedulers restart it, 130
for Ctrl-C). Anything else is a bug and keeps its traceback.
"""

import re
import signal


class InputError(ValueError):
    """Bad input from the user: a file, flag or argument that cannot be used as given."""


class TrainingDiverged(ArithmeticError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


class Preempted(RuntimeError):
    """A termination signal (SIGTERM, or SIGINT: Ctrl-C) stopped training; the step reached
    was saved. `signal_number`: the signal's (SIGTERM's when another worker was told)."""

    def __init__(self, message: str, signal_number: int = signal.SIGTERM) -> None:
        super().__init__(message)
        self.signal_number = int(signal_number)


def first_line(error: BaseException) -> str:
    """An exception's message in one line (TensorFlow's run on with the op's context)."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    return re.sub(r"^\{\{[^}]*\}\}\s*", "", lines[0])
