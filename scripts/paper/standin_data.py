r"""Stand-ins for the paper's data sets that are not at hand, built from real text that is:
what scripts/paper/reproduce.py fine-tunes on where MNLI, QNLI, SQuAD's training sets or SWAG
are missing. Each is named as a stand-in wherever its numbers are reported.

- `split_squad`: a SQuAD file split by article into a training file (first answers only, as
  the original trains) and an evaluation file, for when only the dev set is here.
- `qnli_from_squad`: QNLI as GLUE built it from SQuAD (Wang et al., 2018): a question and a
  sentence of its paragraph, "entailment" when the sentence holds the answer. Here one positive
  and one negative (another sentence of the paragraph) per question, so the classes balance.
- `swag_from_books`: SWAG's format from held-out books: the first sentence, the second
  sentence's first words, and four endings: the true rest of the second sentence and the rests
  of three other sentences of the same book, so only the context tells them apart.
- `glue_subset`: a GLUE task folder with at most N training examples (the first N).

All are deterministic: the same inputs and seed write the same files. `--max_train_examples`
and `--max_eval_examples` keep the first N of each (0: all; SQuAD's in questions), as the
reproduction's `--quick` sizes do.

    python scripts/paper/standin_data.py --stand_in=split_squad --input_file=dev-v1.1.json \
      --output=out/train.json --eval_file=out/dev.json
    python scripts/paper/standin_data.py --stand_in=qnli_from_squad --input_file=out/train.json \
      --output=out/QNLI/train.tsv
    python scripts/paper/standin_data.py --stand_in=swag_from_books --input_file=heldout.txt \
      --output=out/SWAG
    python scripts/paper/standin_data.py --stand_in=glue_subset --task=SST-2 \
      --input_file=glue/SST-2 --output=out/SST-2 --max_train_examples=8000
"""

from __future__ import annotations

import csv
import json
import os
import random

from bert_tf import cli
from bert_tf.classification.processors import get_processor
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open, atomic_write_text, read_text
from bert_tf.options import Options, check_options, one_of, option, options
from bert_tf.pretraining.corpus import split_sentences
from bert_tf.squad.data import read_squad_file
from bert_tf.swag.data import ENDINGS, NUM_CHOICES, SPLIT_FILES


def split_squad(
    input_file: str,
    train_file: str,
    eval_file: str,
    eval_every: int = 5,
    max_train_examples: int = 0,
    max_eval_examples: int = 0,
) -> None:
    """Every `eval_every`-th article goes to `eval_file`, the others to `train_file` with one
    answer per question; each keeps its first `max_*_examples` questions (0: all)."""
    dataset = read_squad_file(input_file)
    train, evaluation = [], []
    for i, article in enumerate(dataset["data"]):
        if i % eval_every == eval_every - 1:
            evaluation.append(article)
            continue
        paragraphs = [
            {**p, "qas": [{**qa, "answers": qa["answers"][:1]} for qa in p["qas"]]}
            for p in article["paragraphs"]
        ]
        train.append({**article, "paragraphs": paragraphs})
    train, evaluation = (
        _first_questions(train, max_train_examples),
        _first_questions(evaluation, max_eval_examples),
    )
    atomic_write_text(train_file, json.dumps({**dataset, "data": train}))
    atomic_write_text(eval_file, json.dumps({**dataset, "data": evaluation}))  # last: the marker


def _first_questions(articles: list[dict], count: int) -> list[dict]:
    """The articles and paragraphs that hold the first `count` questions (0: all)."""
    if not count:
        return articles
    kept, first = 0, []
    for article in articles:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            if kept < count:
                qas = paragraph["qas"][: count - kept]
                kept += len(qas)
                paragraphs.append({**paragraph, "qas": qas})
        if paragraphs:
            first.append({**article, "paragraphs": paragraphs})
    return first


def qnli_from_squad(squad_file: str, output_file: str, seed: int = 0, max_examples: int = 0) -> int:
    """QNLI-format rows (index, question, sentence, label) from a SQuAD file, the first
    `max_examples` (0: all); returns the number of rows. Impossible (2.0) questions and
    one-sentence paragraphs are skipped."""
    rng = random.Random(seed)
    rows = []
    for article in read_squad_file(squad_file)["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            sentences = split_sentences(context)
            if len(sentences) < 2:
                continue
            starts, position = [], 0
            for sentence in sentences:
                position = context.index(sentence, position)
                starts.append(position)
            for qa in paragraph["qas"]:
                if not qa["answers"]:
                    continue
                answer = qa["answers"][0]["answer_start"]
                holds = max(i for i, start in enumerate(starts) if start <= answer)
                other = rng.choice([i for i in range(len(sentences)) if i != holds])
                question = " ".join(qa["question"].split())
                rows.append([question, sentences[holds], "entailment"])
                rows.append([question, sentences[other], "not_entailment"])
    rows = rows[:max_examples] if max_examples else rows
    with atomic_open(output_file) as f:
        f.write("index\tquestion\tsentence\tlabel\n")
        for i, row in enumerate(rows):
            f.write("\t".join([str(i), *row]) + "\n")
    return len(rows)


def _documents(corpus_file: str) -> list[list[str]]:
    """The documents of a corpus in the original's input format."""
    with filesystem.open_file(corpus_file) as f:
        blocks = f.read().split("\n\n")
    return [block.split("\n") for block in blocks if block.strip()]


def swag_from_books(
    corpus_file: str,
    output_dir: str,
    eval_fraction: float = 0.2,
    seed: int = 0,
    max_train_examples: int = 0,
    max_eval_examples: int = 0,
) -> dict[str, int]:
    """train.csv and val.csv in SWAG's format from consecutive sentences of a corpus (one
    sentence per line, a blank line between documents); the last `eval_fraction` of each
    document's pairs go to val.csv, each file its first `max_*_examples` (0: all). Returns the
    examples per file."""
    rng = random.Random(seed)
    header = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source"]
    header += [*ENDINGS, "label"]
    splits: dict[str, list[list[str]]] = {"train": [], "dev": []}
    for d, document in enumerate(_documents(corpus_file)):
        # A context sentence, and a next sentence of 6 to 30 words: its first two words start
        # the ending (SWAG's sent2, "The man"), its rest is the true ending.
        pairs = [
            (first, second.split())
            for first, second in zip(document, document[1:], strict=False)
            if 6 <= len(second.split()) <= 30 and 4 <= len(first.split()) <= 40
        ]
        rests = [" ".join(words[2:]) for _, words in pairs]
        cut = int(len(pairs) * (1 - eval_fraction))
        for i, (first, words) in enumerate(pairs):
            wrong = rng.sample([j for j in range(len(pairs)) if j != i], NUM_CHOICES - 1)
            endings = [rests[i], *(rests[j] for j in wrong)]
            order = list(range(NUM_CHOICES))
            rng.shuffle(order)
            sent2 = " ".join(words[:2])
            row = [f"book{d}", f"{d}-{i}", f"{first} {sent2}", first, sent2, "gold"]
            row += [endings[k] for k in order] + [str(order.index(0))]
            splits["train" if i < cut else "dev"].append(row)
    caps = {"train": max_train_examples, "dev": max_eval_examples}
    splits = {split: rows[: caps[split]] if caps[split] else rows for split, rows in splits.items()}
    filesystem.makedirs(output_dir)
    for split, rows in splits.items():  # val.csv last: the marker
        with atomic_open(os.path.join(output_dir, SPLIT_FILES[split])) as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
    return {split: len(rows) for split, rows in splits.items()}


def glue_subset(
    task: str, source_dir: str, target_dir: str, max_train_examples: int, max_eval_examples: int = 0
) -> str:
    """A copy of a GLUE task's folder whose train file keeps its first `max_train_examples`
    examples and whose dev file its first `max_eval_examples` (0: all); the other files are
    copied whole, the train file written last."""
    processor = get_processor(task)
    filesystem.makedirs(target_dir)
    capped = {processor.split_file("dev"): max_eval_examples}
    capped[processor.split_file("train")] = max_train_examples
    names = {name for name, _ in capped}
    for name in filesystem.listdir(source_dir):
        if name not in names and filesystem.isfile(os.path.join(source_dir, name)):
            filesystem.copy(os.path.join(source_dir, name), os.path.join(target_dir, name))
    for (file_name, header), count in capped.items():
        lines = read_text(os.path.join(source_dir, file_name), "a GLUE file").splitlines(True)
        with atomic_open(os.path.join(target_dir, file_name)) as f:
            f.writelines(lines[: count + (1 if header else 0)] if count else lines)
    return target_dir


STAND_INS = ("split_squad", "qnli_from_squad", "swag_from_books", "glue_subset")


@options
class StandinOptions(Options):
    stand_in: str = option(None, "Which stand-in to build.", one_of(*STAND_INS), required=True)
    input_file: str = option(
        None,
        "A SQuAD file (split_squad, qnli_from_squad), a corpus (swag_from_books) or a GLUE "
        "task's folder (glue_subset).",
        required=True,
    )
    output: str = option(
        None,
        "The training file (split_squad), the QNLI .tsv (qnli_from_squad), the SWAG folder "
        "(swag_from_books) or the task's new folder (glue_subset).",
        required=True,
    )
    eval_file: str | None = option(None, "split_squad: the evaluation file.")
    eval_every: int = option(5, "split_squad: every N-th article is for evaluation.")
    task: str | None = option(None, "glue_subset: the GLUE task (its files' names).")
    seed: int = option(0, "qnli_from_squad, swag_from_books: the seed of the choices.")
    max_train_examples: int = option(
        0, "The first N training examples only, or qnli_from_squad's first N rows (0: all)."
    )
    max_eval_examples: int = option(0, "The first N evaluation examples only (0: all).")


def build_stand_in(args: StandinOptions) -> None:
    check_options(args)
    caps = {"max_train_examples": args.max_train_examples}
    caps["max_eval_examples"] = args.max_eval_examples
    if args.stand_in == "split_squad":
        if not args.eval_file:
            raise InputError("--stand_in=split_squad: give --eval_file too")
        split_squad(args.input_file, args.output, args.eval_file, args.eval_every, **caps)
    elif args.stand_in == "qnli_from_squad":
        rows = qnli_from_squad(args.input_file, args.output, args.seed, args.max_train_examples)
        print(rows, "rows")
    elif args.stand_in == "glue_subset":
        if not args.task:
            raise InputError("--stand_in=glue_subset: give --task too (e.g. --task=SST-2)")
        glue_subset(args.task, args.input_file, args.output, **caps)
    else:
        print(swag_from_books(args.input_file, args.output, seed=args.seed, **caps))


if __name__ == "__main__":
    cli.define_flags(StandinOptions)
    cli.run_with_options(StandinOptions, build_stand_in)
