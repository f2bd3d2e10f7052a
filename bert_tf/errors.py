"""The exceptions a script turns into one line on stderr and a non-zero exit.

Library functions raise `InputError` when a file, flag or argument is wrong in a way the user can
fix; its message names the file or flag, the value received and what was expected.
`TrainingDiverged` is not the input's fault: the loss became NaN or infinite. `Preempted`: a
termination signal stopped training after saving a checkpoint (exit status 143, as a process
ended by SIGTERM, so schedulers restart it). Anything else is a bug and keeps its traceback.
"""

import re


class InputError(ValueError):
    """Bad input from the user: a file, flag or argument that cannot be used as given."""


class TrainingDiverged(ArithmeticError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


class Preempted(RuntimeError):
    """A termination signal (SIGTERM) stopped training; the step reached was saved."""


def first_line(error: BaseException) -> str:
    """An exception's message in one line (TensorFlow's run on with the op's context)."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    return re.sub(r"^\{\{[^}]*\}\}\s*", "", lines[0])
