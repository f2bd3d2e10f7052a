"""The scripts' options, each declared once: its name (the original's where it has one), type,
default, help and check, as a field of an options dataclass.

    @options
    class SquadOptions(FineTuningOptions, TfdsOptions):
        doc_stride: int = option(128, "When splitting up a long document ...", check=positive)
        max_seq_length: int = redefault(384)

The scripts' absl flags are made from these fields (`bert_tf.cli.define_flags`), so a flag, its
dataclass field and its check cannot drift apart; the library takes the dataclasses, so it
runs from Python without absl. `check_options(values)` runs every field's check (and
`required`), then the class's `check()` for what relates several fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

from bert_tf.errors import InputError

Check = Callable[[str, Any], None]


class Options:
    """The base of every options class: `check()` is where a class checks what relates
    several of its options; each override calls `super().check()` first."""

    def check(self) -> None:
        pass


def option(default: Any, help: str, check: Check | None = None, required: bool = False) -> Any:
    """A dataclass field that is also a flag: `--<field name>=<default>`, `help`, and a check
    of its value alone (raising `InputError`); `required`: must be given (not empty)."""
    return dataclasses.field(
        default=default, metadata={"help": help, "check": check, "required": required}
    )


def redefault(default: Any = None, help: str | None = None) -> Any:
    """The field of the same name in a base class, with another default (and help): a task's
    own default, as run_squad.py's max_seq_length 384."""
    return dataclasses.field(default=default, metadata={"redefault": True, "help": help})


def options(cls: type) -> type:
    """`dataclass(kw_only=True)` that also gives each `redefault` field its base's help,
    check and required."""
    cls = dataclasses.dataclass(kw_only=True)(cls)
    for field in dataclasses.fields(cls):
        if not field.metadata.get("redefault"):
            continue
        base = next(
            f
            for parent in cls.__mro__[1:]
            if dataclasses.is_dataclass(parent)
            for f in dataclasses.fields(parent)
            if f.name == field.name and not f.metadata.get("redefault")
        )
        field.metadata = types.MappingProxyType(
            {**base.metadata, "help": field.metadata["help"] or base.metadata["help"]}
        )
    return cls


def option_fields(cls: type) -> list[tuple[dataclasses.Field, type]]:
    """Each field of an options class with its Python type (`str | None` -> str)."""
    hints = typing.get_type_hints(cls)
    result = []
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        if isinstance(kind, types.UnionType):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        result.append((field, kind))
    return result


def check_options(values) -> None:
    """Raises `InputError` naming the first option that is missing or whose value cannot
    work, then runs `values.check()` (what relates several options). Options checked before
    with the same values are not checked again (a script checks them before TensorFlow
    starts, the library function it calls on entry): a check's warning is said once."""
    checked = dataclasses.astuple(values)
    if getattr(values, "_checked", None) == checked:
        return
    for field in dataclasses.fields(values):
        value = getattr(values, field.name)
        if field.metadata.get("required") and not value:
            raise InputError(f"--{field.name} is required")
        check = field.metadata.get("check")
        if check is not None and value is not None:
            check(field.name, value)
    values.check()
    values._checked = checked


# The checks of one value. ---------------------------------------------------------------------


def positive(name: str, value: int) -> None:
    if value < 1:
        raise InputError(f"--{name}={value}; expected a positive integer")


def non_negative(name: str, value: float) -> None:
    if value < 0:
        raise InputError(f"--{name}={value}; expected >= 0")


def greater_than_zero(name: str, value: float) -> None:
    if value <= 0:
        raise InputError(f"--{name}={value}; expected > 0")


def proportion(name: str, value: float) -> None:
    if not 0 <= value <= 1:
        raise InputError(f"--{name}={value}; expected 0 to 1")


def at_least(minimum: int) -> Check:
    def check(name: str, value: int) -> None:
        if value < minimum:
            raise InputError(f"--{name}={value}; expected at least {minimum}")

    return check


def one_of(*choices: str, unset: str = "") -> Check:
    """The value is one of `choices` (an absl enum flag when the option has a default);
    `unset` says what leaving it unset means, for the error."""

    def check(name: str, value: str) -> None:
        if value not in choices:
            raise InputError(
                f"--{name}={value}; expected one of {', '.join(choices)}"
                + (f" (or unset {unset})" if unset else "")
            )

    check.choices = choices
    return check


def some_of(name: str, value: str, known: list[str], every: list[str] | None = None) -> list[str]:
    """The names a comma-separated option gives (`--tables=table5,figure5`), each one of `known`;
    `all` gives `every` (all of `known` unless said)."""
    names = list(known if every is None else every) if value == "all" else value.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(
            f"--{name}={value}; unknown {', '.join(unknown)}, expected some of "
            f"{', '.join(known)} or all"
        )
    return names
