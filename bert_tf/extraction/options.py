"""extract_features.py's flags: the original's, with its defaults (no TensorFlow: read before it
starts)."""

from __future__ import annotations

from bert_tf.io.fileio import check_output_file
from bert_tf.options import Options, at_least, option, options, positive


@options
class ExtractFeaturesOptions(Options):
    """The original's flags, with its defaults."""

    input_file: str = option(
        None, "Text, one example per line; `text_a ||| text_b` pairs.", required=True
    )
    output_file: str = option(None, "Where the JSON lines go.", required=True)
    layers: str = option("-1,-2,-3,-4", "Comma-separated indexes of the layers to output.")
    bert_config_file: str = option(
        None, "The bert_config.json of the pre-trained model (its architecture).", required=True
    )
    max_seq_length: int = option(
        128,
        "The maximum total input length after WordPiece tokenization; longer inputs are "
        "truncated, shorter ones padded.",
        at_least(3),
    )
    init_checkpoint: str | None = option(
        None, "The pre-trained checkpoint (bert_model.ckpt), or a Hugging Face BERT directory."
    )
    vocab_file: str = option(None, "The vocabulary the model was trained on.", required=True)
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input: True for uncased models, False for cased ones (default: as the "
        "model's files, name or vocab say, else True).",
    )
    batch_size: int = option(32, "Batch size for predictions.", positive)
    use_tpu: bool = option(False, "Run on the TPU named by --master.")
    master: str | None = option(None, "With --use_tpu: the TPU address (grpc://ip:8470) or name.")
    num_tpu_cores: int = option(8, "Accepted for compatibility; TF2 reads the TPU topology itself.")
    use_one_hot_embeddings: bool = option(
        False,
        "Accepted for compatibility; the embedding gather gives the same values on every device.",
    )

    def check(self) -> None:
        super().check()
        check_output_file(self.output_file, "--output_file")
