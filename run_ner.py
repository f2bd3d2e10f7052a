"""Named-entity recognition on CoNLL-2003 (paper Sec. 5.3, Table 7): fine-tunes BERT, or
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
report); a SavedModel that tags raw text with --export_dir.
"""

from __future__ import annotations

from absl import flags

from bert_tf import cli
from bert_tf.modeling.token_classifier import FEATURES
from bert_tf.ner.run import NerOptions, run_ner

FLAGS = flags.FLAGS

# As run_classifier.py's flags, where they mean the same.
flags.DEFINE_string(
    "data_dir",
    None,
    "The CoNLL-2003 directory: train.txt, valid.txt, test.txt (or eng.train, eng.testa, "
    "eng.testb).",
)
flags.DEFINE_string(
    "bert_config_file", None, "The config json file corresponding to the pre-trained BERT model."
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
    "cased models (the paper's NER results use cased models).",
)
flags.DEFINE_integer(
    "max_seq_length",
    128,
    "The maximum total input sequence length after WordPiece tokenization; documents (or "
    "sentences) that are longer are split into overlapping windows, never truncated.",
)
flags.DEFINE_bool("do_train", False, "Whether to run training (on the train file).")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set (valid.txt).")
flags.DEFINE_bool("do_predict", False, "Whether to tag (and score) the test set (test.txt).")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion", 0.1, "Proportion of training to perform linear learning rate warmup for."
)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer(
    "iterations_per_loop", 1000, "How many steps to make in each call into the device."
)
cli.define_tpu_flags()

# NER's own.
flags.DEFINE_integer(
    "doc_stride",
    64,
    "When a document is longer than a window, how far apart (in WordPiece tokens) windows "
    "start; each word is predicted from the window where it has the most context.",
)
flags.DEFINE_bool(
    "document_context",
    True,
    "Fill each window with as much of the document as fits (the paper's maximal document "
    "context); false: each sentence alone.",
)
flags.DEFINE_string(
    "feature_based",
    None,
    "Feature-based (paper Table 7): train a two-layer BiLSTM and the classifier on these "
    f"frozen BERT activations instead of fine-tuning BERT: one of {', '.join(FEATURES)}.",
)
flags.DEFINE_integer(
    "lstm_units", 768, "Feature-based: each direction's size of the two-layer BiLSTM."
)
cli.define_runtime_flags()
flags.DEFINE_bool(
    "use_tfds",
    False,
    "Read tensorflow-datasets' conll2003, prepared beforehand (train, dev, test), instead of "
    "--data_dir.",
)
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets' data_dir (its local cache).")
flags.DEFINE_string(
    "export_dir",
    None,
    "Also write a SavedModel for TF Serving here: raw text in, entities with character "
    "offsets out (and the ids signature).",
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "vocab_file", "bert_config_file", "output_dir")
    run_ner(cli.options_from_flags(NerOptions, FLAGS))


if __name__ == "__main__":
    cli.run(main)
