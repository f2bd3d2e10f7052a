"""Where each data set of the reproduction is: the pre-training corpus and records, and the
fine-tuning sets. On a laptop (small, long) our books and ../shared/data, with stand-ins
(scripts/paper/standin_data.py) for the sets not there; at the paper's sizes the real sets, in
the folders the environment names (any may be a gs:// URL), and a missing one is an error
before any work (`Data.missing`), never replaced."""

from __future__ import annotations

import os
import sys

from bert_tf.classification.processors import get_processor
from bert_tf.io import filesystem
from reproduction.runner import REPO, Runner
from reproduction.scales import Scale

SHARED_DATA = os.path.join(REPO, "..", "shared", "data")


class Data:
    """Where each data set is, building the stand-ins and the small-scale corpus on demand."""

    def __init__(self, scale: Scale, runner: Runner, output_dir: str) -> None:
        self.scale, self.runner = scale, runner
        self.dir = os.path.join(output_dir, "data")

        def folder(variable: str, laptop_default: str) -> str:
            return os.environ.get(variable) or (laptop_default if scale.laptop else "")

        self.glue_dir = folder("GLUE_DIR", os.path.join(SHARED_DATA, "glue"))
        self.squad_dir = folder("SQUAD_DIR", os.path.join(SHARED_DATA, "squad"))
        self.conll_dir = folder("CONLL_DIR", os.path.join(SHARED_DATA, "conll2003"))
        self.swag_dir = folder("SWAG_DIR", "")
        self.books_dir = folder("BOOKS_DIR", os.path.join(SHARED_DATA, "books"))
        # At the paper's sizes: a line for each data set the tables need and that is not
        # there (reproduce.py says them all and stops before any work).
        self.missing: list[str] = []

    def _require(self, variable: str, names: tuple[str, ...], expected: str) -> None:
        """At the paper's sizes, notes in `missing` what of `names` (files or folders in the
        environment's `variable`, or, with no names, the files its value matches) is not
        there."""
        value = os.environ.get(variable, "")
        if not value:
            line = f"{variable} is not set; expected {expected}"
        else:
            paths = [os.path.join(value, name) for name in names]
            absent = [p for p in paths if not filesystem.exists(p)] if names else []
            if not names:  # a file or comma-separated globs, as --input_file takes them
                absent = [p for p in value.split(",") if p and not filesystem.glob(p)]
            if not absent:
                return
            line = f"{variable}={value}: no {', '.join(absent)}; expected {expected}"
        if line not in self.missing:
            self.missing.append(line)

    # The pre-training corpus and records.

    @property
    def vocab(self) -> str:
        return self.vocab_file()

    def vocab_file(self, cased: bool = False) -> str:
        """The vocab of the pre-training: on a laptop our cased one; at the paper's sizes
        VOCAB (uncased, as the paper's models for GLUE, SQuAD and SWAG), or CASED_VOCAB for the
        cased model (NER)."""
        if self.scale.laptop:
            return os.path.join(self.dir, "vocab.txt")
        variable = "CASED_VOCAB" if cased else "VOCAB"
        kind = "cased" if cased else "uncased"
        self._require(variable, (), f"the {kind} WordPiece vocab.txt to pre-train with")
        return os.environ.get(variable, variable)

    def corpus(self) -> tuple[str, str]:
        """(training corpus, held-out corpus) files or globs."""
        if not self.scale.laptop:
            for variable, what in (("CORPUS", "training"), ("HELDOUT", "held-out")):
                self._require(
                    variable, (), f"the {what} text, one sentence a line (a file or a glob)"
                )
            return os.environ.get("CORPUS", "CORPUS"), os.environ.get("HELDOUT", "HELDOUT")
        train = os.path.join(self.dir, "corpus", "books_train.txt")
        heldout = os.path.join(self.dir, "corpus", "books_heldout.txt")
        books = sorted(
            os.path.join(self.books_dir, name)
            for name in (
                filesystem.listdir(self.books_dir) if filesystem.isdir(self.books_dir) else []
            )
            if name.endswith((".txt", ".txt.gz"))
        )
        if not books and not filesystem.isfile(heldout) and not self.runner.dry_run:
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

    def records(self, masking: str, cased: bool = False) -> tuple[str, str]:
        """Records of the corpus masked at `masking` rates: (training, held-out), as
        `split_records` writes them."""
        return tuple(self.split_records(masking, split, cased) for split in ("train", "heldout"))

    def split_records(self, masking: str, split: str, cased: bool = False) -> str:
        """Records of the corpus's `split` (train, heldout) masked at `masking` rates. Small:
        one file (phase 1 only); paper sizes: a folder of both phases' shards, as
        scripts/create_pretraining_data_two_phases.sh writes them, of uncased text (or
        `cased`: the cased model's records). A held-out measure needs no training records."""
        train, heldout = self.corpus()
        corpus, seed, dupe = (
            (train, 12345, self.scale.dupe_factor) if split == "train" else (heldout, 54321, 1)
        )
        cased = cased and not self.scale.laptop
        name = masking.replace(",", "_") + ("_cased" if cased else "")
        folder = os.path.join(self.dir, "records", name)
        if not self.scale.laptop:
            output = os.path.join(folder, split)
            lower = "false" if cased else os.environ.get("DO_LOWER_CASE", "true")
            self.runner.run(
                f"data/{split}_{masking}" + ("_cased" if cased else ""),
                [
                    "bash",
                    os.path.join(REPO, "scripts", "create_pretraining_data_two_phases.sh"),
                    corpus,
                    output,
                    self.vocab_file(cased),
                    str(dupe),
                ],
                os.path.join(output, "phase2_seq512"),
                env={
                    "EXTRA_FLAGS": f"--masking_rates={masking} --random_seed={seed} "
                    f"--do_lower_case={lower}"
                },
            )
            return output
        output = os.path.join(folder, f"{split}.tfrecord")
        flags = {
            "input_file": corpus,
            "output_file": output,
            "vocab_file": self.vocab,
            "do_lower_case": False,
            "max_seq_length": 128,
            "max_predictions_per_seq": 20,
            "random_seed": seed,
            "dupe_factor": dupe,
            "masking_rates": masking,
        }
        filesystem.makedirs(folder)
        self.runner.python(f"data/{split}_{masking}", "create_pretraining_data.py", flags, output)
        return output

    # Fine-tuning data.

    def glue(self, task: str) -> tuple[str, str, str] | None:
        """(data_dir, the processor's task name, what stands in for it) for a Table column
        (MNLI-m, QNLI, MRPC, ...); None when neither it nor a stand-in is here."""
        name = {"MNLI-m": "MNLI", "MNLI-mm": "MNLI"}.get(task, task)
        source = os.path.join(self.glue_dir, name)
        if not self.scale.laptop:
            self._require("GLUE_DIR", (name,), "GLUE's task folders (download_glue_data.py's)")
            return source, name, ""
        if filesystem.isdir(source):
            return self._capped_glue(name, source), name, ""
        if name == "MNLI" and filesystem.isdir(os.path.join(self.glue_dir, "RTE")):
            rte = self._capped_glue("RTE", os.path.join(self.glue_dir, "RTE"))
            return rte, "RTE", "RTE (the only NLI set here)"
        if name == "QNLI":
            return self._qnli_from_squad(), "QNLI", "QNLI built from SQuAD 1.1 Dev"
        return None

    def glue_folder(self, name: str, expected: str) -> str | None:
        """A folder of GLUE's download beside the tasks' (WNLI, diagnostic): required at the
        paper's sizes; on a laptop, None where it is not here."""
        if not self.scale.laptop:
            self._require("GLUE_DIR", (name,), expected)
        folder = os.path.join(self.glue_dir, name)
        return folder if not self.scale.laptop or filesystem.isdir(folder) else None

    def _cap(self, task: str) -> int:
        caps = self.scale.max_train_examples
        return caps.get("all", caps.get(task, 0))

    def _stand_in(self, name: str, stand_in: str, flags: dict, done: str) -> None:
        """A stand-in built by scripts/paper/standin_data.py, a step as any other (so that
        --dry_run prints it before the commands that read it)."""
        flags = {"stand_in": stand_in, **flags}
        self.runner.python(name, os.path.join("scripts", "paper", "standin_data.py"), flags, done)

    def _capped_glue(self, task: str, source: str) -> str:
        cap, eval_cap = self._cap(task), self.scale.max_eval_examples
        if not (cap or eval_cap):
            return source
        target = os.path.join(self.dir, "glue", task)
        flags = {"task": task, "input_file": source, "output": target}
        flags.update(max_train_examples=cap, max_eval_examples=eval_cap)
        train_file = os.path.join(target, get_processor(task).split_file("train")[0])
        self._stand_in(f"data/glue_{task}", "glue_subset", flags, train_file)
        return target

    def squad(self, version: str) -> tuple[str, str, str]:
        """(train file, eval file, what stands in) for SQuAD `version` ("1.1" or "2.0")."""
        train = os.path.join(self.squad_dir, f"train-v{version}.json")
        dev = os.path.join(self.squad_dir, f"dev-v{version}.json")
        if not self.scale.laptop:
            names = (f"train-v{version}.json", f"dev-v{version}.json")
            self._require("SQUAD_DIR", names, "SQuAD's training and dev files")
            return train, dev, ""
        if filesystem.isfile(train) and filesystem.isfile(dev):
            return train, dev, ""
        if not filesystem.isfile(dev):
            dev = os.path.join(self.squad_dir, "dev-v2.0-half.json")
        folder = os.path.join(self.dir, "squad")
        ours = (
            os.path.join(folder, f"train-v{version}.json"),
            os.path.join(folder, f"dev-v{version}.json"),
        )
        # SQuAD 2.0's half Dev has 16 articles: one in four held out; 1.1's 48: one in five.
        flags = {"input_file": dev, "output": ours[0], "eval_file": ours[1]}
        flags.update(eval_every=4 if version == "2.0" else 5)
        if self.scale.max_eval_examples:
            flags.update(max_train_examples=self._cap("squad"))
            flags.update(max_eval_examples=self.scale.max_eval_examples)
        self._stand_in(f"data/squad{version}", "split_squad", flags, ours[1])
        what = f"{os.path.basename(dev)} split by article (4/5 train, 1/5 eval)"
        if version == "2.0":
            what = f"{os.path.basename(dev)} split by article (3/4 train, 1/4 eval)"
        return *ours, what

    def _qnli_from_squad(self) -> str:
        train, dev, _ = self.squad("1.1")
        folder = os.path.join(self.dir, "glue", "QNLI")
        for split, squad, cap in (("train", train, self._cap("QNLI")), ("dev", dev, 0)):
            flags = {"input_file": squad, "output": os.path.join(folder, f"{split}.tsv")}
            flags.update(max_train_examples=cap)
            self._stand_in(f"data/qnli_{split}", "qnli_from_squad", flags, flags["output"])
        return folder

    def conll(self) -> str:
        if not self.scale.laptop:
            names = ("train.txt", "valid.txt", "test.txt")
            self._require("CONLL_DIR", names, "CoNLL-2003's English files")
            return self.conll_dir
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
        if not self.scale.laptop:
            self._require("SWAG_DIR", ("train.csv", "val.csv"), "SWAG's train.csv and val.csv")
            return self.swag_dir, ""
        if self.swag_dir and filesystem.isfile(os.path.join(self.swag_dir, "val.csv")):
            return self.swag_dir, ""
        _, heldout = self.corpus()
        folder = os.path.join(self.dir, "swag_books")
        flags = {"input_file": heldout, "output": folder, "max_train_examples": self._cap("swag")}
        flags.update(max_eval_examples=self.scale.max_eval_examples)
        self._stand_in("data/swag_books", "swag_from_books", flags, os.path.join(folder, "val.csv"))
        return folder, "SWAG's format from the held-out books (next-sentence endings)"
