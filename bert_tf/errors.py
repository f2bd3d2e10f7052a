"""The one exception type for bad user input.

Library functions raise `InputError` when a file, flag or argument is wrong in a way the user can
fix; its message names the file or flag, the value received and what was expected. The top-level
scripts print it as one line on stderr and exit non-zero. Anything else is a bug and keeps its
traceback.
"""


class InputError(ValueError):
    """Bad input from the user: a file, flag or argument that cannot be used as given."""
