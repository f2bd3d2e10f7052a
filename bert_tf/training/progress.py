"""Progress lines for long work: count, rate and ETA, at most every few seconds."""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

logger = logging.getLogger(__name__)
T = TypeVar("T")


class Progress:
    """Logs `what: done/total unit (rate unit/s, ETA h:mm:ss)` as work advances.

    Args:
        what: the job's name, first on each line.
        total: the expected count, or None when unknown (no ETA then).
        unit: what is counted ("examples", "records", "steps").
        every_seconds: the least time between two lines.
    """

    def __init__(
        self, what: str, total: int | None, unit: str, every_seconds: float = 10.0
    ) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.every_seconds = every_seconds
        self.done = 0
        self.start = self.last = time.monotonic()

    def rate(self) -> float:
        return self.done / max(time.monotonic() - self.start, 1e-9)

    def line(self) -> str:
        rate = self.rate()
        if self.total is None:
            return f"{self.what}: {self.done:,} {self.unit} ({rate:,.1f} {self.unit}/s)"
        eta = datetime.timedelta(seconds=round((self.total - self.done) / max(rate, 1e-9)))
        return (
            f"{self.what}: {self.done:,}/{self.total:,} {self.unit} "
            f"({rate:,.1f} {self.unit}/s, ETA {eta})"
        )

    def update(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.last >= self.every_seconds:
            self.last = now
            logger.info(self.line())

    def counted(self, items: Iterable[T]) -> Iterator[T]:
        """Yields `items`, counting each one."""
        for item in items:
            yield item
            self.update(1)

    def finish(self) -> None:
        logger.info(self.line())
