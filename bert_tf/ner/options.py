"""run_ner.py's options: run_classifier.py's flags where they mean the same, and NER's."""

from __future__ import annotations

from bert_tf.config import FEATURES
from bert_tf.finetuning.options import DataDirOptions, FineTuningOptions, TfdsOptions
from bert_tf.options import one_of, option, options, positive, redefault
from bert_tf.text.windows import warn_of_long_stride
from bert_tf.training.options import EvalOptions


@options
class NerOptions(FineTuningOptions, EvalOptions, DataDirOptions, TfdsOptions):
    """run_ner.py's flags: those of run_classifier.py where they mean the same, and NER's."""

    data_dir: str | None = redefault(
        None,
        "The CoNLL-2003 directory: train.txt, valid.txt, test.txt (or eng.train, eng.testa, "
        "eng.testb).",
    )
    do_lower_case: bool | None = redefault(
        None,
        "Whether to lower case the input text. Should be True for uncased models and False "
        "for cased models (the paper's NER results use cased models; default: as the model's "
        "files, name or vocab say, else True).",
    )
    max_seq_length: int = redefault(
        128,
        "The maximum total input sequence length after WordPiece tokenization; documents (or "
        "sentences) that are longer are split into overlapping windows, never truncated.",
    )
    do_train: bool = redefault(False, "Whether to run training (on the train file).")
    do_eval: bool = redefault(False, "Whether to run eval on the dev set (valid.txt).")
    do_predict: bool = redefault(False, "Whether to tag (and score) the test set (test.txt).")
    doc_stride: int = option(
        64,
        "When a document is longer than a window, how far apart (in WordPiece tokens) windows "
        "start; each word is predicted from the window where it has the most context.",
        positive,
    )
    document_context: bool = option(
        True,
        "Fill each window with as much of the document as fits (the paper's maximal document "
        "context); false: each sentence alone.",
    )
    feature_based: str | None = option(
        None,
        "Feature-based (paper Table 7): train a two-layer BiLSTM and the classifier on these "
        f"frozen BERT activations instead of fine-tuning BERT: one of {', '.join(FEATURES)}.",
        one_of(*FEATURES, unset="to fine-tune"),
    )
    lstm_units: int = option(
        768, "Feature-based: each direction's size of the two-layer BiLSTM.", positive
    )
    use_tfds: bool = redefault(
        False,
        "Read tensorflow-datasets' conll2003, prepared beforehand (train, dev, test), instead "
        "of --data_dir.",
    )
    export_dir: str | None = redefault(
        None,
        "Also write a SavedModel for TF Serving here: raw text in, entities with character "
        "offsets out (and the ids signature).",
    )

    def check(self) -> None:
        super().check()
        room = f"--max_seq_length={self.max_seq_length} - 2"
        warn_of_long_stride(self.doc_stride, self.max_seq_length - 2, room)
