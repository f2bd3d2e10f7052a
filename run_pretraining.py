r"""Masked-LM + next-sentence pre-training (the original's run_pretraining.py and its flags).

    python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
      --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \
      --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

Rerunning the same command after a crash resumes from the latest checkpoint in output_dir.
At the end of training, output_dir/pretrained/ holds the model in the original format.
"""

from __future__ import annotations

from bert_tf import cli
from bert_tf.pretraining.options import PretrainingOptions

cli.define_flags(PretrainingOptions)


def main(options: PretrainingOptions) -> dict:
    from bert_tf.pretraining.run import run_pretraining  # TensorFlow: once the flags pass

    return run_pretraining(options)


if __name__ == "__main__":
    cli.run_with_options(PretrainingOptions, main)
