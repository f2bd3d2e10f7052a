"""Fine-tunes BERT on a GLUE task (or XNLI): the original's run_classifier.py and its flags.

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

from absl import flags

from bert_tf import cli
from bert_tf.classification.processors import PROCESSORS
from bert_tf.classification.run import ClassifierOptions, run_classifier

FLAGS = flags.FLAGS

# The original's flags, with its defaults.
flags.DEFINE_string(
    "data_dir", None, "The input data dir. Should contain the .tsv files (or other data files)."
)
flags.DEFINE_string(
    "bert_config_file",
    None,
    "The config json file corresponding to the pre-trained BERT model.",
)
flags.DEFINE_string(
    "task_name", None, f"The name of the task to train: one of {', '.join(sorted(PROCESSORS))}."
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
    "The maximum total input sequence length after WordPiece tokenization. Longer sequences "
    "are truncated, shorter ones padded.",
)
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool(
    "do_predict", False, "Whether to run the model in inference mode on the test set."
)
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
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
flags.DEFINE_bool(
    "use_tfds",
    False,
    "Read the task from tensorflow-datasets (glue/<task>, prepared beforehand) instead of "
    "--data_dir's TSV files.",
)
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets' data_dir (its local cache).")
flags.DEFINE_bool(
    "bilstm",
    False,
    'Paper Table 5\'s "+ BiLSTM": a randomly initialised BiLSTM (hidden_size units per '
    "direction) between the encoder's sequence output and the task head.",
)
flags.DEFINE_string(
    "export_dir",
    None,
    "Also write a SavedModel for TF Serving here (raw-text and input-ids signatures).",
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "task_name", "vocab_file", "bert_config_file", "output_dir")
    run_classifier(cli.options_from_flags(ClassifierOptions, FLAGS))


if __name__ == "__main__":
    cli.run(main)
