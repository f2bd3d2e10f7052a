r"""Writes the bert_config.json of a named BERT size, for pre-training from scratch.

BERT-BASE and BERT-LARGE are the paper's (Sec. 3: L=12, H=768, A=12 and L=24, H=1024, A=16);
tiny, mini, small and medium are the smaller BERTs Google released later (Turc et al., 2019,
"Well-Read Students Learn Better"). Any other shape is named as the released models are,
`L-<layers>_H-<hidden>_A-<heads>`: paper Table 6's six are L-3_H-768_A-12, L-6_H-768_A-3,
L-6_H-768_A-12, L-12_H-768_A-12, L-12_H-1024_A-16 and L-24_H-1024_A-16. All have the
feed-forward size 4H, 512 positions, two segment types and the original's dropout, GELU and
initializer; vocab_size is the number of lines of --vocab_file.

    python scripts/make_bert_config.py --size=base --vocab_file=sample_data/vocab.txt \
      --output_file=output/bert_base/bert_config.json
    python scripts/make_bert_config.py --size=L-6_H-768_A-3 --vocab_file=... --output_file=...
"""

from __future__ import annotations

import logging
import re

from bert_tf import cli
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.options import Options, check_options, option, options
from bert_tf.tokenization import load_vocab

# name: (L = num_hidden_layers, H = hidden_size, A = num_attention_heads)
SIZES = {
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
    "medium": (8, 512, 8),
    "base": (12, 768, 12),
    "large": (24, 1024, 16),
}

# Paper Table 6 (model size ablation): (L, H, A) in the paper's row order.
TABLE6_SHAPES = (
    (3, 768, 12),
    (6, 768, 3),
    (6, 768, 12),
    (12, 768, 12),
    (12, 1024, 16),
    (24, 1024, 16),
)


@options
class MakeBertConfigOptions(Options):
    size: str = option(
        None,
        f"The architecture: one of {', '.join(SIZES)}, or L-<layers>_H-<hidden>_A-<heads> (as "
        "the released models' names; e.g. Table 6's L-6_H-768_A-3).",
        required=True,
    )
    vocab_file: str = option(
        None, "The vocabulary: vocab_size is its number of lines.", required=True
    )
    output_file: str = option(None, "Where bert_config.json goes.", required=True)


def shape_of(size: str) -> tuple[int, int, int]:
    """(L, H, A) of a named size or of "L-<layers>_H-<hidden>_A-<heads>"."""
    if size in SIZES:
        return SIZES[size]
    match = re.fullmatch(r"L-(\d+)_H-(\d+)_A-(\d+)", size)
    if not match:
        raise InputError(f"expected one of {', '.join(SIZES)} or L-<layers>_H-<hidden>_A-<heads>")
    layers, hidden, heads = (int(group) for group in match.groups())
    return layers, hidden, heads


def bert_config(size: str, vocab_size: int) -> BertConfig:
    """The config of a size (see `shape_of`), with the released models' other values."""
    layers, hidden, heads = shape_of(size)
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
        type_vocab_size=2,
    )


def make_bert_config(options: MakeBertConfigOptions) -> None:
    check_options(options)
    vocab_size = max(load_vocab(options.vocab_file).values()) + 1
    try:
        config = bert_config(options.size, vocab_size)
    except InputError as e:
        raise InputError(f"--size={options.size}: {e}") from None
    config.to_json_file(options.output_file)
    logging.info(
        "Wrote BERT-%s (vocab_size=%d) to %s", options.size, vocab_size, options.output_file
    )


if __name__ == "__main__":
    cli.define_flags(MakeBertConfigOptions)
    cli.run_with_options(MakeBertConfigOptions, make_bert_config)
