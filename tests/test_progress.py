"""Long work reports its count, rate and ETA."""

from __future__ import annotations

import logging

from bert_tf.training.progress import Progress


def test_line_has_count_rate_and_eta():
    progress = Progress("job", total=100, unit="records")
    progress.done = 25
    line = progress.line()
    assert line.startswith("job: 25/100 records (")
    assert "records/s, ETA " in line


def test_unknown_total_has_no_eta():
    progress = Progress("job", total=None, unit="steps")
    assert "ETA" not in progress.line()


def test_counted_yields_everything_and_finish_logs(caplog):
    progress = Progress("job", total=3, unit="items", every_seconds=0)
    with caplog.at_level(logging.INFO, logger="bert_tf.training.progress"):
        assert list(progress.counted("abc")) == ["a", "b", "c"]
        progress.finish()
    assert progress.done == 3
    assert "job: 3/3 items" in caplog.text
