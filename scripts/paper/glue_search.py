r"""The paper's GLUE fine-tuning search (Sec. 4.1, Table 1): for each task, every learning rate
of {5e-5, 4e-5, 3e-5, 2e-5} at batch 32 for 3 epochs, with several restarts (seeds: a new
shuffle and classifier initialization) for the small data sets, and the best on Dev.

Each run is `run_classifier.py --do_train --do_eval` in its own output directory
(OUT/<task>/lr<lr>_seed<seed>/); a run whose eval_results.txt exists is not run again, so the
search resumes. At the end, OUT/summary.tsv and a printed table give per task and learning
rate the mean, standard deviation and best of the task's GLUE metric over the restarts, and
the best learning rate (by mean) per task; MNLI gives two rows, MNLI-m and MNLI-mm (matched
and mismatched Dev).

Table 1 itself (OUT/table1.tsv, printed last): per task the best run on Dev (over learning
rates and restarts, as Sec. 4.1 selects), its metric and the average over the tasks, and that
run's test-set predictions (`--do_predict` from its checkpoint): GLUE's submission files
(MRPC.tsv, MNLI-m.tsv, MNLI-mm.tsv, ...), gathered in OUT/submission/, which is what the paper's
Table 1 (a test-set table) is scored from.

    python scripts/paper/glue_search.py --tasks=MRPC,RTE --glue_dir=$GLUE_DIR \
      --bert_dir=$BERT_BASE_DIR --output_dir=output/glue_search --restarts=5

--max_train_examples / --max_eval_examples cut the data (for a quick run on a CPU).
Extra flags for run_classifier.py go after `--`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from bert_tf import cli
from bert_tf.classification.processors import get_processor
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text
from bert_tf.options import Options, check_options, non_negative, option, options, positive

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The metric GLUE ranks each task by (Table 1: F1 for MRPC/QQP, Spearman for STS-B, Matthews
# correlation for CoLA, accuracy elsewhere).
MAIN_METRIC = {"MRPC": "f1", "QQP": "f1", "STS-B": "spearmanr", "CoLA": "mcc"}
# The small data sets, where the paper restarts BERT-LARGE several times (Sec. 4.1).
SMALL_TASKS = ("CoLA", "STS-B", "MRPC", "RTE", "WNLI")
# Where the GLUE download puts each task.
GLUE_DIRS = {"MNLI-m": "MNLI"}


def main_metric(processor) -> str:
    return "eval_" + MAIN_METRIC.get(processor.name, "accuracy")


def read_results(path: str) -> dict[str, float]:
    with filesystem.open_file(path) as f:
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f if " = " in line)}


def truncated_copy(source_dir: str, target_dir: str, processor, limits: dict[str, int]) -> str:
    """A copy of the task's train/dev files with at most limits[split] examples each."""
    filesystem.makedirs(target_dir)
    for split, limit in limits.items():
        file_name, header = processor.split_file(split)
        lines = read_text(os.path.join(source_dir, file_name), "a GLUE file").splitlines(True)
        keep = lines[: limit + (1 if header else 0)] if limit else lines
        atomic_write_text(os.path.join(target_dir, file_name), "".join(keep))
    return target_dir


def classifier_command(args, task: str, data_dir: str, output_dir: str, *flags: str) -> list[str]:
    """run_classifier.py on `task` with the search's model and sizes, and `flags`."""
    return [
        sys.executable,
        os.path.join(REPO, "run_classifier.py"),
        f"--task_name={task}",
        f"--data_dir={data_dir}",
        f"--vocab_file={os.path.join(args.bert_dir, 'vocab.txt')}",
        f"--bert_config_file={os.path.join(args.bert_dir, 'bert_config.json')}",
        f"--do_lower_case={args.do_lower_case}",
        f"--max_seq_length={args.max_seq_length}",
        f"--output_dir={output_dir}",
        *flags,
    ]


def run(args, extra: list[str]) -> list[dict]:
    rows = []
    for task in args.tasks.split(","):
        processor = get_processor(task)
        data_dir = os.path.join(args.glue_dir, GLUE_DIRS.get(processor.name, processor.name))
        if args.max_train_examples or args.max_eval_examples:
            limits = {"train": args.max_train_examples, "dev": args.max_eval_examples}
            if filesystem.isfile(os.path.join(data_dir, processor.split_file("test")[0])):
                limits["test"] = args.max_eval_examples
            data_dir = truncated_copy(
                data_dir, os.path.join(args.output_dir, "data", processor.name), processor, limits
            )
        for lr in args.learning_rates.split(","):
            restarts = args.restarts
            if args.small_task_restarts and processor.name in SMALL_TASKS:
                restarts = args.small_task_restarts
            for seed in range(restarts):
                out = os.path.join(args.output_dir, processor.name, f"lr{lr}_seed{seed}")
                results_file = os.path.join(out, "eval_results.txt")
                if not filesystem.isfile(results_file):
                    command = classifier_command(
                        args,
                        task,
                        data_dir,
                        out,
                        "--do_train",
                        "--do_eval",
                        f"--init_checkpoint={os.path.join(args.bert_dir, 'bert_model.ckpt')}",
                        f"--train_batch_size={args.train_batch_size}",
                        f"--learning_rate={lr}",
                        f"--num_train_epochs={args.num_train_epochs}",
                        f"--seed={seed}",
                        *extra,
                    )
                    print(f"== {processor.name} lr={lr} seed={seed}", flush=True)
                    subprocess.run(command, check=True)
                results = read_results(results_file)
                row = {"lr": lr, "seed": seed, "output_dir": out, "data_dir": data_dir}
                rows.append(
                    {
                        **row,
                        "task": processor.name,
                        "metric": main_metric(processor),
                        "value": results[main_metric(processor)],
                    }
                )
                if "eval_mismatched_accuracy" in results:
                    rows.append(
                        {
                            **row,
                            "task": "MNLI-mm",
                            "metric": "eval_mismatched_accuracy",
                            "value": results["eval_mismatched_accuracy"],
                        }
                    )
    return rows


def predict_test_sets(rows: list[dict], args, extra: list[str]) -> list[dict]:
    """Table 1: per task the best run on Dev, and its test-set predictions (GLUE's submission
    files, copied into OUT/submission/). MNLI-mm's best run predicts too (its own file)."""
    table = []
    submission_dir = os.path.join(args.output_dir, "submission")
    for task in dict.fromkeys(row["task"] for row in rows):
        best = max((row for row in rows if row["task"] == task), key=lambda r: r["value"])
        processor = get_processor("MNLI" if task.startswith("MNLI") else task)
        test_file, _ = processor.split_file("test")
        submission = ""
        if filesystem.isfile(os.path.join(best["data_dir"], test_file)):
            name = "MNLI-mm.tsv" if task == "MNLI-mm" else f"{processor.name}.tsv"
            predictions = os.path.join(best["output_dir"], name)
            if not filesystem.isfile(predictions):
                command = classifier_command(
                    args,
                    processor.name,
                    best["data_dir"],
                    best["output_dir"],
                    "--do_predict",
                    *extra,
                )
                print(f"== {task} test set (lr={best['lr']} seed={best['seed']})", flush=True)
                subprocess.run(command, check=True)
            filesystem.makedirs(submission_dir)
            submission = os.path.join(submission_dir, name)
            filesystem.copy(predictions, submission)
        table.append({**best, "submission": submission})
    return table


def write_table1(table: list[dict], path: str) -> str:
    """OUT/table1.tsv: task, metric, best Dev value (in percent), its lr and seed, and the
    submission file; then the average over the tasks."""
    columns = ["task", "metric", "dev", "lr", "seed", "submission"]
    lines = ["\t".join(columns)]
    for row in table:
        lines.append("\t".join(str(x) for x in (
            row["task"], row["metric"], f"{100 * row['value']:.1f}", row["lr"], row["seed"],
            row["submission"],
        )))  # fmt: skip
    average = statistics.fmean(100 * row["value"] for row in table)
    lines.append(f"Average\t\t{average:.1f}\t\t\t")
    atomic_write_text(path, "\n".join(lines) + "\n")
    return "\n".join(line.replace("\t", "  ") for line in lines)


def summarize(rows: list[dict]) -> list[dict]:
    """Per task and learning rate: mean, std and best over the restarts; the best lr marked."""
    summary = []
    for task in dict.fromkeys(row["task"] for row in rows):
        task_rows = [row for row in rows if row["task"] == task]
        per_lr = []
        for lr in dict.fromkeys(row["lr"] for row in task_rows):
            values = [row["value"] for row in task_rows if row["lr"] == lr]
            per_lr.append(
                {
                    "task": task,
                    "metric": task_rows[0]["metric"],
                    "lr": lr,
                    "runs": len(values),
                    "mean": statistics.fmean(values),
                    "std": statistics.pstdev(values),
                    "best": max(values),
                }
            )
        best = max(per_lr, key=lambda r: r["mean"])
        for row in per_lr:
            row["best_lr"] = "*" if row is best else ""
        summary += per_lr
    return summary


def write_summary(summary: list[dict], path: str) -> str:
    columns = ["task", "metric", "lr", "runs", "mean", "std", "best", "best_lr"]
    lines = ["\t".join(columns)]
    for row in summary:
        cells = [f"{row[c]:.4f}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        lines.append("\t".join(cells))
    atomic_write_text(path, "\n".join(lines) + "\n")
    table = [f"{'task':8} {'metric':16} {'lr':>6} {'runs':>4} {'mean':>7} {'std':>7} {'best':>7}"]
    for row in summary:
        table.append(
            f"{row['task']:8} {row['metric']:16} {row['lr']:>6} {row['runs']:>4} "
            f"{row['mean']:7.4f} {row['std']:7.4f} {row['best']:7.4f} {row['best_lr']}"
        )
    return "\n".join(table)


@options
class GlueSearchOptions(Options):
    tasks: str = option("MNLI,QQP,QNLI,SST-2,CoLA,STS-B,MRPC,RTE", "Comma-separated tasks.")
    glue_dir: str = option(None, "Holds one folder per task (MRPC/...).", required=True)
    bert_dir: str = option(
        None, "The pre-trained model: vocab.txt, bert_config.json, bert_model.ckpt.", required=True
    )
    output_dir: str = option(None, "Where the runs and the tables go.", required=True)
    learning_rates: str = option("5e-5,4e-5,3e-5,2e-5", "Comma-separated learning rates.")
    restarts: int = option(1, "Seeds per learning rate.", positive)
    small_task_restarts: int = option(
        0, "Seeds per learning rate for CoLA/STS-B/MRPC/RTE; 0: --restarts.", non_negative
    )
    train_batch_size: int = option(32, "run_classifier.py's --train_batch_size.", positive)
    num_train_epochs: float = option(3.0, "run_classifier.py's --num_train_epochs.")
    max_seq_length: int = option(128, "run_classifier.py's --max_seq_length.", positive)
    do_lower_case: str = option("true", "run_classifier.py's --do_lower_case.")
    max_train_examples: int = option(0, "Training examples per task (0: all).", non_negative)
    max_eval_examples: int = option(0, "Dev and test examples per task (0: all).", non_negative)


def main(argv: list[str]) -> None:
    """The search; what follows `--` on the command line goes to every run_classifier.py."""
    from absl import flags

    args = cli.options_from_flags(GlueSearchOptions, flags.FLAGS)
    check_options(args)
    extra = argv[1:]
    rows = run(args, extra)
    summary = summarize(rows)
    print(write_summary(summary, os.path.join(args.output_dir, "summary.tsv")))
    print(f"summary written to {os.path.join(args.output_dir, 'summary.tsv')}")
    table = predict_test_sets(rows, args, extra)
    print(write_table1(table, os.path.join(args.output_dir, "table1.tsv")))
    print(f"Table 1 written to {os.path.join(args.output_dir, 'table1.tsv')}")


if __name__ == "__main__":
    cli.define_flags(GlueSearchOptions)
    cli.run(main)
