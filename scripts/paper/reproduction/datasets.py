"""Where each data set of the reproduction is: the pre-training corpus and records, and the
fine-tuning sets, with stand-ins (scripts/paper/standin_data.py) for the ones not here."""

from __future__ import annotations

import json
import os
import sys

from standin_data import glue_subset, qnli_from_squad, split_squad, swag_from_books

from reproduction.runner import REPO, Runner
from reproduction.scales import Scale

SHARED_DATA = os.path.join(REPO, "..", "shared", "data")


class Data:
    """Where each data set is, building the stand-ins and the small-scale corpus on demand."""

    def __init__(self, scale: Scale, runner: Runner, output_dir: str) -> None:
        self.scale, self.runner = scale, runner
        self.dir = os.path.join(output_dir, "data")
        self.glue_dir = os.environ.get("GLUE_DIR", os.path.join(SHARED_DATA, "glue"))
        self.squad_dir = os.environ.get("SQUAD_DIR", os.path.join(SHARED_DATA, "squad"))
        self.conll_dir = os.environ.get("CONLL_DIR", os.path.join(SHARED_DATA, "conll2003"))
        self.swag_dir = os.environ.get("SWAG_DIR", "")
        self.books_dir = os.environ.get("BOOKS_DIR", os.path.join(SHARED_DATA, "books"))

    # The pre-training corpus and records.

    @property
    def vocab(self) -> str:
        if self.scale.laptop:
            return os.path.join(self.dir, "vocab.txt")
        return _required_env("VOCAB")

    def corpus(self) -> tuple[str, str]:
        """(training corpus, held-out corpus) files or globs."""
        if not self.scale.laptop:
            return _required_env("CORPUS"), _required_env("HELDOUT")
        train = os.path.join(self.dir, "corpus", "books_train.txt")
        heldout = os.path.join(self.dir, "corpus", "books_heldout.txt")
        books = sorted(
            os.path.join(self.books_dir, name)
            for name in (os.listdir(self.books_dir) if os.path.isdir(self.books_dir) else [])
            if name.endswith((".txt", ".txt.gz"))
        )
        if not books and not os.path.isfile(heldout) and not self.runner.dry_run:
            sys.exit(
                f"reproduce.py: error: BOOKS_DIR={self.books_dir}: no .txt or .txt.gz books "
                "there; expected the folder of plain-text books to pre-train on"
            )
        flags = {
            "input_file": ",".join(books[: self.scale.books or None]),
            "output_file": train,
            "heldout_file": heldout,
            "num_heldout_documents": self.scale.heldout_documents,
        }
        self.runner.python("data/corpus", "prepare_corpus.py", flags, heldout)
        self.runner.python(
            "data/vocab",
            "create_vocab.py",
            {
                "input_file": train,
                "output_file": self.vocab,
                "vocab_size": self.scale.vocab_size,
                "do_lower_case": False,
                "min_count": 10 if self.scale.books == 0 else 2,
            },
            self.vocab,
        )
        return train, heldout

    def records(self, masking: str) -> tuple[str, str]:
        """Records of the corpus masked at `masking` rates: (training, held-out). Small: one
        file each (phase 1 only); paper sizes: folders of both phases' shards, as
        scripts/create_pretraining_data_two_phases.sh writes them."""
        train, heldout = self.corpus()
        folder = os.path.join(self.dir, "records", masking.replace(",", "_"))
        outputs = {}
        for split, corpus, seed, dupe in (
            ("train", train, 12345, self.scale.dupe_factor),
            ("heldout", heldout, 54321, 1),
        ):
            if not self.scale.laptop:
                outputs[split] = os.path.join(folder, split)
                self.runner.run(
                    f"data/{split}_{masking}",
                    [
                        "bash",
                        os.path.join(REPO, "scripts", "create_pretraining_data_two_phases.sh"),
                        corpus,
                        outputs[split],
                        self.vocab,
                        str(dupe),
                    ],
                    os.path.join(outputs[split], "phase2_seq512"),
                    env={
                        "EXTRA_FLAGS": f"--masking_rates={masking} --random_seed={seed} "
                        f"--do_lower_case={os.environ.get('DO_LOWER_CASE', 'true')}"
                    },
                )
                continue
            outputs[split] = os.path.join(folder, f"{split}.tfrecord")
            flags = {
                "input_file": corpus,
                "output_file": outputs[split],
                "vocab_file": self.vocab,
                "do_lower_case": False,
                "max_seq_length": 128,
                "max_predictions_per_seq": 20,
                "random_seed": seed,
                "dupe_factor": dupe,
                "masking_rates": masking,
            }
            os.makedirs(folder, exist_ok=True)
            self.runner.python(
                f"data/{split}_{masking}", "create_pretraining_data.py", flags, outputs[split]
            )
        return outputs["train"], outputs["heldout"]

    # Fine-tuning data.

    def glue(self, task: str) -> tuple[str, str, str] | None:
        """(data_dir, the processor's task name, what stands in for it) for a Table column
        (MNLI-m, QNLI, MRPC, ...); None when neither it nor a stand-in is here."""
        name = {"MNLI-m": "MNLI", "MNLI-mm": "MNLI"}.get(task, task)
        source = os.path.join(self.glue_dir, name)
        if os.path.isdir(source):
            return self._capped_glue(name, source), name, ""
        if name == "MNLI" and os.path.isdir(os.path.join(self.glue_dir, "RTE")):
            rte = self._capped_glue("RTE", os.path.join(self.glue_dir, "RTE"))
            return rte, "RTE", "RTE (the only NLI set here)"
        if name == "QNLI":
            return self._qnli_from_squad(), "QNLI", "QNLI built from SQuAD 1.1 Dev"
        return None

    def _cap(self, task: str) -> int:
        caps = self.scale.max_train_examples
        return caps.get("all", caps.get(task, 0))

    def _capped_glue(self, task: str, source: str) -> str:
        cap, eval_cap = self._cap(task), self.scale.max_eval_examples
        if not (cap or eval_cap):
            return source
        target = os.path.join(self.dir, "glue", task)
        if not os.path.isdir(target) and not self.runner.dry_run:
            glue_subset(task, source, target, cap or 10**9)
            if eval_cap:
                _cap_lines(os.path.join(target, "dev.tsv"), eval_cap + 1)
        return target

    def squad(self, version: str) -> tuple[str, str, str]:
        """(train file, eval file, what stands in) for SQuAD `version` ("1.1" or "2.0")."""
        train = os.path.join(self.squad_dir, f"train-v{version}.json")
        dev = os.path.join(self.squad_dir, f"dev-v{version}.json")
        if os.path.isfile(train) and os.path.isfile(dev):
            return train, dev, ""
        if not os.path.isfile(dev):
            dev = os.path.join(self.squad_dir, "dev-v2.0-half.json")
        folder = os.path.join(self.dir, "squad")
        ours = (
            os.path.join(folder, f"train-v{version}.json"),
            os.path.join(folder, f"dev-v{version}.json"),
        )
        if not os.path.isfile(ours[1]) and not self.runner.dry_run:
            # SQuAD 2.0's half Dev has 16 articles: one in four held out; 1.1's 48: one in five.
            split_squad(dev, *ours, eval_every=4 if version == "2.0" else 5)
            if self.scale.max_eval_examples:
                for path, cap in zip(
                    ours, (self._cap("squad"), self.scale.max_eval_examples), strict=True
                ):
                    _cap_squad(path, cap)
        what = f"{os.path.basename(dev)} split by article (4/5 train, 1/5 eval)"
        if version == "2.0":
            what = f"{os.path.basename(dev)} split by article (3/4 train, 1/4 eval)"
        return *ours, what

    def _qnli_from_squad(self) -> str:
        train, dev, _ = self.squad("1.1")
        folder = os.path.join(self.dir, "glue", "QNLI")
        if not os.path.isfile(os.path.join(folder, "dev.tsv")) and not self.runner.dry_run:
            qnli_from_squad(train, os.path.join(folder, "train.tsv"))
            qnli_from_squad(dev, os.path.join(folder, "dev.tsv"))
            cap = self._cap("QNLI")
            if cap:
                _cap_lines(os.path.join(folder, "train.tsv"), cap + 1)
        return folder

    def conll(self) -> str:
        cap, eval_cap = self._cap("ner"), self.scale.max_eval_examples
        if not (cap or eval_cap):
            return self.conll_dir
        folder = os.path.join(self.dir, "conll2003")
        for split, count in (("train", cap), ("valid", eval_cap), ("test", eval_cap)):
            self.runner.python(
                f"data/conll_{split}",
                "scripts/conll_sample.py",
                {
                    "input_file": os.path.join(self.conll_dir, f"{split}.txt"),
                    "output_file": os.path.join(folder, f"{split}.txt"),
                    "count": count or 10**9,
                },
                os.path.join(folder, f"{split}.txt"),
            )
        return folder

    def swag(self) -> tuple[str, str]:
        """(data_dir, what stands in)."""
        if self.swag_dir and os.path.isfile(os.path.join(self.swag_dir, "val.csv")):
            return self.swag_dir, ""
        _, heldout = self.corpus()
        folder = os.path.join(self.dir, "swag_books")
        if not os.path.isfile(os.path.join(folder, "val.csv")) and not self.runner.dry_run:
            swag_from_books(heldout, folder)
            cap, eval_cap = self._cap("swag"), self.scale.max_eval_examples
            if cap:
                _cap_lines(os.path.join(folder, "train.csv"), cap + 1)
            if eval_cap:
                _cap_lines(os.path.join(folder, "val.csv"), eval_cap + 1)
        return folder, "SWAG's format from the held-out books (next-sentence endings)"


def _required_env(name: str) -> str:
    if not os.environ.get(name):
        sys.exit(f"reproduce.py: error: set {name} (see the docstring) for this size")
    return os.environ[name]


def _cap_lines(path: str, count: int) -> None:
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines[:count])


def _cap_squad(path: str, count: int) -> None:
    if not count:
        return
    with open(path, encoding="utf-8") as f:
        dataset = json.load(f)
    kept, articles = 0, []
    for article in dataset["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            if kept < count:
                qas = paragraph["qas"][: count - kept]
                kept += len(qas)
                paragraphs.append({**paragraph, "qas": qas})
        if paragraphs:
            articles.append({**article, "paragraphs": paragraphs})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({**dataset, "data": articles}, f)
