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
