r"""Named-entity recognition on CoNLL-2003 (paper Sec. 5.3, Table 7): fine-tunes BERT, or
trains a BiLSTM on frozen BERT features (--feature_based), and scores entities as conlleval.

    python run_ner.py --do_train=true --do_eval=true --do_predict=true \
      --data_dir=$CONLL_DIR --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_lower_case=false \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
      --num_train_epochs=3.0 --output_dir=/tmp/ner_output/

--data_dir holds train.txt, valid.txt and test.txt (or eng.train, eng.testa, eng.testb) in
the CoNLL column format, IOB1 or IOB2. Writes eval_/test_results.txt (conlleval's precision,
recall and F1, overall and per type), eval_/test_predictions.txt (the file with the
predicted tag appended, in its own scheme) and eval_/test_conlleval.txt (conlleval's
report); a SavedModel that tags raw text with --export_dir. Prints each split's scores.
"""

from __future__ import annotations

from bert_tf import cli
from bert_tf.ner.options import NerOptions

cli.define_flags(NerOptions)


def print_scores(results: dict) -> None:
    """Each split's precision, recall and F1 (conlleval's overall line)."""
    from bert_tf.ner.results import PREFIXES

    for split, prefix in PREFIXES.items():
        if f"{prefix}_f1" in results:
            scores = (f"{prefix}_{name}" for name in ("precision", "recall", "f1"))
            print(f"{split}: " + ", ".join(f"{key}={results[key]:.4g}" for key in scores))


def main(options: NerOptions) -> dict:
    from bert_tf.ner.task import run_ner  # TensorFlow: once the flags pass

    return run_ner(options)


if __name__ == "__main__":
    cli.run_with_options(NerOptions, main, print_scores)
