"""Contextual features from a pre-trained BERT, as the original's `extract_features.py`.

One example per input line: a single text, or a pair written `text_a ||| text_b`. For each
example the output is one JSON line, `{"linex_index": i, "features": [{"token": ...,
"layers": [{"index": layer, "values": [...]}, ...]}, ...]}`, with one entry per WordPiece token
(the `linex_index` spelling is the original's and is kept so that existing readers work).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Sequence

import numpy as np
import tensorflow as tf

from bert_tf import filesystem
from bert_tf.errors import InputError
from bert_tf.fileio import text_lines
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.packing import pack_tokens, pad_inputs
from bert_tf.progress import Progress
from bert_tf.tokenization import FullTokenizer, convert_to_unicode

# As the original: a pair is split at the last " ||| " of the line (the first group is greedy).
_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")


@dataclasses.dataclass
class InputExample:
    unique_id: int
    text_a: str
    text_b: str | None = None


@dataclasses.dataclass
class InputFeatures:
    unique_id: int
    tokens: list[str]
    input_ids: list[int]  # [max_seq_length], zero-padded
    input_mask: list[int]  # [max_seq_length], 1 = real token
    input_type_ids: list[int]  # [max_seq_length], the segment ids


def read_examples(input_file: str) -> list[InputExample]:
    """Reads one example per line; raises `InputError` for a missing or empty file."""
    if not filesystem.isfile(input_file):
        raise InputError(f"--input_file={input_file}: no such file")
    examples = []
    with filesystem.open_file(input_file, "rb") as f:
        expected = "text, one sentence (or 'A ||| B') a line"
        for unique_id, raw in enumerate(text_lines(f, input_file, expected)):
            line = convert_to_unicode(raw).strip()
            match = _PAIR.match(line)
            if match is None:
                examples.append(InputExample(unique_id, line))
            else:
                examples.append(InputExample(unique_id, match.group(1), match.group(2)))
    if not examples:
        raise InputError(f"--input_file={input_file}: the file is empty, expected one text a line")
    return examples


def convert_examples_to_features(
    examples: Sequence[InputExample], seq_length: int, tokenizer: FullTokenizer
) -> list[InputFeatures]:
    """`[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, truncated to and padded to `seq_length`."""
    features = []
    for example in examples:
        tokens_a = tokenizer.tokenize(example.text_a)
        tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
        tokens, segment_ids = pack_tokens(tokens_a, tokens_b, seq_length)
        input_ids, input_mask, input_type_ids = pad_inputs(
            tokenizer.convert_tokens_to_ids(tokens), segment_ids, seq_length
        )
        features.append(
            InputFeatures(
                unique_id=example.unique_id,
                tokens=tokens,
                input_ids=input_ids,
                input_mask=input_mask,
                input_type_ids=input_type_ids,
            )
        )
    return features


def parse_layer_indexes(layers: str, num_hidden_layers: int) -> list[int]:
    """`"-1,-2"` -> `[-1, -2]`, each an index into the encoder's layer outputs."""
    try:
        indexes = [int(x) for x in layers.split(",")]
    except ValueError:
        raise InputError(f"--layers={layers}: expected comma-separated integers") from None
    for index in indexes:
        if not -num_hidden_layers <= index < num_hidden_layers:
            raise InputError(
                f"--layers={layers}: layer {index} does not exist, the model has "
                f"num_hidden_layers={num_hidden_layers} (use -{num_hidden_layers} to "
                f"{num_hidden_layers - 1})"
            )
    return indexes


def extract(
    encoder: BertEncoder,
    features: Sequence[InputFeatures],
    layer_indexes: Sequence[int],
    batch_size: int,
) -> Iterator[tuple[InputFeatures, np.ndarray]]:
    """Runs the encoder; yields each feature with its layers, [len(layer_indexes), S, H].

    Every batch is padded to `batch_size` (the padding is dropped), so the model is traced
    once, with static shapes.
    """

    @tf.function
    def layer_outputs(inputs):
        outputs = encoder(inputs, training=False)["encoder_outputs"]
        return tf.stack([outputs[i] for i in layer_indexes], axis=1)  # [B, L, S, H]

    progress = Progress("extract_features", len(features), "examples")
    for start in range(0, len(features), batch_size):
        batch = list(features[start : start + batch_size])
        rows = batch + [batch[0]] * (batch_size - len(batch))
        inputs = {
            "input_ids": np.array([f.input_ids for f in rows], np.int32),
            "input_mask": np.array([f.input_mask for f in rows], np.int32),
            "segment_ids": np.array([f.input_type_ids for f in rows], np.int32),
        }
        values = layer_outputs(inputs).numpy()
        yield from zip(batch, values[: len(batch)], strict=True)
        progress.update(len(batch))
    progress.finish()


def feature_json(feature: InputFeatures, layer_indexes: Sequence[int], values: np.ndarray) -> str:
    """The original's JSON line for one example; values rounded to 6 decimals as it does."""
    tokens = []
    for position, token in enumerate(feature.tokens):
        layers = [
            {"index": index, "values": [round(x, 6) for x in values[j, position].tolist()]}
            for j, index in enumerate(layer_indexes)
        ]
        tokens.append({"token": token, "layers": layers})
    return json.dumps({"linex_index": feature.unique_id, "features": tokens})
