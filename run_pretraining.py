"""Masked-LM + next-sentence pre-training (the original's run_pretraining.py and its flags).

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

from absl import flags

from bert_tf import cli
from bert_tf.pretraining.objectives import OBJECTIVES
from bert_tf.pretraining.run import OPTIMIZERS, PretrainingOptions, run_pretraining

FLAGS = flags.FLAGS

# The original's flags, with its defaults.
flags.DEFINE_string(
    "bert_config_file",
    None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.",
)
flags.DEFINE_string(
    "input_file", None, "Input TF example files (can be a glob or comma separated)."
)
flags.DEFINE_string(
    "output_dir", None, "The output directory where the model checkpoints will be written."
)
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Initial checkpoint (usually from a pre-trained BERT model): the original format or a "
    "bert_tf training checkpoint.",
)
flags.DEFINE_integer(
    "max_seq_length",
    128,
    "The maximum total input sequence length after WordPiece tokenization. Must match the data.",
)
flags.DEFINE_integer(
    "max_predictions_per_seq",
    20,
    "Maximum number of masked LM predictions per sequence. Must match the data.",
)
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer(
    "iterations_per_loop", 1000, "How many steps to make in each call into the device."
)
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
cli.define_tpu_flags()

# Beyond the original.
cli.define_runtime_flags()
flags.DEFINE_enum(
    "optimizer", "adamw", list(OPTIMIZERS), "adamw (the original's) or lamb (large batches)."
)
flags.DEFINE_enum(
    "objective",
    "mlm_nsp",
    list(OBJECTIVES),
    "mlm_nsp (BERT), mlm (No NSP) or ltr (left-to-right LM, no NSP): paper Table 5.",
)
flags.DEFINE_string(
    "vocab_file", None, "Optional: copied into output_dir/pretrained/ next to the model."
)
flags.DEFINE_string(
    "eval_input_file",
    None,
    "Held-out records for --do_eval (a glob or comma separated); unset: --input_file, as the "
    "original. Eval reports masked_lm_perplexity (lm_perplexity for --objective=ltr).",
)
flags.DEFINE_integer(
    "keep_checkpoint_every_n_steps",
    0,
    "Also keep a copy of the checkpoint of every N-th step in output_dir/kept/ (never "
    "deleted), to fine-tune the model along the way (paper Figure 5); 0: none.",
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "bert_config_file", "input_file", "output_dir")
    run_pretraining(cli.options_from_flags(PretrainingOptions, FLAGS))


if __name__ == "__main__":
    cli.run(main)
