"""Contextual features from a pre-trained BERT, as the original's `extract_features.py`.

One example per input line: a single text, or a pair written `text_a ||| text_b`. For each
example the output is one JSON line, `{"linex_index": i, "features": [{"token": ...,
"layers": [{"index": layer, "values": [...]}, ...]}, ...]}`, with one entry per WordPiece token
(the `linex_index` spelling is the original's and is kept so that existing readers work).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Iterator, Sequence

import numpy as np
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.extraction.options import ExtractFeaturesOptions
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open, text_lines
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.model_io.source import ModelSource, model_do_lower_case
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.options import check_options
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.tokenization import FullTokenizer, convert_to_unicode, require_tokens
from bert_tf.training.distribute import get_strategy
from bert_tf.training.progress import Progress

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


def extract_features(options: ExtractFeaturesOptions) -> None:
    """Writes the layers `options.layers` of each example's tokens as JSON lines, as the
    original's script: the config, casing and attention direction read as fine-tuning reads
    them (`model_io.source`), the encoder loaded from --init_checkpoint."""
    check_options(options)
    source = ModelSource(options.init_checkpoint) if options.init_checkpoint else None
    config = BertConfig.from_json_file(options.bert_config_file)
    config.check_sequence_length(options.max_seq_length, options.bert_config_file)
    if source is not None:  # a checkpoint pre-trained left to right keeps its causal attention
        config = source.with_attention(config)
    layer_indexes = parse_layer_indexes(options.layers, config.num_hidden_layers)
    do_lower_case = model_do_lower_case(source, options.do_lower_case, options.vocab_file)
    tokenizer = FullTokenizer(options.vocab_file, do_lower_case=do_lower_case)
    require_tokens(tokenizer.vocab, options.vocab_file, ("[CLS]", "[SEP]"))
    config.check_vocab(len(tokenizer.vocab), options.vocab_file)
    examples = read_examples(options.input_file)
    features = convert_examples_to_features(examples, options.max_seq_length, tokenizer)
    if config.type_vocab_size < 2 and any(f.input_type_ids.count(1) for f in features):
        raise InputError(
            f"--input_file={options.input_file} has `text_a ||| text_b` pairs but the model has "
            f"type_vocab_size={config.type_vocab_size} ({options.bert_config_file}), so it has "
            "no embedding for a second segment"
        )

    strategy = get_strategy("tpu" if options.use_tpu else "one_device", tpu_name=options.master)
    with strategy.scope():
        encoder = BertEncoder(config)
    if source is not None:
        load_checkpoint(encoder, source)
    else:
        logging.warning("No --init_checkpoint: the features come from randomly initialized weights")

    with atomic_open(options.output_file) as writer:
        for feature, values in extract(encoder, features, layer_indexes, options.batch_size):
            writer.write(feature_json(feature, layer_indexes, values) + "\n")
    logging.info("Wrote %d examples to %s", len(features), options.output_file)
