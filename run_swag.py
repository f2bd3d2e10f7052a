"""Fine-tunes BERT on SWAG (paper Sec. 4.4, Table 4) with run_classifier.py's flags and the
paper's settings as defaults (lr 2e-5, batch 16, 3 epochs).

    python run_swag.py --do_train=true --do_eval=true --data_dir=$SWAG_DIR \
      --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --max_seq_length=128 --output_dir=/tmp/swag_output/

--data_dir holds SWAG's train.csv, val.csv (dev) and test.csv. Writes eval_results.txt
(eval_accuracy, eval_loss, global_step, loss) and, with --do_predict, test_results.tsv (the 4
probabilities of each test example) and predictions.csv (`id,pred`).
"""

from __future__ import annotations

from absl import flags

from bert_tf import cli
from bert_tf.swag.run import SwagOptions, run_swag

FLAGS = flags.FLAGS

# run_classifier.py's flags, with the paper's SWAG settings as defaults.
flags.DEFINE_string("data_dir", None, "The input data dir: SWAG's train.csv, val.csv and test.csv.")
flags.DEFINE_string(
    "bert_config_file",
    None,
    "The config json file corresponding to the pre-trained BERT model.",
)
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string(
    "output_dir", None, "The output directory where the model checkpoints will be written."
)
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "Initial checkpoint (usually from a pre-trained BERT model): the original format or a "
    "bert_tf checkpoint.",
)
flags.DEFINE_bool(
    "do_lower_case",
    True,
    "Whether to lower case the input text. Should be True for uncased models and False for "
    "cased models.",
)
flags.DEFINE_integer(
    "max_seq_length",
    128,
    "The maximum total input sequence length of each choice ([CLS] sent1 [SEP] sent2 ending "
    "[SEP]) after WordPiece tokenization. Longer sequences are truncated, shorter ones padded.",
)
flags.DEFINE_bool("do_train", False, "Whether to run training (train.csv).")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set (val.csv).")
flags.DEFINE_bool(
    "do_predict", False, "Whether to run the model in inference mode on the test set (test.csv)."
)
flags.DEFINE_integer("train_batch_size", 16, "Total batch size (examples) for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size (examples) for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size (examples) for predict.")
flags.DEFINE_float("learning_rate", 2e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion",
    0.1,
    "Proportion of training to perform linear learning rate warmup for.",
)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer(
    "iterations_per_loop", 1000, "How many steps to make in each call into the device."
)
cli.define_tpu_flags()

# Beyond the original.
cli.define_runtime_flags()


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "data_dir", "vocab_file", "bert_config_file", "output_dir")
    run_swag(cli.options_from_flags(SwagOptions, FLAGS))


if __name__ == "__main__":
    cli.run(main)
