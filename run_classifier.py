r"""Fine-tunes BERT on a GLUE task (or XNLI): the original's run_classifier.py and its flags.

    python run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \
      --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 \
      --num_train_epochs=3.0 --output_dir=/tmp/mrpc_output/

Writes eval_results.txt (the original's keys and the task's GLUE metrics), test_results.tsv
and the GLUE submission file with --do_predict, and a SavedModel with --export_dir.
"""

from __future__ import annotations

from bert_tf import cli
from bert_tf.classification.options import ClassifierOptions

cli.define_flags(ClassifierOptions)


def main(options: ClassifierOptions) -> dict:
    from bert_tf.classification.task import run_classifier  # TensorFlow: once the flags pass

    return run_classifier(options)


if __name__ == "__main__":
    cli.run_with_options(ClassifierOptions, main)
