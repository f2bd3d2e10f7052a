r"""A unigram model's masked-LM results on held-out pre-training records: every masked token
predicted from how often tokens are chosen for prediction in the training records (add-one
smoothed), whatever the words around it. The floor a masked LM that has learned no context
sits on: the line the reproduction's masked LMs are measured against
(docs/reproduction/pretraining.md).

    python scripts/paper/unigram_baseline.py --train_records=train.tfrecord \
      --heldout_records=heldout.tfrecord --vocab_file=vocab.txt --output_file=eval_results.txt

Writes eval_results.txt as run_pretraining.py does: masked_lm_loss, masked_lm_perplexity and
masked_lm_accuracy (always the most frequent token).
"""

from __future__ import annotations

import math

import numpy as np

from bert_tf import cli
from bert_tf.io import filesystem
from bert_tf.options import Options, check_options, non_negative, option, options
from bert_tf.tokenization import load_vocab


def predicted_ids(pattern: str, count: int | None = None) -> np.ndarray:
    """The ids of the tokens chosen for prediction (weight 1) in the first `count` records of
    the files `pattern` matches."""
    import tensorflow as tf  # once the flags have passed their checks

    predicted = {
        "masked_lm_ids": tf.io.VarLenFeature(tf.int64),
        "masked_lm_weights": tf.io.VarLenFeature(tf.float32),
    }
    records = tf.data.TFRecordDataset(sorted(filesystem.glob(pattern)))
    if count:
        records = records.take(count)
    ids = []
    for batch in records.batch(4096):
        parsed = tf.io.parse_example(batch, predicted)
        weights = parsed["masked_lm_weights"].values.numpy()
        ids.append(parsed["masked_lm_ids"].values.numpy()[weights > 0])
    return np.concatenate(ids)


def unigram_results(train: np.ndarray, heldout: np.ndarray, vocab_size: int) -> dict:
    counts = np.bincount(train, minlength=vocab_size) + 1.0  # add-one: no token is impossible
    log_p = np.log(counts / counts.sum())
    loss = float(-log_p[heldout].mean())
    return {
        "masked_lm_loss": loss,
        "masked_lm_perplexity": math.exp(loss),
        "masked_lm_accuracy": float((heldout == counts.argmax()).mean()),
    }


@options
class UnigramOptions(Options):
    train_records: str = option(None, "Pre-training records: a file or a glob.", required=True)
    heldout_records: str = option(None, "Held-out records: a file or a glob.", required=True)
    vocab_file: str = option(None, "The records' vocabulary.", required=True)
    max_train_records: int = option(
        200_000, "Training records counted (0: all; a sample is enough).", non_negative
    )
    output_file: str = option(None, "Where eval_results.txt's lines go.", required=True)


def unigram_baseline(args: UnigramOptions) -> None:
    check_options(args)
    train = predicted_ids(args.train_records, args.max_train_records)
    heldout = predicted_ids(args.heldout_records)
    results = unigram_results(train, heldout, len(load_vocab(args.vocab_file)))
    from bert_tf.training.summaries import write_eval_results

    write_eval_results(args.output_file, results)
    print(f"unigram model, {len(heldout):,} held-out predictions: {results}")


if __name__ == "__main__":
    cli.define_flags(UnigramOptions)
    cli.run_with_options(UnigramOptions, unigram_baseline)
