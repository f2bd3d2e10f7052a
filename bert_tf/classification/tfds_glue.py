"""GLUE examples from tensorflow-datasets (`glue/<task>`) instead of the TSV files.

The data must already be prepared in `data_dir` (nothing is downloaded here): run
`tfds build glue/mrpc` (or `tfds.load("glue/mrpc")`) once where the network is reachable.
Labels become the TSV files' label names: tfds's class names where they are ours (the NLI
tasks), else the class index ("0"/"1"); test rows (label -1) get the processor's test label.
"""

from __future__ import annotations

from bert_tf.classification.processors import DataProcessor, InputExample
from bert_tf.errors import InputError
from bert_tf.io.tfds import load_prepared

# processor name -> (tfds config, text_a feature, text_b feature or None)
TFDS_TASKS = {
    "CoLA": ("cola", "sentence", None),
    "SST-2": ("sst2", "sentence", None),
    "MRPC": ("mrpc", "sentence1", "sentence2"),
    "STS-B": ("stsb", "sentence1", "sentence2"),
    "QQP": ("qqp", "question1", "question2"),
    "MNLI-m": ("mnli", "premise", "hypothesis"),
    "QNLI": ("qnli", "question", "sentence"),
    "RTE": ("rte", "sentence1", "sentence2"),
    "WNLI": ("wnli", "sentence1", "sentence2"),
}
# Our split names -> tfds's.
TFDS_SPLITS = {
    "train": "train",
    "dev": "validation",
    "test": "test",
    "dev_mismatched": "validation_mismatched",
    "test_mismatched": "test_mismatched",
}


def tfds_examples(processor: DataProcessor, split: str, data_dir: str | None) -> list[InputExample]:
    """The examples of `split` of the processor's task from tensorflow-datasets.

    Raises:
        InputError: the task has no tfds GLUE config, or the data is not prepared.
    """
    if processor.name not in TFDS_TASKS:
        raise InputError(
            f"--use_tfds: {processor.name} is not in tensorflow-datasets' glue; read its TSV "
            "files with --data_dir"
        )
    config, key_a, key_b = TFDS_TASKS[processor.name]
    tfds_split = TFDS_SPLITS[split]
    if processor.name == "MNLI-m" and split in ("dev", "test"):
        tfds_split += "_matched"
    rows, info = load_prepared(f"glue/{config}", tfds_split, data_dir)
    class_names = getattr(info.features["label"], "names", None)
    examples = []
    for row in rows:
        label = row["label"]
        if processor.is_regression:
            label = float(label) if label >= 0 else None
        elif label < 0:
            label = processor.test_label
        elif class_names and class_names[label] in processor.labels:
            label = class_names[label]
        else:
            label = str(int(label))
        examples.append(
            InputExample(
                guid=f"{split}-{int(row['idx'])}",
                text_a=row[key_a].decode("utf-8"),
                text_b=row[key_b].decode("utf-8") if key_b else None,
                label=label,
                index=str(int(row["idx"])) if split.startswith("test") else None,
            )
        )
    # tfds shuffles nothing here but its record order is not the TSV order: sort by index.
    examples.sort(key=lambda e: int(e.guid.rsplit("-", 1)[1]))
    return examples
