"""The exceptions a script turns into one line on stderr and a non-zero exit.

Library functions raise `InputError` when a file, flag or argument is wrong in a way the user can
fix; its message names the file or flag, the value received and what was expected.
`TrainingDiverged` is not the input's fault: the loss became NaN or infinite. `Preempted`: a
termination signal (or Ctrl-C) stopped training after saving a checkpoint (exit status 128 +
the signal's number, as a process ended by it: 143 for SIGTERM, so schedulers restart it, 130
for Ctrl-C). `WorkerLost`: another worker of a multi-worker run was lost (exit status 75,
sysexits' EX_TEMPFAIL, "try again": start the whole group again). Anything else is a bug and
keeps its traceback.
"""

import re
import signal

# 128 + the signal, what a shell reports for a process the signal ended: 143 for SIGTERM (a
# scheduler restarts it), 130 for Ctrl-C.
SIGNAL_EXIT_STATUS_BASE = 128

# A multi-worker run whose group lost a worker: sysexits.h's EX_TEMPFAIL ("a temporary failure:
# try again"), what a launcher or cluster manager reads as "start every worker again".
RESTART_EXIT_STATUS = 75


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


class WorkerLost(RuntimeError):
    """Another worker of a multi-worker run stopped answering (killed, preempted without
    notice, its machine lost): the group cannot go on without it. Starting every worker again
    with the same flags resumes from the last complete checkpoint."""


def first_line(error: BaseException) -> str:
    """An exception's message in one line (TensorFlow's run on with the op's context)."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    return re.sub(r"^\{\{[^}]*\}\}\s*", "", lines[0])
