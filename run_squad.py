"""Fine-tunes BERT on SQuAD 1.1 or 2.0 and predicts answers: the original's run_squad.py and
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
and a question-answering SavedModel with --export_dir.
"""

from __future__ import annotations

from absl import flags

from bert_tf import cli
from bert_tf.squad.run import SquadOptions, run_squad

FLAGS = flags.FLAGS

# The original's flags, with its defaults.
flags.DEFINE_string(
    "bert_config_file", None, "The config json file corresponding to the pre-trained BERT model."
)
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string(
    "output_dir", None, "The output directory where the model checkpoints will be written."
)
flags.DEFINE_string("train_file", None, "SQuAD json for training, e.g. train-v1.1.json.")
flags.DEFINE_string("predict_file", None, "SQuAD json for predictions, e.g. dev-v1.1.json.")
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
    384,
    "The maximum total input sequence length after WordPiece tokenization; longer contexts "
    "are split into windows.",
)
flags.DEFINE_integer(
    "doc_stride", 128, "When splitting up a long document into chunks, how much stride to take."
)
flags.DEFINE_integer(
    "max_query_length",
    64,
    "The maximum number of tokens for the question; longer questions are truncated.",
)
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_predict", False, "Whether to run prediction on the predict_file.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predictions.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion", 0.1, "Proportion of training to perform linear learning rate warmup for."
)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer(
    "iterations_per_loop", 1000, "How many steps to make in each call into the device."
)
flags.DEFINE_integer(
    "n_best_size", 20, "The total number of n-best predictions to write to nbest_predictions.json."
)
flags.DEFINE_integer(
    "max_answer_length",
    30,
    "The maximum length of an answer, in WordPiece tokens (start and end are predicted "
    "independently, so longer spans are dropped).",
)
cli.define_tpu_flags()
flags.DEFINE_bool(
    "verbose_logging", False, "Log the warnings of projecting predictions back onto the text."
)
flags.DEFINE_bool(
    "version_2_with_negative", False, "SQuAD 2.0: some questions have no answer in the context."
)
flags.DEFINE_float(
    "null_score_diff_threshold",
    0.0,
    "Predict no answer when null score - best non-null score > threshold (SQuAD 2.0).",
)

# Beyond the original.
cli.define_runtime_flags()
flags.DEFINE_bool(
    "use_tfds",
    False,
    "Read tensorflow-datasets' squad/v1.1 (squad/v2.0 with --version_2_with_negative), "
    "prepared beforehand: train for training, validation for prediction.",
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
    "Also write a SavedModel for TF Serving here (question + context strings, and ids).",
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "vocab_file", "bert_config_file", "output_dir")
    run_squad(cli.options_from_flags(SquadOptions, FLAGS))


if __name__ == "__main__":
    cli.run(main)
