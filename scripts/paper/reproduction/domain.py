"""Continued pre-training on a domain (issue 49; Gururangan et al. 2020, "Don't Stop
Pretraining"): the base model, pre-trained on books, carried on over Wikipedia, with and without
the domain's words in its vocab, against the model as it is and the same steps from random
weights. Measured as held-out masked-LM perplexity on the domain and QNLI's Dev accuracy.

The domain text is the SQuAD stand-in's training articles (QNLI's training pairs are built from
them: the task's own text, as Gururangan et al.'s task-adaptive pre-training uses it); its Dev
articles, which QNLI's Dev pairs come from, are held out of it and measure the perplexity. QNLI
rather than SQuAD: a sentence-pair task on the same paragraphs, at 128 tokens (SQuAD's 384 cost
three times as much), that Table 5 and Figure 5 also fine-tune at these sizes.
"""

from __future__ import annotations

import json
import os

from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from reproduction.pretraining import Model, Pretraining, random_model, table6_run
from reproduction.runner import read_results
from reproduction.scales import DEFAULT_MASKING
from reproduction.tables import Table

# The continued pre-training's share of the base model's steps, and its learning rate's of the
# base model's peak: the original continues BERT-Base (pre-trained at 1e-4) at 2e-5.
STEPS_SHARE = 10
RATE_SHARE = 5
TSV_HEADER = ("model", "steps", "domain_ppl", "task", "dev")


def domain(ctx):
    """The rows: the base model as it is, adapted, adapted with the domain's words, and the
    same continued steps from random weights; columns the domain's held-out masked-LM
    perplexity and QNLI's Dev accuracy. Also OUT/tables/domain_adaptation.tsv."""
    scale, data, runner = ctx.scale, ctx.data, ctx.runner
    # At long40k, Table 6's run of the base shape (the base model's steps and rate, a tenth as
    # warm-up), which that table trains anyway; elsewhere the base model of the other tables.
    run = table6_run(scale, scale.base_shape) if scale.table6_warmup_steps else None
    base = ctx.model(run or Pretraining(scale.base_shape))
    steps = scale.pretraining_steps // STEPS_SHARE
    corpus, heldout = domain_corpus(ctx)
    vocab = os.path.join(data.dir, "domain", "vocab.txt")
    runner.python(
        "domain/vocab",
        "scripts/extend_vocab.py",
        {"vocab_file": data.vocab, "input_file": corpus, "output_file": vocab,
         "do_lower_case": False},
        vocab,
    )  # fmt: skip
    books_records = domain_records(ctx, "books_vocab", data.vocab, corpus, heldout)
    rows = {"base model (books)": (base, domain_eval(ctx, base, books_records[1]), 0)}
    random = random_model(scale.base_shape, data, runner)
    for label, start, records, words in (
        ("adapted", base, books_records, data.vocab),
        ("adapted, domain vocab", base,
         domain_records(ctx, "domain_vocab", vocab, corpus, heldout), vocab),
        ("random weights, same steps", random, books_records, data.vocab),
    ):  # fmt: skip
        rows[label] = (*continue_pretraining(ctx, start, words, records, steps), steps)
    table = Table("domain", f"Continued pre-training on Wikipedia, {scale.base_shape} (Dev)")
    lines = ["\t".join(TSV_HEADER)]
    for label, (model, ppl, model_steps) in rows.items():
        qnli = ctx.tuner.glue(model, "QNLI")
        table.set(label, "domain ppl", ppl)
        table.set(label, "QNLI", qnli)
        cells = (label, model_steps, ppl, "QNLI", qnli)
        lines.append("\t".join("-" if c is None else _cell(c) for c in cells))
    if not runner.dry_run:
        tsv = os.path.join(runner.output_dir, "tables", "domain_adaptation.tsv")
        filesystem.makedirs(os.path.dirname(tsv))
        atomic_write_text(tsv, "\n".join(lines) + "\n")
    table.notes.append(
        f"Continued: {steps} steps of {scale.train_batch_size} ({100 // STEPS_SHARE}% of the base "
        f"model's), peak rate 1/{RATE_SHARE} of its. The domain vocab's perplexity is over its "
        "own tokens (a domain word one token), so it is not the others' to the digit."
    )
    return table


def domain_corpus(ctx) -> tuple[str, str]:
    """(training, held-out) domain text, one sentence a line: the paragraphs of the SQuAD
    stand-in's training articles and of its Dev articles (prepare_corpus.py's paragraphs)."""
    data, runner = ctx.data, ctx.runner
    folder = os.path.join(data.dir, "domain")
    outputs = []
    for split, squad in zip(("train", "heldout"), ctx.data.squad("1.1")[:2], strict=True):
        raw = os.path.join(folder, f"{split}_paragraphs.txt")
        if not filesystem.isfile(raw) and not runner.dry_run:
            filesystem.makedirs(folder)
            atomic_write_text(raw, paragraphs(squad))
        corpus = os.path.join(folder, f"{split}.txt")
        runner.python(
            f"domain/{split}_corpus",
            "prepare_corpus.py",
            {"input_file": raw, "input_format": "paragraphs", "output_file": corpus},
            corpus,
        )
        outputs.append(corpus)
    return outputs[0], outputs[1]


def paragraphs(squad_file: str) -> str:
    """A SQuAD file's contexts, one paragraph a line, a blank line between articles."""
    with filesystem.open_file(squad_file) as f:
        articles = json.load(f)["data"]
    return (
        "\n\n".join(
            "\n".join(" ".join(p["context"].split()) for p in article["paragraphs"])
            for article in articles
        )
        + "\n"
    )


def domain_records(ctx, name: str, vocab: str, corpus: str, heldout: str) -> tuple[str, str]:
    """The domain's pre-training records with `vocab`, as the books' (`Data.records`)."""
    folder = os.path.join(ctx.data.dir, "domain", "records", name)
    outputs = []
    for split, text, seed, dupe in (
        ("train", corpus, 12345, ctx.scale.dupe_factor),
        ("heldout", heldout, 54321, 1),
    ):
        path = os.path.join(folder, f"{split}.tfrecord")
        flags = {
            "input_file": text, "output_file": path, "vocab_file": vocab,
            "do_lower_case": False, "max_seq_length": 128, "max_predictions_per_seq": 20,
            "random_seed": seed, "dupe_factor": dupe, "masking_rates": DEFAULT_MASKING,
        }  # fmt: skip
        if not ctx.runner.dry_run:
            filesystem.makedirs(folder)
        ctx.runner.python(
            f"domain/{split}_records_{name}", "create_pretraining_data.py", flags, path
        )
        outputs.append(path)
    return outputs[0], outputs[1]


def domain_eval(ctx, model: Model, heldout: str) -> float | None:
    """`model`'s held-out masked-LM perplexity on the domain's records `heldout`, as it is."""
    out = os.path.join(ctx.runner.output_dir, "domain", model.name, "eval")
    flags = {
        "bert_config_file": model.bert_config, "init_checkpoint": model.init_checkpoint,
        "input_file": heldout, "output_dir": out, "do_eval": True, "eval_batch_size": 32,
        "max_eval_steps": 1000,
    }  # fmt: skip
    done = os.path.join(out, "eval_results.txt")
    ctx.runner.python(f"domain/{model.name}/eval", "run_pretraining.py", flags, done)
    return _perplexity(done)


def continue_pretraining(ctx, start: Model, vocab: str, records, steps: int):
    """`start` pre-trained `steps` more on the domain's `records` (training, held-out), written
    with `vocab`; the model, and its held-out perplexity on the domain."""
    scale = ctx.scale
    train, eval_records = records
    own_vocab = vocab != ctx.data.vocab
    name = f"{start.name}_domain" + ("_vocab" if own_vocab else "") + f"_{steps}steps"
    out = os.path.join(ctx.runner.output_dir, "domain", name)  # not the books' pretraining.tsv
    flags = {
        "bert_config_file": start.bert_config, "init_checkpoint": start.init_checkpoint,
        "input_file": train, "eval_input_file": eval_records, "output_dir": out,
        "vocab_file": vocab, "do_train": True, "do_eval": True,
        "train_batch_size": scale.train_batch_size, "eval_batch_size": 32,
        "max_eval_steps": 1000, "learning_rate": scale.learning_rate / RATE_SHARE,
        "num_train_steps": steps, "num_warmup_steps": steps // 10,
        "save_checkpoints_steps": min(steps, 1000), "log_steps": max(steps // 40, 1),
        "use_xla": scale.use_xla, "seed": 1, "resume_input": True,
    }  # fmt: skip
    pretrained = os.path.join(out, "pretrained")
    done = os.path.join(pretrained, "bert_model.ckpt.index")
    ctx.runner.python(f"domain/{name}", "run_pretraining.py", flags, done)
    model = Model(
        name, os.path.join(pretrained, "bert_config.json"), vocab,
        os.path.join(pretrained, "bert_model.ckpt"), start.hidden_size,
    )  # fmt: skip
    return model, _perplexity(os.path.join(out, "eval_results.txt"))


def _cell(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _perplexity(path: str) -> float | None:
    if not filesystem.isfile(path):
        return None
    return read_results(path).get("masked_lm_perplexity")
