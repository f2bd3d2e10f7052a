r"""Fine-tunes BERT on SWAG (paper Sec. 4.4, Table 4) with run_classifier.py's flags and the
paper's settings as defaults (lr 2e-5, batch 16, 3 epochs).

    python run_swag.py --do_train=true --do_eval=true --data_dir=$SWAG_DIR \
      --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --max_seq_length=128 --output_dir=/tmp/swag_output/

--data_dir holds SWAG's train.csv, val.csv (dev) and test.csv. Writes eval_results.txt
(eval_accuracy, eval_loss, global_step, loss) and, with --do_predict, test_results.tsv (the 4
probabilities of each test example) and predictions.csv (`id,pred`); a SavedModel that
scores raw text with --export_dir.
"""

from __future__ import annotations

from bert_tf import cli
from bert_tf.swag.options import SwagOptions

cli.define_flags(SwagOptions)


def main(options: SwagOptions) -> dict:
    from bert_tf.swag.task import run_swag  # TensorFlow: once the flags pass

    return run_swag(options)


if __name__ == "__main__":
    cli.run_with_options(SwagOptions, main)
