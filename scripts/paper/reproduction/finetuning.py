"""Fine-tuning a pre-trained model on a table's task and reading back the table's metric."""

from __future__ import annotations

import os
import shutil
import statistics

from reproduction.datasets import Data
from reproduction.pretraining import Model
from reproduction.runner import Runner, read_results
from reproduction.scales import Scale


class FineTuner:
    """Fine-tunes a model on a task (unless done) and returns the table's metric."""

    def __init__(self, scale: Scale, data: Data, runner: Runner) -> None:
        self.scale, self.data, self.runner = scale, data, runner
        self.notes: dict[str, str] = {}  # column -> what stands in for it

    def _common(self, model: Model, kind: str, out: str, seed: int) -> dict:
        settings = self.scale.finetuning[kind]
        return {
            "vocab_file": model.vocab,
            "bert_config_file": model.bert_config,
            "init_checkpoint": model.init_checkpoint,
            "do_lower_case": False if self.scale.laptop else os.environ.get("DO_LOWER_CASE"),
            "output_dir": out,
            "max_seq_length": settings["max_seq_length"],
            "train_batch_size": settings["batch"],
            "learning_rate": settings["learning_rate"],
            "num_train_epochs": settings["epochs"],
            "seed": seed,
        }

    def _out(self, model: Model, task: str, seed: int) -> str:
        return os.path.join(self.runner.output_dir, "finetuning", model.name, task, f"seed{seed}")

    def glue(
        self,
        model: Model,
        column: str,
        bilstm: bool = False,
        table6: bool = False,
        table1: bool = False,
        metric: str | None = None,
    ) -> float | None:
        """A column's metric (in percent) over restarts, or None without data.

        `column` is the paper's (MNLI-m, QNLI, MRPC, ...); its task or a stand-in is
        fine-tuned; `metric` is accuracy unless given (Table 1's F1, Spearman, ...). The mean
        over restarts, as Table 6; with `table1`, Table 1's search instead (Sec. 4.1): every
        learning rate of the scale's search and its restarts, the best on Dev, and the test
        set predicted (GLUE's submission files).
        """
        found = self.data.glue(column)
        if found is None:
            return None
        data_dir, task, standin = found
        if standin:
            self.notes[column] = standin
        metric = metric or ("eval_mismatched_accuracy" if column == "MNLI-mm" else "eval_accuracy")
        restarts = self.scale.restarts.get(task, 1)
        if table6 and self.scale.table6_restarts:
            restarts = self.scale.table6_restarts
        default_lr = self.scale.finetuning["glue"]["learning_rate"]
        learning_rates = [default_lr]
        if table1:
            learning_rates = self.scale.table1_learning_rates
            restarts = self.scale.table1_restarts.get(task, restarts)
        values = []
        for lr in learning_rates:
            for seed in range(restarts):
                name = (
                    task + ("_bilstm" if bilstm else "") + ("" if lr == default_lr else f"_lr{lr}")
                )
                out = self._out(model, name, seed)
                flags = self._common(model, "glue", out, seed)
                flags.update(task_name=task, data_dir=data_dir, do_train=True, do_eval=True)
                flags["learning_rate"] = lr
                if bilstm:
                    flags["bilstm"] = True
                done = os.path.join(out, "eval_results.txt")
                step = f"finetuning/{model.name}/{name}/{seed}"
                self.runner.python(step, "run_classifier.py", flags, done)
                if table1 and os.path.isfile(os.path.join(data_dir, "test.tsv")):
                    # The test set's predictions (GLUE's submission file), from the checkpoint.
                    predict = {k: v for k, v in flags.items() if k not in ("do_train", "do_eval")}
                    predict["do_predict"] = True
                    test = os.path.join(out, "test_results.tsv")
                    self.runner.python(step + "/predict", "run_classifier.py", predict, test)
                if os.path.isfile(done):
                    values.append(100 * read_results(done)[metric])
        if table1:
            return max(values) if values else None
        return mean(values)

    def squad(self, model: Model, version: str, bilstm=False) -> dict | None:
        train, dev, standin = self.data.squad(version)
        if standin:
            self.notes[f"SQuAD {version}"] = standin
        kind = "squad2" if version == "2.0" else "squad1"
        out = self._out(model, f"squad{version}" + ("_bilstm" if bilstm else ""), 0)
        flags = self._common(model, kind, out, 0)
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
        name = f"finetuning/{model.name}/{os.path.basename(os.path.dirname(out))}"
        self.runner.python(name, "run_squad.py", flags, done)
        if version == "2.0" and os.path.isfile(done):
            # Tau chosen on Dev, as the paper: the threshold of the best F1, then predict again.
            tau_done = os.path.join(out, "eval_results_tau.json")
            if not os.path.isfile(tau_done):
                predict = {k: flags[k] for k in flags if k not in ("do_train", "train_file")}
                predict["null_score_diff_threshold"] = read_results(done)["best_f1_thresh"]
                self.runner.python(
                    f"finetuning/{model.name}/squad2_tau", "run_squad.py", predict, tau_done
                )
                if not self.runner.dry_run:
                    shutil.copyfile(done, tau_done)
            done = tau_done
        if not os.path.isfile(done):
            return None
        results = read_results(done)
        return {
            "EM": results.get("exact_match", results.get("exact")),
            "F1": results["f1"],
        }

    def ner(self, model: Model, feature: str | None = None) -> dict | None:
        kind = "ner_feature" if feature else "ner"
        out = self._out(model, f"ner_{feature or 'fine_tuning'}", 0)
        flags = self._common(model, kind, out, 0)
        flags.update(data_dir=self.data.conll(), do_train=True, do_eval=True, do_predict=True)
        if feature:
            flags.update(feature_based=feature, lstm_units=model.hidden_size)
        done = os.path.join(out, "test_results.txt")
        self.runner.python(
            f"finetuning/{model.name}/ner_{feature or 'ft'}", "run_ner.py", flags, done
        )
        if not os.path.isfile(done):
            return None
        dev = read_results(os.path.join(out, "eval_results.txt"))
        # conlleval's F1 is in percent already.
        return {"Dev F1": dev["eval_f1"], "Test F1": read_results(done)["test_f1"]}

    def swag(self, model: Model) -> float | None:
        data_dir, standin = self.data.swag()
        if standin:
            self.notes["SWAG"] = standin
        out = self._out(model, "swag", 0)
        flags = self._common(model, "swag", out, 0)
        flags.update(data_dir=data_dir, do_train=True, do_eval=True)
        done = os.path.join(out, "eval_results.txt")
        self.runner.python(f"finetuning/{model.name}/swag", "run_swag.py", flags, done)
        return 100 * read_results(done)["eval_accuracy"] if os.path.isfile(done) else None


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
