r"""A bag-of-words logistic regression on a GLUE classification task's Dev set: how much of the
task the words alone decide, whatever their order. The line a fine-tuned model that has learned
no more than word polarity sits on (docs/reproduction/long_schedule.md and table1.md read
SST-2's rows against it).

    python scripts/paper/bow_baseline.py --task_name=SST-2 --data_dir=glue/SST-2 \
      --l2=1e-4 --output_file=eval_results.txt

Features: one per word of the training set (lower-cased, split as BERT's basic tokenizer
splits), 1 if the example has it; both sentences' words for a pair task. The mean logistic loss
plus l2/2 |w|^2 (the bias not penalised), minimised to convergence (accelerated gradient with
restarts). Written here because the project's dependencies have no logistic regression.
"""

from __future__ import annotations

import numpy as np

from bert_tf import cli
from bert_tf.classification.processors import get_processor
from bert_tf.errors import InputError
from bert_tf.options import Options, check_options, non_negative, option, options
from bert_tf.tokenization import BasicTokenizer


class SparseBinary:
    """A 0/1 matrix [n, d] from its ones' coordinates: X @ w and X.T @ r in O(ones)."""

    def __init__(self, rows: np.ndarray, columns: np.ndarray, shape: tuple[int, int]) -> None:
        self.rows, self.columns, self.shape = rows, columns, shape

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, weights=w[self.columns], minlength=self.shape[0])

    def rmatmul(self, r: np.ndarray) -> np.ndarray:
        return np.bincount(self.columns, weights=r[self.rows], minlength=self.shape[1])


def bag_of_words(texts: list[list[str]], vocab: dict[str, int]) -> SparseBinary:
    """The examples' multi-hot matrix [len(texts), len(vocab)]; unknown words dropped."""
    rows, columns = [], []
    for i, words in enumerate(texts):
        known = sorted({vocab[w] for w in words if w in vocab})
        rows += [i] * len(known)
        columns += known
    return SparseBinary(
        np.array(rows, np.int64), np.array(columns, np.int64), (len(texts), len(vocab))
    )


def fit_logistic(
    x: SparseBinary, y: np.ndarray, l2: float, steps: int = 20_000, tolerance: float = 1e-7
) -> tuple[np.ndarray, float]:
    """Weights [d] and bias minimising mean(log(1 + e^z) - y z) + l2/2 |w|^2, z = x @ w + b."""
    n, d = x.shape

    def gram(v: np.ndarray) -> np.ndarray:  # [X 1]^T [X 1] v: the bias a column of ones
        z = x @ v[:-1] + v[-1]
        return np.append(x.rmatmul(z), z.sum())

    # The gradient's Lipschitz constant is |[X 1]|^2 / (4 n) + l2: the norm by power iteration
    # (which approaches it from below: 10% added), the step its inverse.
    v = np.ones(d + 1)
    for _ in range(50):
        v = gram(v)
        v /= np.linalg.norm(v)
    step = 1.0 / (1.1 * v @ gram(v) / (4 * n) + l2)

    def gradient(theta: np.ndarray) -> np.ndarray:
        z = x @ theta[:-1] + theta[-1]
        residual = (1.0 / (1.0 + np.exp(-z)) - y) / n
        return np.append(x.rmatmul(residual) + l2 * theta[:-1], residual.sum())

    theta = previous = np.zeros(d + 1)
    momentum = 1.0
    for _ in range(steps):
        look = theta + (momentum - 1) / (momentum + 2) * (theta - previous)
        g = gradient(look)
        previous, theta = theta, look - step * g
        if np.dot(theta - previous, g) > 0:  # going uphill: restart the momentum (O'Donoghue)
            momentum = 1.0
        momentum += 1
        if np.linalg.norm(g) < tolerance:
            break
    return theta[:-1], float(theta[-1])


@options
class BowOptions(Options):
    task_name: str = option(
        None, "A two-label GLUE task: SST-2, CoLA, QNLI, RTE, MRPC...", required=True
    )
    data_dir: str = option(None, "The task's folder (train.tsv, dev.tsv).", required=True)
    max_train_examples: int = option(
        0, "The first N training examples only (0: all).", non_negative
    )
    l2: float = option(1e-4, "The weights' L2 penalty.", non_negative)
    output_file: str = option(None, "Where eval_results.txt's lines go.", required=True)


def bow_baseline(args: BowOptions) -> dict:
    check_options(args)
    processor = get_processor(args.task_name)
    labels = processor.get_labels()
    if len(labels) != 2:
        raise InputError(
            f"--task_name={args.task_name} has labels {labels}; expected a two-label task"
        )
    tokenizer = BasicTokenizer(do_lower_case=True)

    def read(examples):
        words = [tokenizer.tokenize(e.text_a + " " + (e.text_b or "")) for e in examples]
        return words, np.array([labels.index(e.label) for e in examples], np.float64)

    train = processor.get_train_examples(args.data_dir)
    train_words, train_y = read(train[: args.max_train_examples or None])
    dev_words, dev_y = read(processor.get_dev_examples(args.data_dir))
    vocab: dict[str, int] = {}
    for words in train_words:
        for word in words:
            vocab.setdefault(word, len(vocab))
    w, b = fit_logistic(bag_of_words(train_words, vocab), train_y, args.l2)
    dev = bag_of_words(dev_words, vocab)
    results = {
        "eval_accuracy": float(np.mean((dev @ w + b > 0) == (dev_y > 0.5))),
        "train_examples": len(train_words),
        "features": len(vocab),
    }
    from bert_tf.training.summaries import write_eval_results  # TensorFlow: only here

    write_eval_results(args.output_file, results)
    print(f"bag of words, {args.task_name}, l2 {args.l2}: {results}")
    return results


if __name__ == "__main__":
    cli.define_flags(BowOptions)
    cli.run_with_options(BowOptions, bow_baseline)
