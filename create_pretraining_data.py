r"""Creates the masked-LM / next-sentence pre-training TFRecords (the original's script and flags).

    python create_pretraining_data.py --input_file=sample_data/sample_text.txt \
      --output_file=/tmp/tf_examples.tfrecord --vocab_file=sample_data/vocab.txt \
      --do_lower_case=True --max_seq_length=128 --max_predictions_per_seq=20 \
      --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5

For the same flags and inputs the records equal the original's, record by record.
"""

from __future__ import annotations

import logging
import os

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import check_output_file
from bert_tf.options import check_options, option, options
from bert_tf.pretraining.documents import documents_from_texts, expand_input_files, tfds_texts
from bert_tf.pretraining.generate import (
    create_pretraining_data,
    create_pretraining_data_per_file,
    write_pretraining_data,
)
from bert_tf.pretraining.options import GeneratorOptions
from bert_tf.tokenization import FullTokenizer, require_tokens


@options
class CreatePretrainingDataOptions(GeneratorOptions):
    """The original's flags (same names and defaults) and ours."""

    input_file: str | None = option(
        None, "Input raw text file (or comma-separated list of files, globs allowed)."
    )
    output_file: str = option(
        None, "Output TF example file (or comma-separated list of files).", required=True
    )
    tfds_name: str | None = option(
        None,
        "Beyond the original, instead of --input_file: an already-prepared tensorflow-datasets "
        "text set (e.g. wikipedia/20230601.en); each example is a document, split into "
        "sentences.",
    )
    tfds_split: str = option("train", "With --tfds_name: the split (slices allowed).")
    tfds_data_dir: str | None = option(None, "With --tfds_name: the tensorflow-datasets data_dir.")
    tfds_text_key: str = option("text", "With --tfds_name: the field holding the text.")
    vocab_file: str = option(
        None, "The vocabulary file that the BERT model was trained on.", required=True
    )
    do_lower_case: bool = option(
        True, "Lower-case the input: True for uncased models, False for cased ones."
    )
    num_workers: int | None = option(
        None,
        "Beyond the original: generate each input file on its own, in this many processes. "
        "File i goes to OUTPUT_FILE-0000i-of-N and equals the original's output for that file "
        "alone with --random_seed=RANDOM_SEED+i. Unset: the original's single run over all "
        "files.",
    )
    random_seed: int = option(12345, "Random seed for data generation.")

    def check(self) -> None:
        super().check()
        if bool(self.input_file) == bool(self.tfds_name):
            raise InputError("give exactly one of --input_file and --tfds_name")
        for path in self.output_file.split(","):
            directory = os.path.dirname(path) or "."
            if not filesystem.is_url(path) and not filesystem.isdir(directory):
                raise InputError(f"--output_file={path}: the directory {directory} does not exist")
            check_output_file(path, "--output_file")
        if self.num_workers is not None and (self.num_workers < 1 or "," in self.output_file):
            raise InputError(
                f"--num_workers={self.num_workers} needs a positive count and one "
                f"--output_file (the shards' prefix), got {self.output_file}"
            )


def create(options: CreatePretrainingDataOptions) -> None:
    """Writes the records the options ask for."""
    check_options(options)
    output_files = options.output_file.split(",")
    tokenizer = FullTokenizer(options.vocab_file, do_lower_case=options.do_lower_case)
    require_tokens(tokenizer.vocab, options.vocab_file, ("[CLS]", "[SEP]", "[MASK]"))
    seed = options.random_seed
    if options.tfds_name:
        texts = tfds_texts(
            options.tfds_name, options.tfds_split, options.tfds_data_dir, options.tfds_text_key
        )
        documents = documents_from_texts(texts, tokenizer)
        if not documents:
            raise InputError(f"--tfds_name={options.tfds_name}: no tokens in {options.tfds_split}")
        count = write_pretraining_data(documents, output_files, tokenizer, options, seed)
    elif options.num_workers is not None:
        input_files = expand_input_files(options.input_file)
        count = create_pretraining_data_per_file(
            input_files, output_files[0], options.vocab_file, options.do_lower_case, options,
            random_seed=seed, num_workers=options.num_workers,
        )  # fmt: skip
        output_files = [f"{output_files[0]}-*-of-{len(input_files):05d}"]
    else:
        input_files = expand_input_files(options.input_file)
        count = create_pretraining_data(input_files, output_files, tokenizer, options, seed)
    logging.info("Wrote %d records to %s", count, ", ".join(output_files))


cli.define_flags(CreatePretrainingDataOptions)

if __name__ == "__main__":
    cli.run_with_options(CreatePretrainingDataOptions, create)
