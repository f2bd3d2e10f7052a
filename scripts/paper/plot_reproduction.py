r"""Draws the reproduction's figures from what scripts/paper/reproduce.py wrote (PNG, matplotlib:
`pip install -e ".[plots]"`):

- table6_model_size.png: held-out masked-LM perplexity and Dev accuracy against the number of
  parameters (paper Table 6);
- figure5_steps.png: Dev accuracy of the MLM and LTR models against pre-training steps (paper
  Figure 5);
- pretraining_curves.png: the training loss of every finished pre-training run (TensorBoard
  summaries in OUT/pretraining/*/train), by objective, masking and size;
- mask_only_perplexity.png: each masked LM's held-out [MASK]-only perplexity against the
  tokens it had seen, where measured along the way (the kept checkpoints and the last step of
  Figure 5's base run and of Table 6's shapes), with the unigram model's (pretraining.tsv).

    python scripts/paper/plot_reproduction.py --output_dir=output/paper_small \
      --figures_dir=docs/figures
"""

from __future__ import annotations

import csv
import functools
import json
import os
import re

from reproduction.pretraining import Pretraining, ablation_run, table6_run
from reproduction.scales import DEFAULT_MASKING, scale_named

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.options import Options, check_options, option, options, some_of


def _pyplot():
    """matplotlib's pyplot, drawing to files (matplotlib is not among bert_tf's dependencies:
    the figures are an extra, and --help works without it)."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("drawing the figures needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_table(output_dir: str, name: str) -> list[dict]:
    return read_tsv(os.path.join(output_dir, "tables", f"{name}.tsv"))


def read_cells(tables_dir: str, name: str, schedule: str = "") -> list[dict]:
    """A table's rows from tables_dir/NAME.tsv (reproduce.py's OUT/tables, or the committed
    docs/reproduction), those of `schedule` where given: a file of several schedules needs one."""
    path = os.path.join(tables_dir, f"{name}.tsv")
    rows = read_tsv(path)
    schedules = sorted({r.get("schedule") or "" for r in rows})
    if rows and schedule and schedule not in schedules:
        raise InputError(
            f"--schedule={schedule}: {path} has no row of it; it holds {', '.join(schedules)}"
        )
    if not schedule and len(schedules) > 1:
        raise InputError(
            f"{path} holds the schedules {', '.join(schedules)}; expected --schedule=one of them"
        )
    return [r for r in rows if r.get("schedule") == schedule] if schedule else rows


def read_tsv(path: str) -> list[dict]:
    if not filesystem.isfile(path):
        return []
    with filesystem.open_file(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def value(cell: str) -> float | None:
    return None if cell in ("", "-") else float(cell)


def parameters(layers: int, hidden: int, vocab_size: int, positions: int = 512) -> int:
    """Weights of the encoder (embeddings, layers with a 4H feed-forward, pooler)."""
    embeddings = (vocab_size + positions + 2) * hidden + 2 * hidden
    layer = 12 * hidden * hidden + 13 * hidden
    return embeddings + layers * layer + hidden * hidden + hidden


def vocab_size(output_dir: str) -> int:
    configs = filesystem.glob(os.path.join(output_dir, "pretraining", "*", "shape.json"))
    with filesystem.open_file(configs[0]) as f:
        return json.load(f)["vocab_size"]


def plot_table6(
    output_dir: str, figures_dir: str, tables_dir: str = "", schedule: str = ""
) -> str | None:
    rows = read_cells(tables_dir or os.path.join(output_dir, "tables"), "table6", schedule)
    if not rows:
        return None
    shapes = list(dict.fromkeys(row["row"] for row in rows))
    vocab = vocab_size(output_dir)
    sizes = {}
    for shape in shapes:
        layers, hidden, _ = (int(x) for x in shape.split("/"))
        sizes[shape] = parameters(layers, hidden, vocab) / 1e6
    figure, (left, right) = _pyplot().subplots(1, 2, figsize=(11, 4))
    for i, shape in enumerate(shapes):
        ppl = [value(r["ours"]) for r in rows if r["row"] == shape and r["column"] == "LM (ppl)"]
        if ppl and ppl[0] is not None:
            left.scatter(sizes[shape], ppl[0], color="C0")
            # Labels above and below in turn: neighbouring shapes can be close in both axes.
            offset = (4, 4) if i % 2 == 0 else (4, -12)
            left.annotate(shape, (sizes[shape], ppl[0]), textcoords="offset points", xytext=offset)
    left.margins(y=0.15)
    left.set(xscale="log", xlabel="parameters (millions)", ylabel="held-out masked-LM perplexity")
    left.set_title("Model size: held-out perplexity")
    columns = [c for c in dict.fromkeys(r["column"] for r in rows) if c != "LM (ppl)"]
    for i, column in enumerate(columns):
        points = [
            (sizes[r["row"]], value(r["ours"]))
            for r in rows
            if r["column"] == column and value(r["ours"]) is not None
        ]
        if points:
            xs, ys = zip(*sorted(points), strict=True)
            right.plot(xs, ys, marker="o", color=f"C{i + 1}", label=column)
    right.set(xscale="log", xlabel="parameters (millions)", ylabel="Dev accuracy (%)")
    right.set_title("Model size: fine-tuned Dev accuracy")
    right.legend()
    for axis in (left, right):
        # Ticks at the models' sizes, not at log-scale decades the models fall between.
        axis.xaxis.set_minor_formatter(_pyplot().NullFormatter())
        # (Shapes that differ only in heads have the same size: one tick.)
        ticks = sorted(set(sizes.values()))
        axis.set_xticks(ticks, [f"{size:.2f}" for size in ticks])
    return save(figure, figures_dir, "table6_model_size.png")


def plot_figure5(
    output_dir: str, figures_dir: str, tables_dir: str = "", schedule: str = ""
) -> str | None:
    rows = read_cells(tables_dir or os.path.join(output_dir, "tables"), "figure5", schedule)
    if not rows:
        return None
    columns = list(dict.fromkeys(r["column"] for r in rows))
    size = (5.5 * len(columns), 4)
    figure, axes = _pyplot().subplots(1, len(columns), figsize=size, squeeze=False)
    for axis, column in zip(axes[0], columns, strict=True):
        for i, model in enumerate(("MLM", "LTR")):
            points = []
            for r in rows:
                match = re.fullmatch(rf"{model} step (\d+)", r["row"])
                if match and r["column"] == column and value(r["ours"]) is not None:
                    points.append((int(match.group(1)), value(r["ours"])))
            if points:
                xs, ys = zip(*sorted(points), strict=True)
                axis.plot(xs, ys, marker="o", color=f"C{i}", label=model)
        axis.set(xlabel="pre-training steps", ylabel="Dev accuracy (%)", title=column)
        axis.legend()
    figure.suptitle("Dev accuracy by pre-training steps (paper Figure 5)")
    return save(figure, figures_dir, "figure5_steps.png")


def training_curve(run_dir: str, tag: str) -> list[tuple[int, float]]:
    """(step, value) of a TensorBoard scalar in run_dir/train."""
    import tensorflow as tf

    points = {}
    for path in sorted(filesystem.glob(os.path.join(run_dir, "train", "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for summary in event.summary.value:
                if summary.tag == tag:
                    points[event.step] = float(tf.make_ndarray(summary.tensor))
    return sorted(points.items())


PANELS = ("objective (Table 5)", "masking (Table 8)", "size (Table 6)")


def pretraining_groups(names: list[str], schedule: str) -> dict[str, list[str]]:
    """The pre-training runs (OUT/pretraining's folder names) each panel draws at `schedule`
    (reproduce.py's --size): Table 5's objectives (the ablation shape, 80/10/10, at the recipe
    the schedule gives the ablations: `long40k`'s is Tables 6 and 8's), Table 8's maskings and
    Table 6's shapes (masked LM + NSP, at Table 6's own steps where the schedule gives them
    their own: `long`'s `_Nsteps_lrR` runs, `long40k`'s `_warmupN`)."""
    # A run, not one of its kept checkpoints (RUN_stepN), nor Table 7's cased one (base, large).
    found = {name: Pretraining.from_name(name) for name in names}
    runs = {name: f[0] for name, f in found.items() if f and not f[1] and not f[0].cased}
    # The ablations' shape (the scale's; a --quick run's is smaller), and Tables 6 and 8's
    # steps, rate and warm-up; from the schedule, whatever has finished.
    # (Which of them a run has its own of, not their values: a --quick run's are smaller.)
    scale = scale_named(schedule)
    ablations = [run.shape for run in runs.values() if run.objective != "mlm_nsp"]
    shape = ablations[0] if ablations else scale.ablation_shape

    def recipe(run: Pretraining) -> tuple:
        return bool(run.steps), run.learning_rate, bool(run.warmup_steps)

    def panels(run: Pretraining) -> tuple[bool, bool, bool]:
        ablation, default = run.shape == shape, run.masking == DEFAULT_MASKING
        tables_6_and_8 = run.objective == "mlm_nsp" and recipe(run) == recipe(
            table6_run(scale, run.shape)
        )
        return (
            ablation and default and recipe(run) == recipe(ablation_run(scale, run.shape)),
            ablation and tables_6_and_8,
            default and tables_6_and_8,
        )

    into = {name: panels(run) for name, run in runs.items()}
    return {title: [n for n in into if into[n][i]] for i, title in enumerate(PANELS)}


def plot_pretraining(output_dir: str, figures_dir: str) -> str | None:
    runs = sorted(filesystem.glob(os.path.join(output_dir, "pretraining", "*")))
    if not runs:
        return None
    # Finished runs only: a run still under way would read as one that stopped there.
    named = {os.path.basename(run): run for run in runs}
    finished = {n for n, run in named.items() if filesystem.isdir(os.path.join(run, "pretrained"))}
    schedules = {r.get("schedule") for r in read_table(output_dir, "pretraining")}
    if len(schedules) != 1 or None in schedules:
        return None  # which schedule's runs these are: from the report (reproduce.py --report)
    groups = pretraining_groups(list(named), schedules.pop())
    # The panels with a finished run (long40k's output has Table 6's alone).
    groups = {t: [n for n in names if n in finished] for t, names in groups.items()}
    groups = {title: names for title, names in groups.items() if names}
    if not groups:
        return None
    figure, axes = _pyplot().subplots(1, len(groups), figsize=(6 * len(groups), 4.2), squeeze=False)
    for axis, (title, names) in zip(axes[0], groups.items(), strict=True):
        for name in names:
            tag = "lm_loss" if "_ltr_" in name else "masked_lm_loss"
            points = training_curve(named[name], tag)
            if points:
                xs, ys = zip(*points, strict=True)
                label = name.replace("_0.8_0.1_0.1", "").replace("_", " ")
                axis.plot(xs, ys, label=f"{label} ({tag})")
        axis.set(xlabel="step", ylabel="training loss (nats)", title=title)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7)
    figure.suptitle("Pre-training on the books: masked-LM (or LM) training loss")
    return save(figure, figures_dir, "pretraining_curves.png")


def perplexity_curves(rows: list[dict]) -> tuple[dict[str, list[tuple[int, float]]], float | None]:
    """From pretraining.tsv's rows: each masked LM's held-out [MASK]-only perplexity against the
    tokens it had seen, where measured along the way (its kept checkpoints `RUN_stepN`, then RUN
    itself: Figure 5's base run, Table 6's shapes), in order, by run (`schedule run` where the
    rows have several schedules); and the unigram model's perplexity (None if not run)."""
    curves: dict[str, list[tuple[int, float]]] = {}
    unigram = None
    several = len({r.get("schedule") for r in rows}) > 1
    for r in rows:
        perplexity = value(r["mask_only_masked_lm_perplexity"])
        if r["run"] == "unigram":
            unigram = perplexity
            continue
        run = re.sub(r"_step\d+$", "", r["run"])
        label = f"{r['schedule']} {run}" if several else run
        if perplexity is not None and value(r["tokens"]) is not None:
            curves.setdefault(label, []).append((int(value(r["tokens"])), perplexity))
    return {k: sorted(v) for k, v in sorted(curves.items()) if len(v) > 1}, unigram


def plot_perplexity(output_dir: str, figures_dir: str, pretraining_tsv: str = "") -> str | None:
    rows = read_tsv(pretraining_tsv) if pretraining_tsv else read_table(output_dir, "pretraining")
    curves, unigram = perplexity_curves(rows)
    if not curves:
        return None
    figure, axis = _pyplot().subplots(figsize=(7, 4.5))
    for label, points in curves.items():
        xs, ys = zip(*points, strict=True)
        axis.plot([x / 1e6 for x in xs], ys, marker="o", label=label.replace("_", " "))
    if unigram is not None:
        axis.axhline(unigram, color="gray", linestyle="--", label=f"unigram model ({unigram:.0f})")
    axis.set_yscale("log")
    axis.set(xlabel="tokens seen (millions)", ylabel="held-out [MASK]-only perplexity")
    axis.legend(fontsize=7)
    figure.suptitle("Masked LMs learning: every predicted token a [MASK]")
    return save(figure, figures_dir, "mask_only_perplexity.png")


def save(figure, figures_dir: str, name: str) -> str:
    filesystem.makedirs(figures_dir)
    path = os.path.join(figures_dir, name)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    _pyplot().close(figure)
    return path


@options
class PlotOptions(Options):
    output_dir: str = option(None, "reproduce.py's --output_dir.", required=True)
    figures_dir: str = option(None, "Where the figures go.", required=True)
    pretraining_tsv: str = option(
        "",
        "The pre-training results the [MASK]-only perplexity figure draws, in place of "
        "OUT/tables/pretraining.tsv: docs/reproduction/pretraining.tsv draws the runs of every "
        "schedule, each named with its schedule.",
    )
    tables_dir: str = option(
        "",
        "Where the Table 6 and Figure 5 figures read their cells, in place of OUT/tables: "
        "docs/reproduction draws the committed numbers (with --schedule).",
    )
    figures: str = option(
        "all",
        "Comma-separated: which figures to draw (table6_model_size, figure5_steps, "
        "pretraining_curves, mask_only_perplexity), or all.",
    )
    schedule: str = option(
        "",
        "The schedule (reproduce.py's --size) whose cells the Table 6 and Figure 5 figures draw, "
        "where --tables_dir holds several.",
    )


def plot_figures(args: PlotOptions) -> None:
    check_options(args)
    if args.pretraining_tsv and not filesystem.isfile(args.pretraining_tsv):
        raise InputError(f"--pretraining_tsv={args.pretraining_tsv} does not exist; expected a TSV")
    if args.tables_dir and not filesystem.isdir(args.tables_dir):
        raise InputError(f"--tables_dir={args.tables_dir} does not exist; expected a folder")
    where = (args.output_dir, args.figures_dir)
    cells = (args.tables_dir, args.schedule)
    plots = {
        "table6_model_size": functools.partial(plot_table6, *where, *cells),
        "figure5_steps": functools.partial(plot_figure5, *where, *cells),
        "pretraining_curves": functools.partial(plot_pretraining, *where),
        "mask_only_perplexity": functools.partial(plot_perplexity, *where, args.pretraining_tsv),
    }
    for name in some_of("figures", args.figures, list(plots)):
        print(f"{name}: {plots[name]() or 'nothing to plot yet'}")


if __name__ == "__main__":
    cli.define_flags(PlotOptions)
    cli.run_with_options(PlotOptions, plot_figures)
