"""run_pretraining.py end to end, as users run it: one subprocess per command line.

It trains and evaluates with the original's flags and outputs, resumes after kill -9, gives
the same losses on two mirrored replicas as on one device, runs under MultiWorkerMirrored with
two local workers, and answers bad input with one error line.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import (
    REPO,
    SAMPLE_DATA,
    SCRIPT_ENV,
    error_line,
    run_script,
    sample_pretraining_records,
    sigterm_during_training,
    start_workers,
    tiny_config_dict,
)

from bert_tf.config import BertConfig
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.pretrainer import BertPretrainer

SEQ, PREDICTIONS = 64, 10
# No dropout: runs under different strategies must compute the same numbers.
CONFIG = tiny_config_dict(
    vocab_size=30522, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
)


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    """Records of the sample text at 64/10, a tiny config, and a random initial checkpoint."""
    folder = tmp_path_factory.mktemp("pretraining")
    records = sample_pretraining_records(folder / "data.tfrecord", SEQ, PREDICTIONS)
    config = BertConfig(**CONFIG)
    config.to_json_file(folder / "bert_config.json")
    save_original_checkpoint(BertPretrainer(config), folder / "init" / "bert_model.ckpt")
    return {
        "input_file": records,
        "bert_config_file": folder / "bert_config.json",
        "init_checkpoint": folder / "init" / "bert_model.ckpt",
        "folder": folder,
    }


def pretraining_args(setup: dict, output_dir: Path, **flags) -> list[str]:
    values = {
        "input_file": setup["input_file"],
        "bert_config_file": setup["bert_config_file"],
        "output_dir": output_dir,
        "max_seq_length": SEQ,
        "max_predictions_per_seq": PREDICTIONS,
        "do_train": True,
        "train_batch_size": 8,
        "num_train_steps": 6,
        "num_warmup_steps": 2,
        "learning_rate": 1e-3,
        "save_checkpoints_steps": 3,
        "log_steps": 1,
        "seed": 1,
    }
    values.update(flags)
    return ["run_pretraining.py", *(f"--{k}={v}" for k, v in values.items())]


def summaries(folder: Path) -> dict[str, dict[int, float]]:
    """TensorBoard scalars: tag -> {step: value}."""
    values: dict[str, dict[int, float]] = {}
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                number = float(tf.make_ndarray(value.tensor))
                values.setdefault(value.tag, {})[event.step] = number
    return values


def test_trains_evaluates_and_writes_the_originals_outputs(setup, tmp_path):
    output_dir = tmp_path / "out"
    result = run_script(
        *pretraining_args(
            setup,
            output_dir,
            do_eval=True,
            max_eval_steps=2,
            vocab_file=SAMPLE_DATA / "vocab.txt",
            do_lower_case=True,
        ),  # fmt: skip
        fresh=True,
    )
    assert result.returncode == 0, result.stderr
    assert "steps_per_second=" in result.stderr and "ETA" in result.stderr
    assert (output_dir / "ckpt-3.index").exists() and (output_dir / "ckpt-6.index").exists()

    lines = (output_dir / "eval_results.txt").read_text().splitlines()
    keys = [line.split(" = ")[0] for line in lines]
    assert keys == sorted(
        [
            "global_step",
            "loss",
            "masked_lm_accuracy",
            "masked_lm_loss",
            "masked_lm_perplexity",
            "next_sentence_accuracy",
            "next_sentence_loss",
        ]
    )
    assert "global_step = 6" in lines
    results = {k: float(v) for k, v in (line.split(" = ") for line in lines)}
    assert results["masked_lm_perplexity"] == pytest.approx(np.exp(results["masked_lm_loss"]))

    pretrained = output_dir / "pretrained"
    names = {name for name, _ in tf.train.list_variables(str(pretrained / "bert_model.ckpt"))}
    assert names == set(BertPretrainer(BertConfig(**CONFIG)).original_variable_names())
    assert json.loads((pretrained / "bert_config.json").read_text()) == CONFIG
    assert json.loads((output_dir / "bert_config.json").read_text()) == CONFIG
    assert (pretrained / "vocab.txt").read_bytes() == (SAMPLE_DATA / "vocab.txt").read_bytes()
    # The records' casing, given, is said beside the model, so fine-tuning reads it there.
    from bert_tf.model_io.source import ModelSource

    for directory in (pretrained, output_dir):
        assert ModelSource(directory).casing_evidence() == (True, "its tokenizer_config.json says")

    train = summaries(output_dir / "train")
    assert set(train["loss"]) == {1, 2, 3, 4, 5, 6}
    assert {"masked_lm_accuracy", "learning_rate", "gradient_norm", "steps_per_second"} <= set(
        train
    )
    # The update to step t + 1 uses lr(t): warmup lr(1) = 1e-3 / 2, then 1e-3 * (1 - 5 / 6).
    assert train["learning_rate"][2] == pytest.approx(5e-4, rel=1e-6)
    assert train["learning_rate"][6] == pytest.approx(1e-3 / 6, rel=1e-6)
    assert set(summaries(output_dir / "eval")) >= {"masked_lm_accuracy", "next_sentence_loss"}


def test_held_out_records_are_evaluated_with_their_perplexity(setup, tmp_path):
    heldout = tmp_path / "heldout.tfrecord"
    text = (SAMPLE_DATA / "sample_text.txt").read_text(encoding="utf-8")
    (tmp_path / "heldout.txt").write_text(text.split("\n\n")[-1], encoding="utf-8")
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={tmp_path / 'heldout.txt'}",
        f"--output_file={heldout}",
        f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--random_seed=7",
    )
    assert result.returncode == 0, result.stderr
    evaluated = {}
    for name, extra in (("train", {}), ("heldout", {"eval_input_file": heldout})):
        output_dir = tmp_path / name
        result = run_script(
            *pretraining_args(
                setup,
                output_dir,
                init_checkpoint=setup["init_checkpoint"],
                do_train=False,
                do_eval=True,
                eval_batch_size=2,
                max_eval_steps=1000,
                **extra,
            )
        )
        assert result.returncode == 0, result.stderr
        lines = (output_dir / "eval_results.txt").read_text().splitlines()
        evaluated[name] = {k: float(v) for k, v in (line.split(" = ") for line in lines)}
        assert evaluated[name]["masked_lm_perplexity"] == pytest.approx(
            np.exp(evaluated[name]["masked_lm_loss"]), rel=1e-6
        )
    assert evaluated["heldout"]["masked_lm_loss"] != evaluated["train"]["masked_lm_loss"]
    summary = summaries(tmp_path / "heldout" / "eval")
    assert summary["masked_lm_perplexity"][0] == pytest.approx(
        evaluated["heldout"]["masked_lm_perplexity"], rel=1e-5
    )


@pytest.mark.slow  # CI time: among the longest end-to-end runs
def test_every_nth_checkpoint_is_kept_beside_the_last_few(setup, tmp_path):
    output_dir = tmp_path / "out"
    result = run_script(
        *pretraining_args(
            setup,
            output_dir,
            num_train_steps=5,
            save_checkpoints_steps=1,
            keep_checkpoint_max=1,
            keep_checkpoint_every_n_steps=2,
        )
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in output_dir.glob("ckpt-*.index")) == ["ckpt-5.index"]
    kept = output_dir / "kept"
    assert sorted(p.name for p in kept.glob("ckpt-*.index")) == ["ckpt-2.index", "ckpt-4.index"]
    step_2 = tf.train.load_checkpoint(str(kept / "ckpt-2"))
    step_4 = tf.train.load_checkpoint(str(kept / "ckpt-4"))
    name = "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"
    assert [step_2.get_tensor(name), step_4.get_tensor(name)] == [2, 4]


def test_resume_input_goes_on_where_the_stopped_run_was_in_its_records(setup, tmp_path):
    whole = tmp_path / "whole"
    assert run_script(*pretraining_args(setup, whole)).returncode == 0
    uninterrupted = summaries(whole / "train")["masked_lm_loss"]
    for resume_input in (True, False):  # False: the original's, from the first record again
        resumed = tmp_path / f"resume_input_{resume_input}"
        resumed.mkdir()
        for path in whole.glob("ckpt-3.*"):
            shutil.copy(path, resumed)
        result = run_script(*pretraining_args(setup, resumed, resume_input=resume_input))
        assert result.returncode == 0, result.stderr
        skipped = "resuming the input after the 24 records read so far" in result.stderr
        assert skipped == resume_input
        losses = summaries(resumed / "train")["masked_lm_loss"]
        assert set(losses) == {4, 5, 6}
        same = [losses[step] == pytest.approx(uninterrupted[step], rel=1e-5) for step in losses]
        assert same == [resume_input] * 3


def test_a_left_to_right_run_marks_its_checkpoints_causal_for_fine_tuning(setup, tmp_path):
    from bert_tf.config import BertConfig
    from bert_tf.finetuning.driver import load_model_files
    from bert_tf.model_io.source import ModelSource

    output_dir = tmp_path / "ltr"
    result = run_script(
        *pretraining_args(
            setup,
            output_dir,
            objective="ltr",
            num_train_steps=2,
            save_checkpoints_steps=1,
            keep_checkpoint_every_n_steps=1,
        )
    )
    assert result.returncode == 0, result.stderr
    shape = BertConfig.from_json_file(setup["bert_config_file"])  # not causal
    for checkpoint in (output_dir / "ckpt-2", output_dir / "kept" / "ckpt-1", output_dir):
        assert ModelSource(str(checkpoint)).with_attention(shape).causal_attention
    assert (
        ModelSource(str(output_dir / "pretrained" / "bert_model.ckpt"))
        .with_attention(shape)
        .causal_attention
    )
    assert not ModelSource(str(setup["init_checkpoint"])).with_attention(shape).causal_attention

    class Options:  # what load_model_files reads
        do_lower_case = True
        init_checkpoint = str(output_dir / "kept" / "ckpt-1")
        bert_config_file = str(setup["bert_config_file"])  # the shape alone: not causal
        max_seq_length = SEQ
        vocab_file = str(SAMPLE_DATA / "vocab.txt")

    Options.output_dir = str(tmp_path / "fine_tuning")  # new: no config of its own

    config, _ = load_model_files(Options, ModelSource(Options.init_checkpoint))
    assert config.causal_attention
    Options.init_checkpoint = str(setup["init_checkpoint"])
    assert not load_model_files(Options, ModelSource(Options.init_checkpoint))[0].causal_attention


@pytest.mark.slow  # CI time: among the longest end-to-end runs
def test_rerunning_after_kill_9_resumes_from_the_latest_checkpoint(setup, tmp_path):
    output_dir = tmp_path / "out"
    args = pretraining_args(
        setup, output_dir, num_train_steps=400, save_checkpoints_steps=5, log_steps=5
    )
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=REPO,
        env=SCRIPT_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def latest_step():
        # What a rerun resumes from: the checkpoint state, which names ckpt-N only after its
        # files are written (killed between the two, a rerun rightly resumes from the one
        # before), so the test waits on the state, not on ckpt-10's files.
        latest = tf.train.latest_checkpoint(str(output_dir))
        return int(latest.rsplit("-", 1)[1]) if latest else 0

    deadline = time.monotonic() + 600  # a hang, not a loaded machine (120 s passed at step 5)
    while latest_step() < 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = latest_step()
    assert 10 <= killed_at < 400

    saved = tf.train.load_checkpoint(str(output_dir / f"ckpt-{killed_at}"))
    slots = [n for n in saved.get_variable_to_shape_map() if n.startswith("optimizer/_variables/")]
    assert len(slots) >= 2 * len(BertPretrainer(BertConfig(**CONFIG)).weights)  # adam_m, adam_v

    result = run_script(*pretraining_args(setup, output_dir, num_train_steps=killed_at + 5))
    assert result.returncode == 0, result.stderr
    assert f"restored {output_dir / f'ckpt-{killed_at}'} (step {killed_at})" in (result.stderr)
    train = summaries(output_dir / "train")
    # The schedule continues where it stopped: lr(killed_at + 4) at step killed_at + 5.
    total = killed_at + 5
    assert train["learning_rate"][total] == pytest.approx(1e-3 * (1 - (total - 1) / total))
    assert tf.train.latest_checkpoint(str(output_dir)).endswith(f"ckpt-{total}")


@pytest.mark.parametrize(
    "stop, status, said",
    [
        (signal.SIGTERM, 143, "SIGTERM"),  # as a process SIGTERM ended: schedulers restart it
        (signal.SIGINT, 130, "Ctrl-C (SIGINT)"),  # a user's Ctrl-C: the same, and its status
    ],
)
def test_sigterm_or_ctrl_c_saves_the_step_reached_and_the_rerun_resumes_from_it(
    stop, status, said, setup, tmp_path
):
    output_dir = tmp_path / "out"
    # One loop of 100,000 steps, no checkpoint or log due: only the signal can stop it early.
    never = 100_000
    args = pretraining_args(
        setup, output_dir, num_train_steps=never, save_checkpoints_steps=never,
        iterations_per_loop=never, log_steps=never,
    )  # fmt: skip
    returncode, stderr = sigterm_during_training(args, "training adamw to step", stop)

    assert returncode == status
    assert "Traceback" not in stderr
    stopped_at = int(tf.train.latest_checkpoint(str(output_dir)).rsplit("-", 1)[1])
    assert 1 <= stopped_at < never
    assert stderr.splitlines()[-1] == (
        f"run_pretraining.py: stopped by {said} at step {stopped_at}; saved "
        f"{output_dir / f'ckpt-{stopped_at}'}; run the same command again to resume from it"
    )
    assert not (output_dir / "pretrained").exists()  # the run is not complete

    result = run_script(*pretraining_args(setup, output_dir, num_train_steps=stopped_at + 2))
    assert result.returncode == 0, result.stderr
    assert f"restored {output_dir / f'ckpt-{stopped_at}'} (step {stopped_at})" in result.stderr
    assert (output_dir / "pretrained" / "bert_model.ckpt.index").exists()


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


# A changed byte fails the checksum (DataLossError) where a cut file fails to read (IndexError).
@pytest.mark.parametrize("damage", [truncate, pytest.param(flip_a_byte, marks=pytest.mark.slow)])
def test_a_damaged_latest_checkpoint_is_passed_over_for_the_one_before(damage, setup, tmp_path):
    output_dir = tmp_path / "out"
    assert run_script(*pretraining_args(setup, output_dir)).returncode == 0  # ckpt-3, ckpt-6
    damage(output_dir / "ckpt-6.data-00000-of-00001")
    (output_dir / "ckpt-9_temp").mkdir()  # what a save killed midway leaves

    result = run_script(*pretraining_args(setup, output_dir, num_train_steps=8))
    assert result.returncode == 0, result.stderr
    assert f"{output_dir / 'ckpt-6'} cannot be read: " in result.stderr
    assert "resuming from ckpt-3 instead" in result.stderr
    assert f"restored {output_dir / 'ckpt-3'} (step 3)" in result.stderr
    assert not (output_dir / "ckpt-9_temp").exists()
    assert summaries(output_dir / "train")["loss"].keys() >= {4, 5, 6, 7, 8}


def test_two_mirrored_replicas_give_the_losses_of_one_device(setup, tmp_path):
    runs = {}
    for strategy in ("one_device", "mirrored"):
        output_dir = tmp_path / strategy
        result = run_script(
            *pretraining_args(
                setup,
                output_dir,
                init_checkpoint=setup["init_checkpoint"],
                distribution_strategy=strategy,
                num_gpus=2,
                num_train_steps=4,
            )
        )
        assert result.returncode == 0, result.stderr
        runs[strategy] = summaries(output_dir / "train")
    assert "on 2 replica(s)" in result.stderr
    for tag in ("loss", "masked_lm_loss", "next_sentence_loss", "gradient_norm"):
        one, mirrored = runs["one_device"][tag], runs["mirrored"][tag]
        assert sorted(one) == [1, 2, 3, 4]
        np.testing.assert_allclose(
            [mirrored[s] for s in sorted(one)], [one[s] for s in sorted(one)], atol=1e-5
        )


def two_workers(setup, output_dir, **flags) -> str:
    """run_pretraining.py as two local workers (TF_CONFIG on free ports), to the end; the
    last worker's stderr."""
    logs = [Path(f"{output_dir}.worker_{i}.log") for i in range(2)]
    workers = start_workers(pretraining_args(setup, output_dir, **flags), logs)
    for worker, log in zip(workers, logs, strict=True):
        worker.wait(timeout=600)
        assert worker.returncode == 0, log.read_text()[-3000:]
    return logs[-1].read_text()


def test_multi_worker_mirrored_with_two_local_workers_writes_one_checkpoint(setup, tmp_path):
    # Started as docs/RELIABILITY.md starts a group on one machine: scripts/local_cluster.py.
    output_dir = tmp_path / "out"
    args = pretraining_args(setup, output_dir, num_train_steps=2, save_checkpoints_steps=2)
    result = run_script("scripts/local_cluster.py", "--num_workers=2", "--", *args, fresh=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[worker 0] " in result.stderr and "[worker 1] " in result.stderr
    assert "on 2 replica(s)" in result.stderr
    assert sorted(p.name for p in output_dir.glob("ckpt-*.index")) == ["ckpt-2.index"]
    assert (output_dir / "pretrained" / "bert_model.ckpt.index").exists()


def test_the_allocator_scripts_choose_on_a_cpu_changes_no_weight(setup, tmp_path):
    # bert_tf/cli.py picks TensorFlow's BFC allocator on a CPU for its speed alone: every
    # trained weight and optimizer slot is bit for bit what TensorFlow's default allocator gives.
    checkpoints = {}
    for bfc in ("true", "false"):
        output_dir = tmp_path / f"bfc_{bfc}"
        args = pretraining_args(setup, output_dir, init_checkpoint=setup["init_checkpoint"])
        result = run_script(*args, env={"TF_CPU_ALLOCATOR_USE_BFC": bfc}, fresh=True)
        assert result.returncode == 0, result.stderr
        checkpoints[bfc] = tf.train.load_checkpoint(str(output_dir / "ckpt-6"))
    names = sorted(checkpoints["true"].get_variable_to_shape_map())
    assert sorted(checkpoints["false"].get_variable_to_shape_map()) == names
    assert any("_trainable_variables/" in name for name in names)
    for name in names:
        a, b = (checkpoints[bfc].get_tensor(name) for bfc in ("true", "false"))
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.slow  # four runs of two workers
@pytest.mark.parametrize("files", [1, 2], ids=["data_sharded", "file_sharded"])
def test_two_workers_restarted_from_a_checkpoint_end_as_an_uninterrupted_run(
    files, setup, tmp_path
):
    # Two causes made them differ (issue 60): the dropout masks started again (the seed
    # generators were not saved), and with a file a worker each, every worker skipped the
    # records of all workers together.
    inputs = [tmp_path / f"data_{i}.tfrecord" for i in range(files)]
    for path in inputs:
        shutil.copy(setup["input_file"], path)
    with_dropout = tmp_path / "bert_config.json"
    with_dropout.write_text(json.dumps({**CONFIG, "hidden_dropout_prob": 0.1}))
    flags = dict(
        input_file=",".join(map(str, inputs)), bert_config_file=with_dropout,
        num_train_steps=20, save_checkpoints_steps=10, keep_checkpoint_max=5, resume_input=True,
    )  # fmt: skip
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    two_workers(setup, whole, **flags)
    resumed.mkdir()
    for path in whole.glob("ckpt-10.*"):
        shutil.copy(path, resumed / path.name)
    (resumed / "checkpoint").write_text('model_checkpoint_path: "ckpt-10"\n')
    two_workers(setup, resumed, **flags)
    a, b = (tf.train.load_checkpoint(str(out / "ckpt-20")) for out in (whole, resumed))
    weights = [n for n in a.get_variable_to_shape_map() if "_trainable_variables/" in n]
    assert weights
    for name in weights:
        np.testing.assert_allclose(b.get_tensor(name), a.get_tensor(name), atol=1e-5, err_msg=name)


def _no_files(setup, tmp_path):
    pattern = tmp_path / "nothing-*.tfrecord"
    return {"input_file": pattern}, [f"--input_file={pattern}", "no file matches"]


def _other_sequence_length(setup, tmp_path):
    return {"max_seq_length": 32}, [
        str(setup["input_file"]),
        "input_ids of length 64",
        "--max_seq_length=32",
    ]


def _other_prediction_count(setup, tmp_path):
    return {"max_predictions_per_seq": 20}, [
        "masked_lm_positions of length 10",
        "--max_predictions_per_seq=20",
    ]


def _checkpoint_of_another_config(setup, tmp_path):
    other = BertConfig(**dict(CONFIG, hidden_size=64, num_attention_heads=4))
    prefix = save_original_checkpoint(BertPretrainer(other), tmp_path / "other" / "bert_model.ckpt")
    return {"init_checkpoint": prefix}, ["bert/embeddings/word_embeddings", "[30522, 64]"]


def _truncated_init_checkpoint(setup, tmp_path):
    prefix = save_original_checkpoint(
        BertPretrainer(BertConfig(**CONFIG)), tmp_path / "init" / "bert_model.ckpt"
    )
    data = Path(f"{prefix}.data-00000-of-00001")
    data.write_bytes(data.read_bytes()[:1000])
    return {"init_checkpoint": prefix}, [prefix, "cannot be read", "truncated or damaged"]


def _not_records(setup, tmp_path):
    path = tmp_path / "text.tfrecord"
    path.write_text("not a record file\n" * 10)
    return {"input_file": path}, [str(path), "is not a TFRecord file"]


def _records_of_another_vocab(setup, tmp_path):
    config = tmp_path / "bert_config_vocab_1000.json"
    BertConfig(**dict(CONFIG, vocab_size=1000)).to_json_file(config)
    return {"bert_config_file": config}, [
        f"--input_file: {setup['input_file']} holds token id",
        f"the model's vocab_size is 1000 ({config})",
        "made with another vocab",
    ]


def _truncated_records(setup, tmp_path):
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(setup["input_file"].read_bytes()[:-100])
    return {"input_file": path}, [f"{path}: truncated TFRecord file: record"]


def _no_held_out_files(setup, tmp_path):
    pattern = tmp_path / "heldout-*.tfrecord"
    return {"do_eval": True, "eval_input_file": pattern}, [
        f"--eval_input_file={pattern}",
        "no file matches",
    ]


def _negative_kept_interval(setup, tmp_path):
    return {"keep_checkpoint_every_n_steps": -1}, ["--keep_checkpoint_every_n_steps=-1"]


def _batch_not_divisible(setup, tmp_path):
    return {"gradient_accumulation_steps": 3}, ["--train_batch_size=8", "divisible"]


def _diverging(setup, tmp_path):
    return {"learning_rate": 1e30, "num_warmup_steps": 0, "save_checkpoints_steps": 1}, [
        "the loss is nan at step 1",
        "last good checkpoint is",
        "ckpt-1",
    ]


def _more_warmup_than_steps(setup, tmp_path):
    return {"num_warmup_steps": 10}, [
        "--num_warmup_steps=10 is more than --num_train_steps=6",
        "would never reach --learning_rate",
    ]


def _eval_alone_without_a_model(setup, tmp_path):
    return {"do_train": False, "do_eval": True}, [
        f"--output_dir={tmp_path / 'out'} holds no checkpoint and no --init_checkpoint",
    ]


def _eval_alone_from_an_encoder(setup, tmp_path):
    prefix = save_original_checkpoint(
        BertEncoder(BertConfig(**CONFIG)), tmp_path / "encoder" / "bert_model.ckpt"
    )
    return {"do_train": False, "do_eval": True, "init_checkpoint": prefix}, [
        f"--init_checkpoint={prefix} has no BertPretrainer head",
        "without --do_train the head would be random",
    ]


@pytest.mark.parametrize(
    "bad_input",
    [
        _more_warmup_than_steps,
        _eval_alone_without_a_model,
        _eval_alone_from_an_encoder,
        _no_files,
        _other_sequence_length,
        _other_prediction_count,
        _checkpoint_of_another_config,
        _truncated_init_checkpoint,
        _not_records,
        _records_of_another_vocab,
        _truncated_records,
        _no_held_out_files,
        _negative_kept_interval,
        _batch_not_divisible,
        _diverging,
    ],
)
def test_bad_input_is_one_error_line(bad_input, setup, tmp_path):
    flags, fragments = bad_input(setup, tmp_path)
    result = run_script(*pretraining_args(setup, tmp_path / "out", **flags))
    last = error_line(result, "run_pretraining.py")
    for fragment in fragments:
        assert fragment in last
    assert not (tmp_path / "out" / "pretrained").exists()


def test_a_disk_full_at_a_checkpoint_is_one_line_and_the_previous_checkpoint_stays(
    setup, tmp_path, mounted_disk
):
    output_dir = mounted_disk("20m")  # room for one checkpoint of the tiny model, not two
    result = run_script(*pretraining_args(setup, output_dir))
    last = error_line(result, "run_pretraining.py")
    assert f"{output_dir}/ckpt-6: cannot save the checkpoint (" in last
    assert f"the previous one, {output_dir}/ckpt-3, is kept" in last
    assert sorted(p.name for p in output_dir.glob("ckpt-*")) == [
        "ckpt-3.data-00000-of-00001",
        "ckpt-3.index",
    ]
    assert not (output_dir / "pretrained").exists()


def test_a_read_only_output_dir_is_one_line_before_training(setup, tmp_path, mounted_disk):
    output_dir = mounted_disk("64k", read_only=True)
    last = error_line(run_script(*pretraining_args(setup, output_dir)), "run_pretraining.py")
    assert f"--output_dir: cannot write in {output_dir} (Read-only file system)" in last
