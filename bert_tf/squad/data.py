"""Reading SQuAD: the JSON files (or tensorflow-datasets' squad) into `SquadExample`s, as the
original's `read_squad_examples` reads them.

The context is split into `doc_tokens` at whitespace (" \\t\\r\\n" and U+202F, the original's
`is_whitespace`), and each character is mapped to its word, so a character-offset answer
becomes a word span. For training, an answer whose text cannot be found in that word span is
skipped (counted and logged), as the original does. Every structural problem of the file is one
`InputError` naming the file, where in it (`data[0].paragraphs[2].qas[1]`) and what is missing.
"""

from __future__ import annotations

import dataclasses
import json
import logging

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_text
from bert_tf.io.tfds import load_prepared

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class SquadExample:
    """One question on one context.

    `doc_tokens` is shared by the questions of a paragraph. Training examples carry the answer
    as a word span (`start_position`..`end_position`, inclusive; -1 for an impossible
    question); `answers` holds every gold answer text (empty for an impossible question, or
    when the file has no answers), for the evaluation.
    """

    qas_id: str
    question_text: str
    doc_tokens: list[str]
    orig_answer_text: str | None = None
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False
    answers: list[str] = dataclasses.field(default_factory=list)


def is_whitespace(c: str) -> bool:
    # As the original: U+202F (narrow no-break space) separates words in a few SQuAD contexts.
    return c in " \t\r\n" or ord(c) == 0x202F


def split_context(context: str) -> tuple[list[str], list[int]]:
    """Whitespace-separated words of `context`, and each character's word index (whitespace
    maps to the word before it, -1 before the first word)."""
    doc_tokens: list[str] = []
    char_to_word_offset = []
    previous_is_whitespace = True
    for c in context:
        if is_whitespace(c):
            previous_is_whitespace = True
        else:
            if previous_is_whitespace:
                doc_tokens.append(c)
            else:
                doc_tokens[-1] += c
            previous_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def read_squad_file(path: str) -> dict:
    """The parsed JSON of a SQuAD file.

    Raises:
        InputError: the file is missing or is not JSON.
    """
    if not filesystem.isfile(path):
        raise InputError(f"{path}: no such file (expected a SQuAD JSON file)")
    text = read_text(path, "a SQuAD JSON file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e}); expected a SQuAD JSON file") from None


def _field(item, key: str, kind: type | tuple, source: str, where: str):
    if not isinstance(item, dict) or key not in item:
        raise InputError(
            f"{source}: {where} has no {key!r}; not a SQuAD file? (expected "
            '{"data": [{"paragraphs": [{"context": ..., "qas": [{"id", "question", '
            '"answers": [{"text", "answer_start"}]}]}]}]})'
        )
    value = item[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or isinstance(value, bool):
        expected = " or ".join(k.__name__ for k in kinds)
        raise InputError(
            f"{source}: {where}.{key} is a {type(value).__name__}; expected a {expected}"
        )
    return value


def is_version_2(dataset: dict) -> bool:
    """Whether the file is SQuAD 2.0 data: its version says so or a question is impossible."""
    if str(dataset.get("version", "")).lstrip("v").startswith("2"):
        return True
    return any(
        qa.get("is_impossible")
        for article in dataset.get("data", [])
        if isinstance(article, dict)
        for paragraph in article.get("paragraphs", [])
        if isinstance(paragraph, dict)
        for qa in paragraph.get("qas", [])
        if isinstance(qa, dict)
    )


def count_questions(dataset: dict) -> int:
    """The questions of a SQuAD file that `read_squad_examples` has read."""
    return sum(
        len(paragraph["qas"]) for article in dataset["data"] for paragraph in article["paragraphs"]
    )


# Over 60 lines: the original's function, step for step, kept whole to read beside it.
def read_squad_examples(
    dataset: dict,
    source: str,
    is_training: bool,
    version_2_with_negative: bool = False,
) -> list[SquadExample]:
    """The examples of a parsed SQuAD file (`source` names it in messages), in file order.

    Training requires exactly one answer per possible question. For prediction the answers are
    not needed; those present are kept for the evaluation.

    Raises:
        InputError: the structure is not SQuAD's (naming the missing part), 2.0 data without
            `version_2_with_negative`, a training question without exactly one answer, an
            answer that lies outside its context, two questions to predict with one id.
    """
    if not version_2_with_negative and is_version_2(dataset):
        raise InputError(
            f"{source}: SQuAD 2.0 data (it has unanswerable questions) but "
            "--version_2_with_negative is false; set --version_2_with_negative=true"
        )
    articles = _field(dataset, "data", list, source, "the file")
    examples = []
    skipped = 0
    seen: dict[str, str] = {}  # question id -> where (predictions.json is keyed by the id)
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(_field(article, "paragraphs", list, source, f"data[{a}]")):
            where = f"data[{a}].paragraphs[{p}]"
            context = _field(paragraph, "context", str, source, where)
            doc_tokens, char_to_word_offset = split_context(context)
            for q, qa in enumerate(_field(paragraph, "qas", list, source, where)):
                qa_where = f"{where}.qas[{q}]"
                example = SquadExample(
                    qas_id=str(_field(qa, "id", (str, int), source, qa_where)),
                    question_text=_field(qa, "question", str, source, qa_where),
                    doc_tokens=doc_tokens,
                )
                if not is_training and seen.setdefault(example.qas_id, qa_where) != qa_where:
                    raise InputError(
                        f"{source}: {qa_where} has the id {example.qas_id!r} of "
                        f"{seen[example.qas_id]}; each question needs an id of its own "
                        "(predictions.json is keyed by it)"
                    )
                answers = qa.get("answers", [])
                if not isinstance(answers, list):
                    raise InputError(f"{source}: {qa_where}.answers is not a list")
                example.answers = [
                    _field(answer, "text", str, source, f"{qa_where}.answers[{i}]")
                    for i, answer in enumerate(answers)
                ]
                if is_training:
                    if not _training_answer(
                        example,
                        qa,
                        context,
                        char_to_word_offset,
                        source,
                        qa_where,
                        version_2_with_negative,
                    ):
                        skipped += 1
                        continue
                examples.append(example)
    if skipped:
        logger.warning(
            "%s: skipped %d of %d training questions whose answer text is not in the context's "
            "words at answer_start (as the original)",
            source,
            skipped,
            skipped + len(examples),
        )
    return examples


def _training_answer(
    example: SquadExample,
    qa: dict,
    context: str,
    char_to_word_offset: list[int],
    source: str,
    where: str,
    version_2_with_negative: bool,
) -> bool:
    """Sets the example's answer span; False when the answer cannot be recovered (skip it)."""
    if version_2_with_negative:
        if "is_impossible" not in qa:
            raise InputError(
                f"{source}: {where} (id {example.qas_id}) has no 'is_impossible' but "
                "--version_2_with_negative is true: training needs SQuAD 2.0 data"
            )
        example.is_impossible = bool(qa["is_impossible"])
    if example.is_impossible:
        example.start_position = example.end_position = -1
        example.orig_answer_text = ""
        return True
    answers = qa.get("answers", [])
    if len(answers) != 1:
        raise InputError(
            f"{source}: {where} (id {example.qas_id}) has {len(answers)} answers; for "
            "training each question must have exactly 1 (as the original; a dev file has "
            "several: train on train-v1.1.json / train-v2.0.json)"
        )
    text = example.answers[0]
    offset = _field(answers[0], "answer_start", int, source, f"{where}.answers[0]")
    if not text:
        raise InputError(f"{source}: {where} (id {example.qas_id}): the answer text is empty")
    if offset < 0 or offset + len(text) > len(context):
        raise InputError(
            f"{source}: {where} (id {example.qas_id}): answer_start={offset} with a "
            f"{len(text)}-character answer lies outside the {len(context)}-character context"
        )
    start = char_to_word_offset[offset]
    end = char_to_word_offset[offset + len(text) - 1]
    # As the original: keep only answers whose text is exactly in the words of the span;
    # when it is not (odd Unicode, mostly), the question is skipped.
    actual = " ".join(example.doc_tokens[max(start, 0) : end + 1])
    cleaned = " ".join(text.split())
    if start < 0 or actual.find(cleaned) == -1:
        logger.debug("could not find answer: %r vs. %r", actual, cleaned)
        return False
    example.orig_answer_text = text
    example.start_position, example.end_position = start, end
    return True


def tfds_squad(name: str, split: str, data_dir: str | None) -> dict:
    """tensorflow-datasets' `squad/v1.1` or `squad/v2.0` (`name`) split, as a SQuAD JSON dict
    (consecutive questions on the same context share a paragraph), to read like a file.

    Raises:
        InputError: the data is not prepared in data_dir (nothing is downloaded here).
    """
    rows, _ = load_prepared(name, split, data_dir)
    paragraphs: list[dict] = []
    for row in rows:
        context = row["context"].decode("utf-8")
        if not paragraphs or paragraphs[-1]["context"] != context:
            paragraphs.append({"context": context, "qas": []})
        texts = [t.decode("utf-8") for t in row["answers"]["text"]]
        starts = [int(s) for s in row["answers"]["answer_start"]]
        qa = {
            "id": row["id"].decode("utf-8"),
            "question": row["question"].decode("utf-8"),
            "answers": [{"text": t, "answer_start": s} for t, s in zip(texts, starts, strict=True)],
        }
        if "is_impossible" in row:
            qa["is_impossible"] = bool(row["is_impossible"])
        paragraphs[-1]["qas"].append(qa)
    version = "v2.0" if name.endswith("v2.0") else "1.1"
    return {"version": version, "data": [{"title": name, "paragraphs": paragraphs}]}
