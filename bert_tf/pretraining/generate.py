"""create_pretraining_data as one call: read, cut into instances, mask, write."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from bert_tf.errors import InputError
from bert_tf.pretraining.documents import read_documents
from bert_tf.pretraining.instances import GeneratorOptions, create_training_instances
from bert_tf.pretraining.records import write_instances
from bert_tf.progress import Progress
from bert_tf.tokenization import FullTokenizer

logger = logging.getLogger(__name__)


def check_options(options: GeneratorOptions) -> None:
    """Raises `InputError` naming the flag for settings the generator cannot honour."""
    if options.max_seq_length < 5:
        raise InputError(
            f"--max_seq_length={options.max_seq_length}, expected at least 5 "
            "([CLS] A [SEP] B [SEP] needs one token for each of A and B)"
        )
    if not 1 <= options.max_predictions_per_seq <= options.max_seq_length:
        raise InputError(
            f"--max_predictions_per_seq={options.max_predictions_per_seq}, expected 1 to "
            f"--max_seq_length={options.max_seq_length}"
        )
    if options.dupe_factor < 1:
        raise InputError(f"--dupe_factor={options.dupe_factor}, expected at least 1")
    if not 0.0 < options.masked_lm_prob <= 1.0:
        raise InputError(f"--masked_lm_prob={options.masked_lm_prob}, expected in (0, 1]")
    if not 0.0 <= options.short_seq_prob <= 1.0:
        raise InputError(f"--short_seq_prob={options.short_seq_prob}, expected in [0, 1]")
    if options.whole_word_mask_per_word_decision and not options.do_whole_word_mask:
        raise InputError("--per_word_mask_decision needs --do_whole_word_mask")


def create_pretraining_data(
    input_files: Sequence[str],
    output_files: Sequence[str],
    tokenizer: FullTokenizer,
    options: GeneratorOptions,
    random_seed: int = 12345,
) -> int:
    """The original's single run: every input file into one pool of instances, shuffled, then
    written round-robin to `output_files`. Returns the number of records written.
    """
    check_options(options)
    rng = random.Random(random_seed)
    documents = read_documents(input_files, tokenizer)
    if not documents:
        raise InputError(f"--input_file: no tokens in {', '.join(input_files)}")
    logger.info("Read %d documents from %d files", len(documents), len(input_files))
    instances = create_training_instances(documents, tokenizer.vocab, options, rng)
    progress = Progress("create_pretraining_data", len(instances), "records")
    count = write_instances(
        progress.counted(instances),
        output_files,
        options.max_seq_length,
        options.max_predictions_per_seq,
    )
    progress.finish()
    return count
