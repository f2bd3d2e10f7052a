r"""Fine-tunes BERT on SQuAD 1.1 or 2.0 and predicts answers: the original's run_squad.py and
its flags, with the official evaluation built in.

    python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --do_train=True --train_file=$SQUAD_DIR/train-v1.1.json \
      --do_predict=True --predict_file=$SQUAD_DIR/dev-v1.1.json \
      --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=3.0 \
      --max_seq_length=384 --doc_stride=128 --output_dir=/tmp/squad_base/

Writes predictions.json, nbest_predictions.json and (--version_2_with_negative)
null_odds.json; when the predict file has answers, also eval_results.json with the official
evaluation (v1.1: exact_match, f1; v2.0: exact, f1, HasAns_*, NoAns_*, best_f1_thresh, ...),
printed as the official script prints it, and a question-answering SavedModel with
--export_dir.
"""

from __future__ import annotations

import json

from bert_tf import cli
from bert_tf.squad.options import SquadOptions

cli.define_flags(SquadOptions)


def print_evaluation(results: dict) -> None:
    """As the official evaluation script prints it."""
    if results:
        print(json.dumps(results))


def main(options: SquadOptions) -> dict:
    from bert_tf.squad.task import run_squad  # TensorFlow: once the flags pass

    return run_squad(options)


if __name__ == "__main__":
    cli.run_with_options(SquadOptions, main, print_evaluation)
