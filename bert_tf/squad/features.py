"""SQuAD examples to model inputs, as the original's `convert_examples_to_features`.

Each context word is WordPiece-tokenized on its own (keeping `tok_to_orig_index`, the word
of every piece). A context longer than the room left by the question is cut into windows
("doc spans") of `max_seq_length - len(query) - 3` pieces that start `doc_stride` apart, each
packed as `[CLS] query [SEP] window [SEP]` (segment 0, then 1) and numbered with a
`unique_id` from 1000000000. A piece in several windows is predicted only from the window
where it has the most context (`is_max_context`).

Shapes: S = max_seq_length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from bert_tf.io.tfrecord import MODEL_INPUTS, RecordSchema, int64_features
from bert_tf.squad.data import SquadExample
from bert_tf.text.windows import DocSpan, doc_spans, is_max_context
from bert_tf.tokenization import FullTokenizer

FIRST_UNIQUE_ID = 1000000000


@dataclasses.dataclass
class InputFeatures:
    """One window of one example."""

    unique_id: int
    example_index: int
    doc_span_index: int
    tokens: list[str]  # the packed tokens, unpadded
    token_to_orig_map: dict[int, int]  # position of a context piece -> its context word
    token_is_max_context: dict[int, bool]  # position of a context piece -> max context here
    input_ids: list[int]  # [S], zero-padded
    input_mask: list[int]  # [S]
    segment_ids: list[int]  # [S]
    start_position: int | None = None  # training: the answer's first position (0: [CLS])
    end_position: int | None = None
    is_impossible: bool = False


def improve_answer_span(
    doc_tokens: Sequence[str],
    input_start: int,
    input_end: int,
    tokenizer: FullTokenizer,
    orig_answer_text: str,
) -> tuple[int, int]:
    """The tightest piece span inside input_start..input_end whose pieces spell the answer.

    SQuAD's answers are character spans, projected onto whitespace words; a word such as
    "(1895-1943)." is more than the answer "1895", and its pieces "( 1895 - 1943 ) ." hold the
    exact answer. When no sub-span matches (an answer inside a piece: "Japan" in
    "Japanese"), the word span stays."""
    tok_answer_text = " ".join(tokenizer.tokenize(orig_answer_text))
    for new_start in range(input_start, input_end + 1):
        for new_end in range(input_end, new_start - 1, -1):
            if " ".join(doc_tokens[new_start : new_end + 1]) == tok_answer_text:
                return new_start, new_end
    return input_start, input_end


# Over 60 lines: the original's function, step for step, kept whole to read beside it.
def convert_examples_to_features(
    examples: Sequence[SquadExample],
    tokenizer: FullTokenizer,
    max_seq_length: int,
    doc_stride: int,
    max_query_length: int,
    is_training: bool,
) -> Iterator[InputFeatures]:
    """Yields the features of every window of every example, in order (unique ids count up
    from 1000000000)."""
    unique_id = FIRST_UNIQUE_ID
    # The questions of a paragraph share its doc_tokens: tokenize each paragraph once (the
    # original re-tokenizes it per question; the pieces are the same).
    pieces_of: dict[int, tuple[list[str], list[int], list[int]]] = {}
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]
        key = id(example.doc_tokens)
        if key not in pieces_of:
            pieces_of[key] = _tokenize_words(example.doc_tokens, tokenizer)
        all_doc_tokens, tok_to_orig_index, orig_to_tok_index = pieces_of[key]

        tok_start = tok_end = None
        if is_training and example.is_impossible:
            tok_start = tok_end = -1
        elif is_training:
            tok_start = orig_to_tok_index[example.start_position]
            if example.end_position < len(example.doc_tokens) - 1:
                tok_end = orig_to_tok_index[example.end_position + 1] - 1
            else:
                tok_end = len(all_doc_tokens) - 1
            tok_start, tok_end = improve_answer_span(
                all_doc_tokens, tok_start, tok_end, tokenizer, example.orig_answer_text
            )

        # [CLS], [SEP] and [SEP] take 3 positions.
        max_tokens_for_doc = max_seq_length - len(query_tokens) - 3
        spans = doc_spans(len(all_doc_tokens), max_tokens_for_doc, doc_stride)
        for span_index, span in enumerate(spans):
            tokens = ["[CLS]", *query_tokens, "[SEP]"]
            segment_ids = [0] * len(tokens)
            token_to_orig_map = {}
            token_is_max_context = {}
            for i in range(span.start, span.start + span.length):
                token_to_orig_map[len(tokens)] = tok_to_orig_index[i]
                token_is_max_context[len(tokens)] = is_max_context(spans, span_index, i)
                tokens.append(all_doc_tokens[i])
            tokens.append("[SEP]")
            segment_ids += [1] * (len(tokens) - len(segment_ids))
            input_ids = tokenizer.convert_tokens_to_ids(tokens)
            padding = [0] * (max_seq_length - len(input_ids))
            feature = InputFeatures(
                unique_id=unique_id,
                example_index=example_index,
                doc_span_index=span_index,
                tokens=tokens,
                token_to_orig_map=token_to_orig_map,
                token_is_max_context=token_is_max_context,
                input_ids=input_ids + padding,
                input_mask=[1] * len(input_ids) + padding,
                segment_ids=segment_ids + padding,
                is_impossible=example.is_impossible,
            )
            if is_training:
                feature.start_position, feature.end_position = _positions_in_window(
                    tok_start, tok_end, span, len(query_tokens)
                )
            yield feature
            unique_id += 1


def _tokenize_words(words: Sequence[str], tokenizer: FullTokenizer):
    """The pieces of each word, each piece's word, and each word's first piece."""
    all_doc_tokens: list[str] = []
    tok_to_orig_index: list[int] = []
    orig_to_tok_index: list[int] = []
    for i, word in enumerate(words):
        orig_to_tok_index.append(len(all_doc_tokens))
        for piece in tokenizer.tokenize(word):
            tok_to_orig_index.append(i)
            all_doc_tokens.append(piece)
    return all_doc_tokens, tok_to_orig_index, orig_to_tok_index


def _positions_in_window(tok_start: int, tok_end: int, span: DocSpan, query_length: int):
    """The answer's positions in the packed window; (0, 0), the [CLS] token, when the window
    does not hold the whole answer or the question is impossible (-1)."""
    if tok_start < 0 or not (span.start <= tok_start and tok_end <= span.start + span.length - 1):
        return 0, 0
    offset = query_length + 2 - span.start  # [CLS] query [SEP] come first
    return tok_start + offset, tok_end + offset


def record_schema(max_seq_length: int, is_training: bool) -> RecordSchema:
    """The original's records: unique_ids, input_ids, input_mask, segment_ids, and for
    training start_positions, end_positions, is_impossible."""
    features = {
        **int64_features(("unique_ids",), ()),
        **int64_features(MODEL_INPUTS, (max_seq_length,)),
    }
    if is_training:
        features.update(int64_features(("start_positions", "end_positions", "is_impossible"), ()))
    return RecordSchema(features)


def record_values(feature: InputFeatures) -> dict:
    return {
        "unique_ids": feature.unique_id,
        **{name: getattr(feature, name) for name in MODEL_INPUTS},
        "start_positions": feature.start_position,
        "end_positions": feature.end_position,
        "is_impossible": feature.is_impossible,
    }
