"""The paper's tables, one command each: pre-trains the models a table compares, fine-tunes them
on its tasks and writes our numbers beside the paper's (OUT/tables/<table>.tsv and .md).

    python scripts/paper/reproduce.py --tables=table5 --size=small --output_dir=output/paper_small
    python scripts/paper/reproduce.py --tables=all --size=base --output_dir=/big/disk --dry_run

Sizes:
- small: a laptop CPU, hours for every table (docs/REPRODUCTION.md has what it gave). Our
  stand-in for BooksCorpus is ../shared/data/books (BOOKS_DIR), prepared with prepare_corpus.py
  into a cased corpus with 4 books held out; a cased 8k WordPiece vocab learned from it;
  phase-1 records only (128 tokens, 20 predictions, dupe_factor 5); models a sixth of BERT's
  width and a third of its depth (the paper's 12/768/12 is our 4/128/2), 4,000 steps of 32
  sequences. Fine-tuning on the real GLUE, SQuAD and CoNLL-2003 files in ../shared/data, with
  stand-ins (scripts/paper/standin_data.py) where a data set is not here.
- long: small with ten times its pre-training, the schedule whose models learn: 40,000 steps
  (dupe_factor 15, 1% warm-up), Tables 6 and 8 at 20,000; fine-tuning's learning rate chosen
  on Dev from {1e-4, 3e-4} for every model and task. About 30 hours of a 2-core CPU.
- long40k: long with the ablations (Tables 5, 6, 8, Figure 5) pre-trained as long as its base
  model, 40,000 steps, at 1e-3 with a 10% warm-up (one recipe that trains every shape; Table
  8's NER cells the mean of 3 restarts); every other table is long's and shares its runs (the
  default OUT is long's).
- base, large: the paper's settings: BERT-BASE / BERT-LARGE shapes (Table 6: its six shapes),
  two-phase pre-training by scripts/paper/pretrain_bert.sh (PLATFORM=tpu|gpu and its other
  variables pass through) on CORPUS (one sentence per line, e.g. prepare_corpus.py's output of
  BooksCorpus and Wikipedia) with HELDOUT (held-out text of the same kind) and VOCAB; data in
  GLUE_DIR, SQUAD_DIR (train and dev files), CONLL_DIR, SWAG_DIR.

`--quick` shrinks the laptop sizes to minutes (3 books, 40 or 80 steps, 64 examples per
task): the numbers only show that every step runs. Every step is skipped when its output
exists, so rerunning the command resumes; `--dry_run` prints the commands instead of running
them; `--report` runs nothing and writes the tables from the steps done so far (a pending cell
is "-", and each table says how many of its steps are pending). OUT/tables/pretraining.tsv
gathers each finished pre-training's held-out results, the tokens it saw, and every model's
results on the all-[MASK] records.
"""

from __future__ import annotations

import os
import sys

from reproduction.domain import domain
from reproduction.pretraining import tokens_seen, write_results, write_training
from reproduction.record import RUNS_FILE, format_runs, merged, read_runs
from reproduction.runner import Runner, platform_flags
from reproduction.scales import LAPTOP_SIZES, scale_named
from reproduction.tables import BUILDERS, Context, seeds

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from bert_tf.options import Options, check_options, one_of, option, options, some_of

# The sizes: small, long and long40k run on a laptop's CPU, base and large are the paper's.
SIZES = ("small", "long", "long40k", "base", "large")
# Beyond the paper's tables (not in `all`): continued pre-training on a domain (laptop sizes);
# the readings' rows pre-trained with more seeds (`long40k`).
EXTRA = {"domain": domain, "seeds": seeds}
RUNNABLE = BUILDERS | EXTRA


@options
class ReproduceOptions(Options):
    tables: str = option(
        "all", "Comma-separated: table1..8, figure5, or all (the paper's); domain, seeds (ours)."
    )
    size: str = option(
        None, "small, long, long40k (laptop CPUs), base or large.", one_of(*SIZES), required=True
    )
    output_dir: str = option(None, "Where every step's files go.", required=True)
    quick: bool = option(False, "A laptop size in minutes (a smoke test).")
    dry_run: bool = option(False, "Print the commands only.")
    report: bool = option(False, "Run nothing; write the tables from what is done.")

    def check(self) -> None:
        super().check()
        names = some_of("tables", self.tables, list(RUNNABLE), list(BUILDERS))
        if "domain" in names and self.size not in LAPTOP_SIZES:
            raise InputError(f"--tables=domain runs at --size={' or '.join(LAPTOP_SIZES)}")
        if self.quick and self.size not in LAPTOP_SIZES:
            raise InputError(f"--quick shrinks --size={' or '.join(LAPTOP_SIZES)} only")
        if self.dry_run and self.report:
            raise InputError("--dry_run and --report: give one of them")


def reproduce(args: ReproduceOptions) -> None:
    check_options(args)
    names = some_of("tables", args.tables, list(RUNNABLE), list(BUILDERS))
    scale = scale_named(args.size, args.quick)
    output_dir = filesystem.absolute(args.output_dir)
    # A first pass that runs nothing: the steps still to run (for the progress lines), and the
    # data sets the tables need that are not there.
    counter = Runner(output_dir, dry_run=True, quiet=True)
    counting = Context(scale, counter)
    for name in names:
        RUNNABLE[name](counting)
    if counting.data.missing and not args.report:
        for line in counting.data.missing:
            print(f"reproduce.py: error: {line}", file=sys.stderr)
        sys.exit(1)
    pending = None if args.dry_run or args.report else counter.printed
    runner = Runner(output_dir, args.dry_run or args.report, quiet=args.report, pending=pending)
    if not scale.laptop:
        if os.environ.get("PLATFORM") == "tpu" and not os.environ.get("TPU_NAME"):
            raise InputError("PLATFORM=tpu: set TPU_NAME too (the TPU or pod to run on)")
        if os.environ.get("PLATFORM", "gpu") not in ("tpu", "gpu", "cpu"):
            raise InputError(f"PLATFORM={os.environ['PLATFORM']}; expected tpu, gpu or cpu")
        runner.accelerator = platform_flags(os.environ)
    context = Context(scale, runner)
    tables = os.path.join(runner.output_dir, "tables")
    runs = []  # the record's lines of every run behind the tables
    for name in names:
        before = len(runner.printed)
        table = RUNNABLE[name](context)
        table.notes += [f"{column}: {what}." for column, what in context.tuner.notes.items()]
        context.tuner.notes = {}
        if args.report and len(runner.printed) > before:
            table.notes.append(
                f"Pending: {len(runner.printed) - before} of this table's steps have not run yet "
                "(-); rerun the command without --report to resume."
            )
        if not args.dry_run:
            table.write(tables, scale.name)
            runs += table.runs(scale.name)
            print(table.markdown())
    if not args.dry_run:
        # OUT/tables/runs.tsv: every run behind every table written so far (a table's runs
        # replace its earlier ones); docs/reproduction/runs.tsv takes them in by doc_tables.py
        # --add_runs.
        record_file = os.path.join(tables, RUNS_FILE)
        before = read_runs(record_file) if filesystem.isfile(record_file) else []
        atomic_write_text(record_file, format_runs(merged(before, runs)))
        runs = write_results(
            runner.output_dir,
            os.path.join(tables, "pretraining.tsv"),
            scale.name,
            lambda name: tokens_seen(name, scale, context.data),
        )
        print(f"pre-training results of {runs} model(s): {os.path.join(tables, 'pretraining.tsv')}")
        losses = os.path.join(tables, "pretraining_losses.tsv")
        rows = write_training(runner.output_dir, losses, scale.name)
        print(f"training losses at {rows} step(s) of the pre-trainings' logs: {losses}")


if __name__ == "__main__":
    cli.define_flags(ReproduceOptions)
    cli.run_with_options(ReproduceOptions, reproduce)
