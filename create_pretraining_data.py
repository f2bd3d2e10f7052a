"""Creates the masked-LM / next-sentence pre-training TFRecords (the original's script and flags).

    python create_pretraining_data.py --input_file=sample_data/sample_text.txt \
      --output_file=/tmp/tf_examples.tfrecord --vocab_file=sample_data/vocab.txt \
      --do_lower_case=True --max_seq_length=128 --max_predictions_per_seq=20 \
      --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5

For the same flags and inputs the records equal the original's, record by record.
"""

from __future__ import annotations

import logging
import os

from absl import flags

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.pretraining.documents import documents_from_texts, expand_input_files, tfds_texts
from bert_tf.pretraining.generate import (
    create_pretraining_data,
    create_pretraining_data_per_file,
    write_pretraining_data,
)
from bert_tf.pretraining.instances import GeneratorOptions
from bert_tf.pretraining.masking import parse_masking_rates
from bert_tf.tokenization import FullTokenizer

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "input_file", None, "Input raw text file (or comma-separated list of files, globs allowed)."
)
flags.DEFINE_string(
    "output_file", None, "Output TF example file (or comma-separated list of files)."
)
flags.DEFINE_string(
    "tfds_name",
    None,
    "Beyond the original, instead of --input_file: an already-prepared tensorflow-datasets text "
    "set (e.g. wikipedia/20230601.en); each example is a document, split into sentences.",
)
flags.DEFINE_string("tfds_split", "train", "With --tfds_name: the split (slices allowed).")
flags.DEFINE_string("tfds_data_dir", None, "With --tfds_name: the tensorflow-datasets data_dir.")
flags.DEFINE_string("tfds_text_key", "text", "With --tfds_name: the field holding the text.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case the input: True for uncased models, False for cased ones."
)
flags.DEFINE_bool("do_whole_word_mask", False, "Mask whole words instead of single WordPieces.")
flags.DEFINE_bool(
    "per_word_mask_decision",
    False,
    "With --do_whole_word_mask: one MASK/SAME/RND decision per word instead of per WordPiece (the "
    "original decides per WordPiece; google-research/bert#910).",
)
flags.DEFINE_string(
    "masking_rates",
    "0.8,0.1,0.1",
    "Beyond the original: how often a masked-LM prediction's input is [MASK], the same token "
    "and a random token (MASK,SAME,RND fractions summing to 1; paper Table 8). The default is "
    "the original's 80/10/10 and writes the original's records.",
)
flags.DEFINE_integer(
    "num_workers",
    None,
    "Beyond the original: generate each input file on its own, in this many processes. File i "
    "goes to OUTPUT_FILE-0000i-of-N and equals the original's output for that file alone with "
    "--random_seed=RANDOM_SEED+i. Unset: the original's single run over all files.",
)
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer(
    "max_predictions_per_seq", 20, "Maximum number of masked LM predictions per sequence."
)
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer(
    "dupe_factor", 10, "Number of times to duplicate the input data (with different masks)."
)
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float(
    "short_seq_prob", 0.1, "Probability of creating sequences shorter than the maximum length."
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "output_file", "vocab_file")
    if bool(FLAGS.input_file) == bool(FLAGS.tfds_name):
        raise InputError("give exactly one of --input_file and --tfds_name")
    options = GeneratorOptions(
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        dupe_factor=FLAGS.dupe_factor,
        masked_lm_prob=FLAGS.masked_lm_prob,
        short_seq_prob=FLAGS.short_seq_prob,
        do_whole_word_mask=FLAGS.do_whole_word_mask,
        whole_word_mask_per_word_decision=FLAGS.per_word_mask_decision,
        masking_rates=parse_masking_rates(FLAGS.masking_rates),
    )
    output_files = FLAGS.output_file.split(",")
    for path in output_files:
        directory = os.path.dirname(path) or "."
        if not os.path.isdir(directory):
            raise InputError(f"--output_file={path}: the directory {directory} does not exist")
    if FLAGS.tfds_name:
        tokenizer = FullTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
        texts = tfds_texts(
            FLAGS.tfds_name, FLAGS.tfds_split, FLAGS.tfds_data_dir, FLAGS.tfds_text_key
        )
        documents = documents_from_texts(texts, tokenizer)
        if not documents:
            raise InputError(f"--tfds_name={FLAGS.tfds_name}: no tokens in {FLAGS.tfds_split}")
        count = write_pretraining_data(
            documents, output_files, tokenizer, options, random_seed=FLAGS.random_seed
        )
    elif FLAGS.num_workers is not None:
        input_files = expand_input_files(FLAGS.input_file)
        if FLAGS.num_workers < 1 or len(output_files) != 1:
            raise InputError(
                f"--num_workers={FLAGS.num_workers} needs a positive count and one "
                f"--output_file (the shards' prefix), got {FLAGS.output_file}"
            )
        count = create_pretraining_data_per_file(
            input_files,
            output_files[0],
            FLAGS.vocab_file,
            FLAGS.do_lower_case,
            options,
            random_seed=FLAGS.random_seed,
            num_workers=FLAGS.num_workers,
        )
        output_files = [f"{output_files[0]}-*-of-{len(input_files):05d}"]
    else:
        input_files = expand_input_files(FLAGS.input_file)
        tokenizer = FullTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
        count = create_pretraining_data(
            input_files, output_files, tokenizer, options, random_seed=FLAGS.random_seed
        )
    logging.info("Wrote %d records to %s", count, ", ".join(output_files))


if __name__ == "__main__":
    cli.run(main)
