"""Next-sentence pairs cut from documents, with their masks: the original's training instances.

Everything is drawn from one `random.Random` in exactly the original's order of calls, so the
same seed gives the same instances, record for record.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence

import numpy as np

from bert_tf.pretraining.documents import Document
from bert_tf.pretraining.masking import (
    MaskingVocab,
    create_masked_lm_predictions,
)
from bert_tf.pretraining.options import GeneratorOptions
from bert_tf.training.progress import Progress


@dataclasses.dataclass
class TrainingInstance:
    """One pre-training example, held compactly as integer arrays.

    `input_ids` is `[CLS] A [SEP] B [SEP]` after masking; `len_a` counts [CLS], A and the first
    [SEP] (segment 0); the rest is segment 1.
    """

    input_ids: np.ndarray  # [num_tokens] int32
    len_a: int
    masked_lm_positions: np.ndarray  # [num_predictions] int32, sorted
    masked_lm_ids: np.ndarray  # [num_predictions] int32, the original tokens
    is_random_next: bool


def truncate_seq_pair(
    tokens_a: list[int], tokens_b: list[int], max_num_tokens: int, rng: random.Random
) -> None:
    """Shortens the longer list (ties: B) one token at a time, from its front or back at random.

    As the original: randomly from either end, "to add more randomness and avoid biases"; one
    draw per removed token.
    """
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


# Over 60 lines: the original's function with every random draw in its order, kept whole.
def create_instances_from_document(
    all_documents: Sequence[Document],
    document_index: int,
    options: GeneratorOptions,
    vocab: MaskingVocab,
    rng: random.Random,
) -> Iterator[TrainingInstance]:
    """Cuts one document into instances: segments are packed up to a target length, split at a
    random point into A and B, and B is replaced by a random document's text half of the time.
    """
    document = all_documents[document_index]
    max_num_tokens = options.max_seq_length - 3  # [CLS], [SEP], [SEP]
    # As the original: usually fill the sequence, but with short_seq_prob aim shorter, to narrow
    # the gap between pre-training and fine-tuning on short inputs. Drawn once per document pass.
    target_seq_length = max_num_tokens
    if rng.random() < options.short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)

    current_chunk: list[list[int]] = []
    current_length = 0
    i = 0
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            # A ends after a random number of the chunk's segments.
            a_end = 1
            if len(current_chunk) >= 2:
                a_end = rng.randint(1, len(current_chunk) - 1)
            tokens_a = [token for seg in current_chunk[:a_end] for token in seg]

            tokens_b: list[int] = []
            # As the original: a one-segment chunk always gets a random next (and, with the
            # short-circuit, draws nothing for the coin).
            is_random_next = len(current_chunk) == 1 or rng.random() < 0.5
            if is_random_next:
                target_b_length = target_seq_length - len(tokens_a)
                # Ten tries at another document; a corpus of one document uses itself.
                for _ in range(10):
                    random_document_index = rng.randint(0, len(all_documents) - 1)
                    if random_document_index != document_index:
                        break
                random_document = all_documents[random_document_index]
                random_start = rng.randint(0, len(random_document) - 1)
                for seg in random_document[random_start:]:
                    tokens_b.extend(seg)
                    if len(tokens_b) >= target_b_length:
                        break
                # The chunk's unused segments are put back for the next instance.
                i -= len(current_chunk) - a_end
            else:
                tokens_b = [token for seg in current_chunk[a_end:] for token in seg]
            truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)

            token_ids = [vocab.cls_id, *tokens_a, vocab.sep_id, *tokens_b, vocab.sep_id]
            output_ids, positions, labels = create_masked_lm_predictions(
                token_ids,
                options.masked_lm_prob,
                options.max_predictions_per_seq,
                vocab,
                rng,
                per_word_decision=options.per_word_mask_decision,
                masking_rates=options.rates,
            )
            yield TrainingInstance(
                input_ids=np.array(output_ids, np.int32),
                len_a=len(tokens_a) + 2,
                masked_lm_positions=np.array(positions, np.int32),
                masked_lm_ids=np.array(labels, np.int32),
                is_random_next=is_random_next,
            )
            current_chunk = []
            current_length = 0
        i += 1


def create_training_instances(
    documents: list[Document],
    vocab: dict[str, int],
    options: GeneratorOptions,
    rng: random.Random,
) -> list[TrainingInstance]:
    """All instances of `documents`, `dupe_factor` passes with fresh masks, shuffled.

    `documents` is shuffled in place first, as the original does (its first draws).
    """
    masking_vocab = MaskingVocab(vocab, options.do_whole_word_mask)
    rng.shuffle(documents)
    instances = []
    progress = Progress(
        "create_training_instances", options.dupe_factor * len(documents), "documents"
    )
    for _ in range(options.dupe_factor):
        for document_index in range(len(documents)):
            instances.extend(
                create_instances_from_document(
                    documents, document_index, options, masking_vocab, rng
                )
            )
            progress.update(1)
    progress.finish()
    rng.shuffle(instances)
    return instances
