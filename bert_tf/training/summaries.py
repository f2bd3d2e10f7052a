"""What a run reports: its metrics as one log line, as TensorBoard scalars, and as the original's
eval_results.txt."""

from __future__ import annotations

import contextlib
import logging
import os

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from bert_tf.training.distribute import is_chief

logger = logging.getLogger(__name__)


def format_metrics(metrics: dict) -> str:
    parts = []
    for name, value in metrics.items():
        if name == "loss_scale" and value == 1.0:
            continue
        parts.append(f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value}")
    return ", ".join(parts)


# What tf.summary.scalar writes, without needing the tensorboard package to write it.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
    data_class=summary_pb2.DATA_CLASS_SCALAR,
).SerializeToString()


def write_summaries(writer, metrics: dict, step: int) -> None:
    """One TensorBoard scalar per metric."""
    if writer is None:
        return
    with writer.as_default(step=step):
        for name, value in metrics.items():
            tf.summary.write(name, tf.constant(value, tf.float32), metadata=_SCALAR_METADATA)
    writer.flush()


def write_eval_results(path: str, metrics: dict) -> None:
    """`key = value` lines sorted by key: the original's eval_results.txt."""
    atomic_write_text(path, "".join(f"{k} = {metrics[k]}\n" for k in sorted(metrics)))
    logger.info("eval results in %s", filesystem.absolute(path))


@contextlib.contextmanager
def summary_writer(strategy: tf.distribute.Strategy, output_dir: str, name: str):
    """A TensorBoard writer for output_dir/name on the chief (None elsewhere), closed after the
    block."""
    if not is_chief(strategy):
        yield None
        return
    writer = tf.summary.create_file_writer(os.path.join(output_dir, name))
    try:
        yield writer
    finally:
        writer.close()
