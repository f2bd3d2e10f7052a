"""The tables (and Figure 5) as our numbers beside the paper's: which models and tasks each
takes, written as OUT/tables/<name>.tsv and .md."""

from __future__ import annotations

import dataclasses
import math
import os

from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from reproduction.datasets import Data
from reproduction.finetuning import TABLE1_METRICS, FineTuner, Score, mean
from reproduction.paper_results import PAPER
from reproduction.pretraining import (
    Model,
    Pretraining,
    ablation_run,
    heldout_perplexity,
    kept_checkpoints,
    mask_only_perplexity,
    pretrained_model,
    random_model,
    table6_run,
    unigram_perplexity,
)
from reproduction.record import HEADER, RUN, figure
from reproduction.runner import Runner
from reproduction.scales import (
    DEFAULT_MASKING,
    NER_FEATURES,
    TABLE8_FEATURE,
    TABLE8_MASKINGS,
    Scale,
)
from reproduction.submission import majority_predictions, predictions_files, write_submission


@dataclasses.dataclass
class Table:
    """Our numbers beside the paper's: rows x columns, with a note per stand-in."""

    name: str
    title: str
    rows: dict = dataclasses.field(default_factory=dict)  # row -> column -> value
    paper_rows: dict = dataclasses.field(default_factory=dict)  # our row -> the paper's row
    notes: list = dataclasses.field(default_factory=list)
    # our row -> the (table, row, pre-training seed) its runs are a cell of, where not
    # (this table, the row, 1): the seeds table's rows are Table 5's and 8's at seed 2.
    origins: dict = dataclasses.field(default_factory=dict)

    def set(self, row: str, column: str, value, paper_row: str | None = None, origin=None) -> None:
        self.rows.setdefault(row, {})[column] = value
        if paper_row:
            self.paper_rows[row] = paper_row
        if origin:
            self.origins[row] = origin

    def runs(self, schedule: str) -> list[dict]:
        """The record's lines (HEADER) of every run behind this table's cells: each
        fine-tuning run at every rate tried, and each measurement (a perplexity) as a run."""
        lines = []
        for row, values in self.rows.items():
            table, at, seed = self.origins.get(row, (self.name, row, 1))
            for column, value in values.items():
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    continue
                runs = getattr(value, "runs", None)
                if column in DERIVED:
                    continue
                measured = not isinstance(value, Score)
                by_rate = {None: [value]} if measured else runs or {}
                for lr, found in by_rate.items():
                    for restart, run in enumerate(found):
                        lines.append(dict(zip(HEADER, (
                            schedule, table, at, column, str(seed), f"{lr:g}" if lr else "-",
                            "-" if measured else str(restart), f"{run:.6g}", "1", "-",
                            RUN,
                        ), strict=True)))  # fmt: skip
        return lines

    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for values in self.rows.values() for c in values))

    def write(self, folder: str, schedule: str) -> None:
        """OUT/tables/<name>.tsv, a line per cell, each starting with `schedule` (the scale's
        name): ours, the paper's, and how ours was got (the spread over fine-tuning restarts,
        the learning rate chosen on Dev; "-" where there is none); and <name>.md."""
        filesystem.makedirs(folder)
        paper = PAPER.get(self.name, {})
        header = ["schedule", "row", "column", "ours", "paper_row", "paper", "spread", "lr"]
        lines = ["\t".join(header)]
        for row, values in self.rows.items():
            paper_row = self.paper_rows.get(row, row)
            for column, value in values.items():
                theirs = paper.get(paper_row, {}).get(column)
                cells = [schedule, row, column, _cell(value), paper_row, _cell(theirs)]
                cells += [_cell(getattr(value, "spread", None))]
                lr = getattr(value, "learning_rate", None)
                cells += [f"{lr:g}" if lr else "-"]
                lines.append("\t".join(cells))
        _write(os.path.join(folder, f"{self.name}.tsv"), "\n".join(lines) + "\n")
        _write(os.path.join(folder, f"{self.name}.md"), self.markdown())

    def markdown(self) -> str:
        paper = PAPER.get(self.name, {})
        columns = self.columns()
        lines = [f"**{self.title}** (ours / paper)", ""]
        lines.append("| | " + " | ".join(columns) + " |")
        lines.append("|---" * (len(columns) + 1) + "|")
        for row, values in self.rows.items():
            theirs = paper.get(self.paper_rows.get(row, row), {})
            cells = [f"{_ours(values.get(c))} / {_cell(theirs.get(c))}" for c in columns]
            label = (
                row if row == self.paper_rows.get(row, row) else f"{row} ({self.paper_rows[row]})"
            )
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


_cell = figure


def _ours(value) -> str:
    """Our cell in the markdown: the number, and its spread over restarts where there is one."""
    spread = getattr(value, "spread", None)
    return _cell(value) + (f" ±{_cell(spread)}" if spread is not None else "")


def _write(path: str, text: str) -> None:
    atomic_write_text(path, text)


# Columns computed from other cells, not runs.
DERIVED = ("Average",)


def _paper_name(scale: Scale) -> str:
    return "BERT-LARGE" if scale.name == "large" else "BERT-BASE"


def table1(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table1", "Table 1: GLUE (ours: Dev; paper: Test)")
    row = f"ours ({ctx.scale.base_shape})"
    values = []
    for column in ("MNLI-m", "MNLI-mm", "QQP", "QNLI", "SST-2", "CoLA", "STS-B", "MRPC", "RTE"):
        found = ctx.data.glue(column)
        if found is None or found[2]:
            continue  # Table 1 takes the real tasks only, no stand-ins
        metric = TABLE1_METRICS.get(found[1])
        value = ctx.tuner.glue(model, column, table1=True, metric=metric)
        values.append(value)
        table.set(row, column, value, _paper_name(ctx.scale))
    present = [value for value in values if value is not None]
    table.set(row, "Average", mean(present), _paper_name(ctx.scale))
    if len(present) < 9:
        table.notes.append("Average: over the tasks here (the paper's: all nine but WNLI).")
    table.notes.append(
        "MRPC and QQP: F1; STS-B: Spearman; CoLA: Matthews; others: accuracy; each task's "
        "run chosen on Dev (MNLI's on MNLI-m, for both columns)."
    )
    glue_submission(ctx, model, table)
    return table


def glue_submission(ctx, model: Model, table: Table) -> None:
    """OUT/tables/glue_submission.zip: each task's test predictions from its run chosen on
    Dev, AX from the MNLI model, WNLI's majority class; what is missing said in the notes."""
    files = {}
    for task, run in ctx.tuner.best_runs.items():
        files.update((n, p) for n, p in predictions_files(run, task) if filesystem.isfile(p))
    diagnostic = ctx.data.glue_folder("diagnostic", "GLUE's diagnostic/diagnostic.tsv (AX)")
    if "MNLI" in ctx.tuner.best_runs and diagnostic:
        files["AX.tsv"] = ctx.tuner.predict_ax(model, ctx.tuner.best_runs["MNLI"], diagnostic)
    wnli = ctx.data.glue_folder("WNLI", "GLUE's WNLI folder (train.tsv, test.tsv)")
    tables = os.path.join(ctx.runner.output_dir, "tables")
    if ctx.runner.dry_run or not files:
        return
    if wnli:
        files["WNLI.tsv"] = os.path.join(tables, "WNLI.tsv")
        majority_predictions(wnli, files["WNLI.tsv"])
    files = {name: path for name, path in files.items() if filesystem.isfile(path)}
    missing = write_submission(files, os.path.join(tables, "glue_submission.zip"))
    table.notes.append(
        "Test: tables/glue_submission.zip, for gluebenchmark.com"
        + (f" (lacking {', '.join(missing)})." if missing else ".")
    )


def table2(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table2", "Table 2: SQuAD 1.1 Dev")
    result = ctx.tuner.squad(model, "1.1") or {}
    for column in ("EM", "F1"):
        table.set(
            f"ours ({ctx.scale.base_shape})", column, result.get(column), _paper_name(ctx.scale)
        )
    return table


def table3(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table3", "Table 3: SQuAD 2.0 Dev (tau chosen on Dev)")
    result = ctx.tuner.squad(model, "2.0") or {}
    for column in ("EM", "F1"):
        table.set(f"ours ({ctx.scale.base_shape})", column, result.get(column), "BERT-LARGE")
    return table


def table4(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table4", "Table 4: SWAG Dev accuracy")
    table.set(
        f"ours ({ctx.scale.base_shape})", "Dev", ctx.tuner.swag(model), _paper_name(ctx.scale)
    )
    # Not in the paper: the same shape without pre-training, the floor the row is read from.
    floor = random_model(ctx.scale.base_shape, ctx.data, ctx.runner)
    table.set("no pre-training", "Dev", ctx.tuner.swag(floor))
    return table


def table5(ctx) -> Table:
    shape = ctx.scale.ablation_shape
    table = Table("table5", f"Table 5: pre-training tasks, {shape} (Dev; MRPC accuracy; SQuAD F1)")
    rows = (
        ("BERT-BASE", ablation_run(ctx.scale, shape), False),
        ("No NSP", ablation_run(ctx.scale, shape, "mlm"), False),
        ("LTR & No NSP", ablation_run(ctx.scale, shape, "ltr"), False),
        ("+ BiLSTM", ablation_run(ctx.scale, shape, "ltr"), True),
    )
    for row, run, bilstm in rows:
        model = ctx.model(run)
        label = row.replace("BERT-BASE", "BERT")
        table5_row(ctx, table, label, row, model, bilstm)
    # Not in the paper: the same model without pre-training, the floor the rows are read from.
    table5_row(ctx, table, "no pre-training", None, random_model(shape, ctx.data, ctx.runner))
    return table


def table5_row(
    ctx, table: Table, label: str, row, model: Model, bilstm: bool = False, origin=None
) -> None:
    for column in ("MNLI-m", "QNLI", "MRPC", "SST-2"):
        restarts = ctx.scale.table5_restarts.get(column, 0)
        value = ctx.tuner.glue(model, column, bilstm, restarts=restarts)
        table.set(label, column, value, row, origin)
    squad = ctx.tuner.squad(model, "1.1", bilstm) or {}
    table.set(label, "SQuAD", squad.get("F1"), row, origin)


def table6(ctx) -> Table:
    table = Table("table6", "Table 6: model size (held-out masked-LM perplexity; Dev accuracy)")
    shapes, cells = ctx.scale.table6_shapes, {}
    # Run widest first, so that a shape that does not train shows early; the rows in order.
    for ours in reversed(shapes):
        run = table6_run(ctx.scale, ours)
        model = ctx.model(run)
        cells[ours] = {"LM (ppl)": heldout_perplexity(run, ctx.scale, ctx.data, ctx.runner)}
        for column in ("MNLI-m", "MRPC", "SST-2"):
            cells[ours][column] = ctx.tuner.glue(model, column, restarts=ctx.scale.table6_restarts)
        # Ours: each shape's held-out [MASK]-only perplexity along the way (pretraining.tsv;
        # plot_reproduction.py draws it against the tokens seen, beside Figure 5's base run).
        for _, kept in kept_checkpoints(run, ctx.scale, ctx.data, ctx.runner):
            mask_only_perplexity(kept, ctx.scale, ctx.data, ctx.runner)
    for ours, paper in zip(shapes, PAPER["table6"], strict=False):
        label = ours.replace("L-", "").replace("_H-", "/").replace("_A-", "/")
        for column, value in cells[ours].items():
            table.set(label, column, value, paper)
    table.notes.append(
        "Rows are ours (L/H/A) beside the paper's row of the same rank; means over "
        "restarts as the paper's."
    )
    return table


def table7(ctx) -> Table:
    # The paper's NER models are cased (at our laptop sizes every model is).
    cased = not ctx.scale.laptop
    model = ctx.model(Pretraining(ctx.scale.base_shape, cased=cased))
    table = Table("table7", "Table 7: CoNLL-2003 NER (F1)")
    result = ctx.tuner.ner(model, table7=True) or {}
    paper_row = "Fine-tuning (BERT-LARGE)" if ctx.scale.name == "large" else "Fine-tuning"
    for column in ("Dev F1", "Test F1"):
        table.set("Fine-tuning", column, result.get(column), paper_row)
    # The feature-based rows: BERT-BASE's, as the paper's, at every size.
    features = ctx.model(Pretraining(ctx.scale.ablation_shape, cased=cased))
    for feature in NER_FEATURES:
        value = (ctx.tuner.ner(features, feature, table7=True) or {}).get("Dev F1")
        table.set(feature, "Dev F1", value)
    # Not in the paper: the same shape fine-tuned from random weights, as Table 5's floor.
    floor = random_model(ctx.scale.base_shape, ctx.data, ctx.runner, cased=True)
    floor = ctx.tuner.ner(floor) or {}
    for column in ("Dev F1", "Test F1"):
        table.set("no pre-training", column, floor.get(column))
    table.notes.append("Feature-based: frozen BERT, a two-layer BiLSTM of H units per direction.")
    return table


def table8(ctx) -> Table:
    table = Table("table8", "Table 8: masking procedure (MASK/SAME/RND; Dev)")
    for masking in TABLE8_MASKINGS:
        row = "/".join(str(round(100 * float(r))) for r in masking.split(","))
        # Its NER columns, as Table 7's, from a cased model.
        run = table6_run(ctx.scale, ctx.scale.ablation_shape, masking, not ctx.scale.laptop)
        table8_row(ctx, table, row, ctx.model(run))
    # Our floor, as Table 5's: the same shape fine-tuned from random weights.
    floor = random_model(ctx.scale.ablation_shape, ctx.data, ctx.runner, cased=True)
    table8_row(ctx, table, "no pre-training", floor)
    table.notes.append(
        "[MASK] ppl (ours only): held-out masked-LM perplexity on the 100/0/0 records, every "
        "predicted token a [MASK]."
    )
    return table


def table8_row(ctx, table: Table, row: str, model: Model, origin=None) -> None:
    table.set(row, "MNLI", ctx.tuner.glue(model, "MNLI-m"), origin=origin)
    restarts = ctx.scale.table8_ner_restarts
    fine_tuned = (ctx.tuner.ner(model, restarts=restarts) or {}).get("Dev F1")
    table.set(row, "NER fine-tune", fine_tuned, origin=origin)
    feature = ctx.tuner.ner(model, TABLE8_FEATURE, restarts=restarts) or {}
    table.set(row, "NER feature-based", feature.get("Dev F1"), origin=origin)
    perplexity = mask_only_perplexity(model, ctx.scale, ctx.data, ctx.runner)
    table.set(row, "[MASK] ppl", perplexity, origin=origin)


def figure5(ctx) -> Table:
    """Dev accuracy of the MLM and LTR models along their pre-training, by step: MNLI, as the
    paper; where MNLI is not here, QNLI (its stand-in has 3,912 Dev pairs, where RTE's 277 are
    too few to draw a curve)."""
    table = Table("figure5", "Figure 5: Dev accuracy by pre-training steps")
    found = ctx.data.glue("MNLI-m")
    column = "MNLI-m" if found and not found[2] else "QNLI"
    for objective, label in (("mlm_nsp", "MLM"), ("ltr", "LTR")):
        run = ablation_run(ctx.scale, ctx.scale.ablation_shape, objective)
        for step, model in kept_checkpoints(run, ctx.scale, ctx.data, ctx.runner):
            table.set(f"{label} step {step}", column, ctx.tuner.glue(model, column))
            if objective == "mlm_nsp":
                # The masked LM's held-out [MASK]-only perplexity along the way
                # (pretraining.tsv; plot_reproduction.py draws it against the tokens seen,
                # with the unigram model's).
                mask_only_perplexity(model, ctx.scale, ctx.data, ctx.runner)
    unigram_perplexity(ctx.scale, ctx.data, ctx.runner)
    return table


def seeded_runs(scale: Scale, seed: int) -> list[tuple[str, Pretraining]]:
    """(table, run) of each pre-training the scale gives more than one seed, at `seed`: Table
    5's rows, then Table 8's `seeded_maskings` not among them; the left-to-right model last
    (the longest to pre-train: the others' fine-tunings need not wait for it)."""
    shape = scale.ablation_shape
    runs = [("table5", ablation_run(scale, shape, objective)) for objective in ("mlm_nsp", "mlm")]
    runs += [
        ("table8", table6_run(scale, shape, masking, not scale.laptop))
        for masking in scale.seeded_maskings
    ]
    runs.append(("table5", ablation_run(scale, shape, "ltr")))
    seeded, names = [], set()
    for table, run in runs:
        run = dataclasses.replace(run, seed=seed)
        if run.name not in names:
            names.add(run.name)
            seeded.append((table, run))
    return seeded


def seeds(ctx) -> Table:
    """Ours, beyond the paper's tables: the readings' rows pre-trained again with seeds 2..n
    (Scale.pretraining_seeds; the same records and recipe), each fine-tuned as its table's
    row is (the same rates and restarts): the pre-training's own variance. Every run is
    pre-trained before any is fine-tuned."""
    table = Table("seeds", "Second pre-training seeds: the readings' rows (Dev; MRPC accuracy)")
    rows = []
    for seed in range(2, ctx.scale.pretraining_seeds + 1):
        for table_name, run in seeded_runs(ctx.scale, seed):
            rows.append((table_name, run, ctx.model(run)))
            perplexity = heldout_perplexity(run, ctx.scale, ctx.data, ctx.runner)
            # The record keeps it as this table's, of the run's seed (no table has the column).
            table.set(run.name, "LM (ppl)", perplexity, origin=("seeds", run.name, run.seed))
    for table_name, run, model in rows:
        if table_name == "table5" or run.masking == DEFAULT_MASKING:
            label = {"mlm_nsp": "BERT", "mlm": "No NSP", "ltr": "LTR & No NSP"}[run.objective]
            origin = ("table5", label, run.seed)
            table5_row(ctx, table, f"{label} seed {run.seed}", None, model, origin=origin)
            if run.objective == "ltr":
                origin = ("table5", "+ BiLSTM", run.seed)
                table5_row(ctx, table, f"+ BiLSTM seed {run.seed}", None, model, True, origin)
        if table_name == "table8" or run.masking in ctx.scale.seeded_maskings:
            if run.objective == "mlm_nsp":
                row = "/".join(str(round(100 * float(r))) for r in run.masking.split(","))
                table8_row(ctx, table, f"{row} seed {run.seed}", model, ("table8", row, run.seed))
    return table


class Context:
    def __init__(self, scale: Scale, runner: Runner) -> None:
        self.scale, self.runner = scale, runner
        self.data = Data(scale, runner, runner.output_dir)
        self.tuner = FineTuner(scale, self.data, runner)

    def model(self, run: Pretraining) -> Model:
        return pretrained_model(run, self.scale, self.data, self.runner)


BUILDERS = {
    "table1": table1,
    "table2": table2,
    "table3": table3,
    "table4": table4,
    "table5": table5,
    "table6": table6,
    "table7": table7,
    "table8": table8,
    "figure5": figure5,
}
