r"""Fills in the [MASK]s of sentences with a pre-trained BERT's masked-LM head (paper Sec. 3.1).

The model directory is any that has the pre-training heads: laid out as Google's released
models and run_pretraining.py's `pretrained/` (bert_config.json, bert_model.ckpt with the `cls/`
heads, vocab.txt), run_pretraining.py's output_dir, or a Hugging Face BertForPreTraining. Each
sentence (several are separated by `|`) is packed alone as `[CLS] ... [SEP]`; for each [MASK]
one line gives the `top_k` most probable tokens and their probabilities.

    python scripts/fill_mask.py --model_dir=output/quickstart/pretraining/pretrained \
      --text="Return the [MASK] of the given object.|This module provides [MASK] for sockets."
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.options import Options, check_options, option, options, positive
from bert_tf.tokenization import FullTokenizer, require_tokens

if TYPE_CHECKING:
    from bert_tf.modeling.pretrainer import BertPretrainer


@options
class FillMaskOptions(Options):
    model_dir: str = option(
        None,
        "A model directory with the pre-training heads: the original format (bert_config.json, "
        "bert_model.ckpt, vocab.txt), run_pretraining.py's output_dir, or a Hugging Face one.",
        required=True,
    )
    text: str = option(
        None, "Sentences separated by '|', each with one or more [MASK].", required=True
    )
    top_k: int = option(5, "How many predictions to print per [MASK].", positive)
    do_lower_case: bool | None = option(
        None,
        "Lower-case the text, as for uncased models (default: as the model's files or name "
        "say, else True).",
    )


MASK = "[MASK]"
SENTENCE_SEPARATOR = "|"


def split_sentences(text: str) -> list[str]:
    """The `|`-separated sentences of `text`; raises `InputError` for one without a [MASK]."""
    sentences = [sentence.strip() for sentence in text.split(SENTENCE_SEPARATOR)]
    for sentence in sentences:
        if MASK not in sentence:
            raise InputError(f"--text: no {MASK} in the sentence {sentence!r}")
    return sentences


def _tokens(sentence: str, tokenizer: FullTokenizer) -> list[str]:
    """`[CLS] ... [SEP]` with [MASK] kept whole (BasicTokenizer would split it at "[" and "]")."""
    tokens = ["[CLS]"]
    for i, part in enumerate(sentence.split(MASK)):
        if i:
            tokens.append(MASK)
        tokens.extend(tokenizer.tokenize(part))
    return tokens + ["[SEP]"]


def fill_mask(
    model: BertPretrainer, tokenizer: FullTokenizer, text: str, top_k: int = 5
) -> list[list[tuple[str, float]]]:
    """The `top_k` (token, probability) pairs of each [MASK] in `text`, most probable first.

    `text` holds one sentence or several separated by `|`; the result has one list per [MASK],
    sentence by sentence, left to right.

    Example:
        >>> fill_mask(model, tokenizer, "Return the [MASK] of the given object.", top_k=2)
        [[('value', 0.41), ('number', 0.12)]]
    """
    if top_k < 1:
        raise InputError(f"--top_k must be positive. Received: top_k={top_k}")
    sentences = [_tokens(sentence, tokenizer) for sentence in split_sentences(text)]
    max_length = model.config.max_position_embeddings
    longest = max(len(tokens) for tokens in sentences)
    if longest > max_length:
        raise InputError(
            f"--text: a sentence has {longest} tokens, more than max_position_embeddings="
            f"{max_length}"
        )
    positions = [[i for i, token in enumerate(tokens) if token == MASK] for tokens in sentences]
    # B = sentences, S = the longest sentence, P = the most masks in one sentence.
    batch, num_predictions = len(sentences), max(len(p) for p in positions)
    input_ids = np.zeros((batch, longest), "int32")  # [B, S]
    input_mask = np.zeros((batch, longest), "int32")  # [B, S]
    masked_lm_positions = np.zeros((batch, num_predictions), "int32")  # [B, P], 0-padded
    for b, tokens in enumerate(sentences):
        input_ids[b, : len(tokens)] = tokenizer.convert_tokens_to_ids(tokens)
        input_mask[b, : len(tokens)] = 1
        masked_lm_positions[b, : len(positions[b])] = positions[b]
    outputs = model(
        {
            "input_ids": input_ids,
            "input_mask": input_mask,
            "segment_ids": np.zeros_like(input_ids),
            "masked_lm_positions": masked_lm_positions,
        },
        training=False,
    )
    probabilities = np.exp(np.asarray(outputs["mlm_log_probs"]))  # [B, P, V]
    top_k = min(top_k, probabilities.shape[-1])
    results = []
    for b, sentence_positions in enumerate(positions):
        for p in range(len(sentence_positions)):
            best = np.argsort(-probabilities[b, p], kind="stable")[:top_k]
            tokens = tokenizer.convert_ids_to_tokens(best.tolist())
            results.append(
                [
                    (token, float(probabilities[b, p, i]))
                    for token, i in zip(tokens, best, strict=True)
                ]
            )
    return results


def load_model_dir(model_dir: str, do_lower_case: bool | None) -> tuple:
    """A `BertPretrainer` with its masked-LM head loaded, and its tokenizer, from any model
    directory that has the pre-training heads (`model_io.loading.load_model_directory`)."""
    # TensorFlow: here, once the flags have passed their checks.
    from bert_tf.model_io.loading import load_model_directory
    from bert_tf.modeling.pretrainer import BertPretrainer

    source = load_model_directory(
        model_dir, BertPretrainer, do_lower_case=do_lower_case, require_heads=True
    )
    if source.vocab_file is None:
        raise InputError(f"--model_dir={model_dir}: no vocab.txt there")
    tokenizer = FullTokenizer(source.vocab_file, do_lower_case=source.do_lower_case)
    require_tokens(tokenizer.vocab, source.vocab_file, ("[CLS]", "[SEP]", MASK))
    return source.model, tokenizer


def format_predictions(predictions: list[tuple[str, float]]) -> str:
    return "  ".join(f"{token} {probability:.3f}" for token, probability in predictions)


def print_predictions(options: FillMaskOptions) -> None:
    check_options(options)
    model, tokenizer = load_model_dir(options.model_dir, options.do_lower_case)
    predictions = iter(fill_mask(model, tokenizer, options.text, options.top_k))
    for sentence in split_sentences(options.text):
        count = sentence.count(MASK)
        for i in range(count):
            which = f" ({MASK} {i + 1} of {count})" if count > 1 else ""
            print(f"{sentence}{which} -> {format_predictions(next(predictions))}")


if __name__ == "__main__":
    cli.define_flags(FillMaskOptions)
    cli.run_with_options(FillMaskOptions, print_predictions)
