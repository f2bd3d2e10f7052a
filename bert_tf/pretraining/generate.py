"""create_pretraining_data as one call: read, cut into instances, mask, write."""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import random
from collections.abc import Sequence

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.options import check_options
from bert_tf.pretraining.documents import Document, read_documents
from bert_tf.pretraining.instances import create_training_instances
from bert_tf.pretraining.options import GeneratorOptions
from bert_tf.pretraining.records import write_instances
from bert_tf.tokenization import FullTokenizer
from bert_tf.training.progress import Progress

logger = logging.getLogger(__name__)


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
    documents = read_documents(input_files, tokenizer, options.strict_utf8)
    if not documents:
        raise InputError(f"--input_file: no tokens in {', '.join(input_files)}")
    logger.info("Read %d documents from %d files", len(documents), len(input_files))
    return write_pretraining_data(documents, output_files, tokenizer, options, random_seed)


def write_pretraining_data(
    documents: list[Document],
    output_files: Sequence[str],
    tokenizer: FullTokenizer,
    options: GeneratorOptions,
    random_seed: int = 12345,
) -> int:
    """Instances of `documents` (shuffled in place) written round-robin to `output_files`."""
    check_options(options)
    rng = random.Random(random_seed)
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


def shard_path(output_file: str, index: int, count: int) -> str:
    """Where per-file mode writes the records of input file `index` of `count`."""
    return f"{output_file}-{index:05d}-of-{count:05d}"


@functools.lru_cache(maxsize=1)
def _worker_tokenizer(vocab_file: str, do_lower_case: bool) -> FullTokenizer:
    return FullTokenizer(vocab_file, do_lower_case=do_lower_case)


def _generate_shard(
    task: tuple[int, str],
    count: int,
    output_file: str,
    vocab_file: str,
    do_lower_case: bool,
    options: GeneratorOptions,
    random_seed: int,
) -> int:
    index, input_file = task
    tokenizer = _worker_tokenizer(vocab_file, do_lower_case)
    documents = read_documents([input_file], tokenizer, options.strict_utf8)
    if not documents:
        logger.warning("%s has no tokens; its shard is empty", input_file)
    rng = random.Random(random_seed + index)
    instances = create_training_instances(documents, tokenizer.vocab, options, rng)
    return write_instances(
        instances,
        [shard_path(output_file, index, count)],
        options.max_seq_length,
        options.max_predictions_per_seq,
    )


def create_pretraining_data_per_file(
    input_files: Sequence[str],
    output_file: str,
    vocab_file: str,
    do_lower_case: bool,
    options: GeneratorOptions,
    random_seed: int = 12345,
    num_workers: int = 1,
) -> int:
    """Each input file on its own, in `num_workers` processes: beyond the original, for scale.

    Input file i is written to `shard_path(output_file, i, n)`, and that shard equals what the
    original writes for file i alone with `--random_seed=random_seed + i`. Shards do not depend
    on `num_workers`; memory is bounded by the largest input file, not the corpus.
    Returns the number of records written.
    """
    check_options(options)
    work = functools.partial(
        _generate_shard,
        count=len(input_files),
        output_file=output_file,
        vocab_file=vocab_file,
        do_lower_case=do_lower_case,
        options=options,
        random_seed=random_seed,
    )
    # Largest files first, so that no worker is left with a big file at the end.
    tasks = sorted(enumerate(input_files), key=lambda task: -filesystem.getsize(task[1]))
    progress = Progress("create_pretraining_data", len(tasks), "files")
    with contextlib.ExitStack() as stack:
        mapper = map
        if num_workers > 1:
            # spawn, not fork: a fresh interpreter is safe whatever the parent has imported.
            pool = multiprocessing.get_context("spawn").Pool(num_workers)
            mapper = stack.enter_context(pool).imap_unordered
        total = sum(progress.counted(mapper(work, tasks)))
    progress.finish()
    return total
