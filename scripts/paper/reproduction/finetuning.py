"""Fine-tuning a pre-trained model on a table's task and reading back the table's metric."""

from __future__ import annotations

import os
import statistics

from bert_tf.classification.processors import get_processor
from bert_tf.classification.results import prediction_files
from bert_tf.io import filesystem
from reproduction.datasets import Data
from reproduction.pretraining import Model
from reproduction.runner import Runner, read_results
from reproduction.scales import Scale


class Score(float):
    """A table's Dev number (the mean over fine-tuning restarts) that knows how it was got: the
    standard deviation over the restarts (`spread`; None for one run), the learning rate
    chosen on Dev (None where only one was tried) and every run's value at every rate tried
    (`runs`: {rate, or None where only one was tried: [restart 0's, restart 1's, ...]})."""

    spread: float | None
    learning_rate: float | None
    runs: dict

    def __new__(
        cls,
        value: float,
        spread: float | None = None,
        learning_rate: float | None = None,
        runs: dict | None = None,
    ) -> Score:
        score = super().__new__(cls, value)
        score.spread, score.learning_rate, score.runs = spread, learning_rate, runs or {}
        return score


class FineTuner:
    """Fine-tunes a model on a task (unless done) and returns the table's metric.

    Every model and task is fine-tuned the same way: at each learning rate the scale tries
    (`finetuning_learning_rates`; else the task kind's own), `restarts` times on the small
    sets, and the rate with the best mean on Dev gives the number (the paper's Sec. 4.1
    selection; its mean over restarts as Table 6's).
    """

    def __init__(self, scale: Scale, data: Data, runner: Runner) -> None:
        self.scale, self.data, self.runner = scale, data, runner
        self.notes: dict[str, str] = {}  # column -> what stands in for it
        # Table 1: each task's best run on Dev (its output_dir), whose test predictions go
        # into GLUE's submission.
        self.best_runs: dict[str, str] = {}

    def _common(self, model: Model, kind: str, out: str, seed: int, lr: float) -> dict:
        settings = self.scale.finetuning[kind]
        return {
            "vocab_file": model.vocab,
            "bert_config_file": model.bert_config,
            "init_checkpoint": model.init_checkpoint,
            "do_lower_case": False
            if self.scale.laptop or model.cased
            else os.environ.get("DO_LOWER_CASE"),
            "output_dir": out,
            "max_seq_length": settings["max_seq_length"],
            "train_batch_size": settings["batch"],
            "learning_rate": lr,
            "num_train_epochs": settings["epochs"],
            "seed": seed,
        }

    def _learning_rates(self, kind: str) -> list[float]:
        # The feature-based runs train a BiLSTM on frozen features: not fine-tuning.
        if self.scale.finetuning_learning_rates and kind != "ner_feature":
            return list(self.scale.finetuning_learning_rates)
        return [self.scale.finetuning[kind]["learning_rate"]]

    def _name(self, task: str, kind: str, lr: float) -> str:
        """A run's folder name: the task's, and the learning rate's where not the kind's."""
        default = self.scale.finetuning[kind]["learning_rate"]
        return task if lr == default else f"{task}_lr{lr}"

    def _out(self, model: Model, task: str, seed: int) -> str:
        return os.path.join(self.runner.output_dir, "finetuning", model.name, task, f"seed{seed}")

    def glue(
        self,
        model: Model,
        column: str,
        bilstm: bool = False,
        table1: bool = False,
        metric: str | None = None,
        restarts: int = 0,
    ) -> float | None:
        """A column's metric (in percent), or None without data.

        `column` is the paper's (MNLI-m, QNLI, MRPC, ...); its task or a stand-in is
        fine-tuned; `metric` is accuracy unless given (Table 1's F1, Spearman, ...). With
        `table1`, Table 1's search instead (Sec. 4.1): every learning rate of the scale's search
        and its restarts, the best run on Dev, and the test set predicted (GLUE's submission
        files). `restarts`: the runs per learning rate where not the task's own (0).
        """
        found = self.data.glue(column)
        if found is None:
            return None
        data_dir, task, standin = found
        if standin:
            self.notes[column] = standin
        metric = metric or ("eval_mismatched_accuracy" if column == "MNLI-mm" else "eval_accuracy")
        # Table 1 chooses one MNLI model, on MNLI-m, for both columns (as the paper).
        chosen_by = "eval_accuracy" if task == "MNLI" else metric
        restarts = restarts or self.scale.restarts.get(task, 1)
        learning_rates = self._learning_rates("glue")
        if table1:
            learning_rates = self.scale.table1_learning_rates
            restarts = self.scale.table1_restarts.get(task, restarts)
        runs = {}
        for lr in learning_rates:
            runs[lr] = []
            name = self._name(task + ("_bilstm" if bilstm else ""), "glue", lr)
            for seed in range(restarts):
                out = self._out(model, name, seed)
                flags = self._common(model, "glue", out, seed, lr)
                flags.update(task_name=task, data_dir=data_dir, do_train=True, do_eval=True)
                if bilstm:
                    flags["bilstm"] = True
                done = os.path.join(out, "eval_results.txt")
                step = f"finetuning/{model.name}/{name}/{seed}"
                self.runner.python(step, "run_classifier.py", flags, done)
                test_file = get_processor(task).split_file("test")[0]
                if table1 and filesystem.isfile(os.path.join(data_dir, test_file)):
                    # The test set's predictions (GLUE's submission file), from the checkpoint.
                    predict = {k: v for k, v in flags.items() if k not in ("do_train", "do_eval")}
                    predict["do_predict"] = True
                    test = os.path.join(out, prediction_files(get_processor(task), "test")[0])
                    self.runner.python(step + "/predict", "run_classifier.py", predict, test)
                if filesystem.isfile(done):
                    results = read_results(done)
                    result = {"Dev": 100 * results[metric]}
                    if table1:  # which run is best, where it is, and its learning rate
                        result.update(by=results[chosen_by], out=out, lr=lr)
                    runs[lr].append(result)
        if table1:
            finished = [result for results in runs.values() for result in results]
            if not finished:
                if self.runner.dry_run:  # the steps after it, shown with the first run's
                    self.best_runs[task] = self._out(model, self._name(task, "glue", lr), 0)
                return None
            best = max(finished, key=lambda result: result["by"])
            self.best_runs[task] = best["out"]
            return Score(best["Dev"], learning_rate=best["lr"] if len(learning_rates) > 1 else None)
        return (_choose(runs, restarts, "Dev") or {}).get("Dev")

    def predict_ax(self, model: Model, mnli_run: str, data_dir: str) -> str:
        """GLUE's diagnostic set predicted by the fine-tuned MNLI model in `mnli_run` (its
        submission's AX.tsv); returns that file's path."""
        out = os.path.join(self.runner.output_dir, "finetuning", model.name, "AX")
        lr = self.scale.finetuning["glue"]["learning_rate"]
        flags = self._common(model, "glue", out, 0, lr)
        flags.update(init_checkpoint=mnli_run, task_name="AX", data_dir=data_dir, do_predict=True)
        done = os.path.join(out, "AX.tsv")
        self.runner.python(f"finetuning/{model.name}/AX/predict", "run_classifier.py", flags, done)
        return done

    def squad(self, model: Model, version: str, bilstm=False) -> dict | None:
        """{"EM", "F1"} on Dev, the learning rate chosen by F1."""
        train, dev, standin = self.data.squad(version)
        if standin:
            self.notes[f"SQuAD {version}"] = standin
        kind = "squad2" if version == "2.0" else "squad1"
        runs = {}
        for lr in self._learning_rates(kind):
            name = self._name(f"squad{version}" + ("_bilstm" if bilstm else ""), kind, lr)
            out = self._out(model, name, 0)
            flags = self._common(model, kind, out, 0, lr)
            flags.update(
                do_train=True,
                train_file=train,
                do_predict=True,
                predict_file=dev,
                version_2_with_negative=version == "2.0",
                bilstm=bilstm or None,
            )
            if self.scale.laptop:
                flags.update(doc_stride=64, max_query_length=32)
            done = os.path.join(out, "eval_results.json")
            self.runner.python(f"finetuning/{model.name}/{name}", "run_squad.py", flags, done)
            if version == "2.0" and filesystem.isfile(done):
                # Tau chosen on Dev, as the paper: the threshold of the best F1, then predict.
                tau_done = os.path.join(out, "eval_results_tau.json")
                if not filesystem.isfile(tau_done):
                    predict = {k: flags[k] for k in flags if k not in ("do_train", "train_file")}
                    predict["null_score_diff_threshold"] = read_results(done)["best_f1_thresh"]
                    self.runner.python(
                        f"finetuning/{model.name}/{name}_tau", "run_squad.py", predict, tau_done
                    )
                    if not self.runner.dry_run:
                        filesystem.copy(done, tau_done)
                done = tau_done
            runs[lr] = []
            if filesystem.isfile(done):
                results = read_results(done)
                em = results.get("exact_match", results.get("exact"))
                runs[lr].append({"EM": em, "F1": results["f1"]})
        return _choose(runs, 1, "F1")

    def ner(
        self, model: Model, feature: str | None = None, table7: bool = False, restarts: int = 1
    ) -> dict | None:
        """{"Dev F1", "Test F1"}, the learning rate chosen on Dev, each the mean of `restarts`
        runs (the first is the one run of one restart). With `table7`, Table 7's protocol: the
        learning rate chosen on Dev from the scale's Table 7 rates, each the mean of its
        restarts ("averaged over 5 random restarts")."""
        kind = "ner_feature" if feature else "ner"
        rates = self._learning_rates(kind)
        if table7:
            rates = list(self.scale.table7_learning_rates or rates) if not feature else rates
            restarts = self.scale.table7_restarts
        runs = {}
        for lr in rates:
            runs[lr] = []
            for seed in range(restarts):
                name = self._name(f"ner_{feature or 'fine_tuning'}", kind, lr)
                out = self._out(model, name, seed)
                flags = self._common(model, kind, out, seed, lr)
                flags.update(
                    data_dir=self.data.conll(), do_train=True, do_eval=True, do_predict=True
                )
                if feature:
                    flags.update(feature_based=feature, lstm_units=model.hidden_size)
                done = os.path.join(out, "test_results.txt")
                step = self._name(f"ner_{feature or 'ft'}", kind, lr) + (f"/{seed}" if seed else "")
                self.runner.python(f"finetuning/{model.name}/{step}", "run_ner.py", flags, done)
                if filesystem.isfile(done):
                    dev = read_results(os.path.join(out, "eval_results.txt"))
                    # conlleval's F1 is in percent already.
                    runs[lr].append(
                        {"Dev F1": dev["eval_f1"], "Test F1": read_results(done)["test_f1"]}
                    )
        return _choose(runs, restarts, "Dev F1")

    def swag(self, model: Model) -> float | None:
        data_dir, standin = self.data.swag()
        if standin:
            self.notes["SWAG"] = standin
        runs = {}
        for lr in self._learning_rates("swag"):
            name = self._name("swag", "swag", lr)
            out = self._out(model, name, 0)
            flags = self._common(model, "swag", out, 0, lr)
            flags.update(data_dir=data_dir, do_train=True, do_eval=True)
            done = os.path.join(out, "eval_results.txt")
            self.runner.python(f"finetuning/{model.name}/{name}", "run_swag.py", flags, done)
            runs[lr] = []
            if filesystem.isfile(done):
                runs[lr].append({"Dev": 100 * read_results(done)["eval_accuracy"]})
        return (_choose(runs, 1, "Dev") or {}).get("Dev")


def _choose(runs: dict[float, list[dict]], restarts: int, key: str) -> dict[str, Score] | None:
    """Of the learning rates ({lr: [metrics of a run, ...]}), the one with the best mean `key`
    on Dev: each metric's mean and spread over its runs. None until every rate's `restarts`
    runs have finished (a cell chosen from some of its rates could change: it is pending)."""
    complete = {lr: results for lr, results in runs.items() if len(results) == restarts}
    if not complete or len(complete) < len(runs):
        return None
    lr = max(complete, key=lambda rate: statistics.fmean(r[key] for r in complete[rate]))
    chosen = lr if len(runs) > 1 else None
    return {
        metric: _score(
            [result[metric] for result in complete[lr]],
            chosen,
            {
                rate if chosen else None: [r[metric] for r in results]
                for rate, results in complete.items()
            },  # fmt: skip
        )
        for metric in complete[lr][0]
    }


def _score(values: list[float], learning_rate: float | None, runs: dict) -> Score:
    spread = statistics.stdev(values) if len(values) > 1 else None
    return Score(statistics.fmean(values), spread, learning_rate, runs)


# Table 1's metric per task (F1 for MRPC and QQP, Spearman for STS-B, Matthews for CoLA,
# accuracy elsewhere); Tables 5, 6 and 8 report MRPC accuracy.
TABLE1_METRICS = {
    "MRPC": "eval_f1",
    "QQP": "eval_f1",
    "STS-B": "eval_spearmanr",
    "CoLA": "eval_mcc",
}


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None
