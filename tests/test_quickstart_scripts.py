"""The pre-training demo's scripts: scripts/fill_mask.py, scripts/make_bert_config.py, the shell
scripts of scripts/ and scripts/paper/.

fill_mask gives, for each [MASK], the top_k tokens of the masked-LM head, most probable first,
whatever else is in the batch; make_bert_config writes the paper's sizes; every shell script
parses (the quickstart itself takes minutes and is run by hand, not here); the paper's two-phase
recipe runs end to end with its steps scaled down (slow).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
from conftest import (
    REPO,
    SAMPLE_DATA,
    SCRIPT_ENV,
    error_line,
    run_script,
    succeeded,
    tiny_config_dict,
)

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tokenization import FullTokenizer

SHELL_SCRIPTS = sorted((REPO / "scripts").glob("*.sh")) + sorted(
    (REPO / "scripts" / "paper").glob("*.sh")
)
WORDS = ["return", "the", "value", "of", "a", "list", "object", "given", "module", "."]


def _load_script(name: str):
    """scripts/ is not a package: load the script as a module, once (its flags are global)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fill_mask_script = _load_script("fill_mask")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> FullTokenizer:
    vocab_file = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    vocab_file.write_text(
        "".join(f"{t}\n" for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])
    )
    return FullTokenizer(str(vocab_file), do_lower_case=True)


@pytest.fixture(scope="module")
def model(tokenizer: FullTokenizer) -> BertPretrainer:
    keras.utils.set_random_seed(7)
    config = BertConfig.from_dict(tiny_config_dict(vocab_size=len(tokenizer.vocab)))
    return BertPretrainer(config)


def test_fill_mask_gives_top_k_tokens_per_mask_most_probable_first(model, tokenizer) -> None:
    text = "Return the [MASK] of the given object.|Return a [MASK] of [MASK] module."
    predictions = fill_mask_script.fill_mask(model, tokenizer, text, top_k=4)

    assert len(predictions) == 3  # one list per [MASK], sentence by sentence
    for mask in predictions:
        tokens = [token for token, _ in mask]
        probabilities = [probability for _, probability in mask]
        assert len(tokens) == 4 and len(set(tokens)) == 4
        assert set(tokens) <= set(tokenizer.vocab)
        assert probabilities == sorted(probabilities, reverse=True)
        assert all(p > 0 for p in probabilities) and sum(probabilities) <= 1 + 1e-6


def test_fill_mask_predictions_are_the_masked_lm_heads(model, tokenizer) -> None:
    # [CLS] return the [MASK] . [SEP]: the head's distribution at position 3, in full.
    ids = tokenizer.convert_tokens_to_ids(["[CLS]", "return", "the", "[MASK]", ".", "[SEP]"])
    outputs = model(
        {
            "input_ids": np.array([ids], "int32"),
            "input_mask": np.ones((1, len(ids)), "int32"),
            "segment_ids": np.zeros((1, len(ids)), "int32"),
            "masked_lm_positions": np.array([[3]], "int32"),
        },
        training=False,
    )
    probabilities = np.exp(np.asarray(outputs["mlm_log_probs"])[0, 0])
    vocab_size = len(tokenizer.vocab)

    [mask] = fill_mask_script.fill_mask(model, tokenizer, "return the [MASK].", top_k=vocab_size)

    expected = np.argsort(-probabilities, kind="stable")
    assert [token for token, _ in mask] == tokenizer.convert_ids_to_tokens(expected.tolist())
    np.testing.assert_allclose([p for _, p in mask], probabilities[expected], rtol=1e-5)
    assert sum(p for _, p in mask) == pytest.approx(1.0, abs=1e-5)


def test_fill_mask_does_not_depend_on_the_other_sentences_of_the_batch(model, tokenizer) -> None:
    # The shorter sentence is padded next to the longer one; padding is masked out.
    alone = fill_mask_script.fill_mask(model, tokenizer, "the [MASK] .", top_k=3)
    batched = fill_mask_script.fill_mask(
        model, tokenizer, "the [MASK] .|return a list of the value of the given object [MASK]"
    )
    assert [t for t, _ in batched[0][:3]] == [t for t, _ in alone[0]]
    np.testing.assert_allclose([p for _, p in batched[0][:3]], [p for _, p in alone[0]], 1e-5)


def test_fill_mask_keeps_mask_whole_and_wants_one_per_sentence(model, tokenizer) -> None:
    assert fill_mask_script.split_sentences(" a [MASK] b | [MASK] ") == ["a [MASK] b", "[MASK]"]
    with pytest.raises(InputError, match="no \\[MASK\\] in the sentence 'no mask here'"):
        fill_mask_script.fill_mask(model, tokenizer, "the [MASK].|no mask here")
    with pytest.raises(InputError, match="top_k"):
        fill_mask_script.fill_mask(model, tokenizer, "the [MASK].", top_k=0)


def test_fill_mask_script_prints_one_line_per_mask(tmp_path: Path, model, tokenizer) -> None:
    from bert_tf.model_io.checkpoints import save_original_checkpoint

    save_original_checkpoint(model, tmp_path / "bert_model.ckpt")
    model.config.to_json_file(tmp_path / "bert_config.json")
    (tmp_path / "vocab.txt").write_text(
        "".join(f"{t}\n" for t in sorted(tokenizer.vocab, key=tokenizer.vocab.get))
    )
    result = run_script(
        "scripts/fill_mask.py",
        f"--model_dir={tmp_path}",
        "--text=Return the [MASK] of the [MASK].|A [MASK] module.",
        "--top_k=2",
        fresh=True,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("Return the [MASK] of the [MASK]. ([MASK] 1 of 2) -> ")
    assert lines[1].startswith("Return the [MASK] of the [MASK]. ([MASK] 2 of 2) -> ")
    assert lines[2].startswith("A [MASK] module. -> ")
    assert all(len(line.split(" -> ")[1].split("  ")) == 2 for line in lines)


def test_fill_mask_reads_any_model_directory_with_the_masked_lm_head(
    tmp_path: Path, model, tokenizer
) -> None:
    from bert_tf.model_io.checkpoints import save_original_checkpoint
    from bert_tf.model_io.saving import HF, save_model_directory

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{t}\n" for t in sorted(tokenizer.vocab, key=tokenizer.vocab.get)))
    hf = tmp_path / "hf"
    hf.mkdir()
    save_model_directory(str(hf), model, str(vocab), True, format=HF)
    loaded, _ = fill_mask_script.load_model_dir(str(hf), do_lower_case=True)
    text = "the [MASK] ."
    [got] = fill_mask_script.fill_mask(loaded, tokenizer, text)
    [expected] = fill_mask_script.fill_mask(model, tokenizer, text)
    assert [token for token, _ in got] == [token for token, _ in expected]
    np.testing.assert_allclose([p for _, p in got], [p for _, p in expected], rtol=1e-5)
    # A released model without the cls/ heads: one line, not a random head's guesses.
    encoder_only = tmp_path / "encoder"
    encoder_only.mkdir()
    save_original_checkpoint(model.encoder, encoder_only / "bert_model.ckpt")
    model.config.to_json_file(encoder_only / "bert_config.json")
    with pytest.raises(InputError, match=r"bert_model.ckpt: has no weights for the BertPretrainer"):
        fill_mask_script.load_model_dir(str(encoder_only), do_lower_case=True)


def test_make_bert_config_writes_the_papers_sizes(tmp_path: Path) -> None:
    expected = {
        "base": (12, 768, 12, 3072),
        "large": (24, 1024, 16, 4096),
        "tiny": (2, 128, 2, 512),
        # Paper Table 6's shapes, named as the released models are.
        "L-3_H-768_A-12": (3, 768, 12, 3072),
        "L-6_H-768_A-3": (6, 768, 3, 3072),
        "L-24_H-1024_A-16": (24, 1024, 16, 4096),
    }
    for size, (layers, hidden, heads, intermediate) in expected.items():
        output_file = tmp_path / size / "bert_config.json"
        result = run_script(
            "scripts/make_bert_config.py",
            f"--size={size}",
            f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
            f"--output_file={output_file}",
            fresh=True,
        )
        assert result.returncode == 0, result.stderr
        config = json.loads(output_file.read_text())
        assert config == {
            "attention_probs_dropout_prob": 0.1,
            "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1,
            "hidden_size": hidden,
            "initializer_range": 0.02,
            "intermediate_size": intermediate,
            "max_position_embeddings": 512,
            "num_attention_heads": heads,
            "num_hidden_layers": layers,
            "type_vocab_size": 2,
            "vocab_size": 30522,
        }


@pytest.mark.parametrize(
    "size, message",
    [
        ("L6", "--size=L6: expected one of tiny, mini, small, medium, base, large or L-<layers>"),
        ("L-6_H-768_A-5", "--size=L-6_H-768_A-5: BertConfig: hidden_size=768 is not a multiple"),
    ],
)
def test_make_bert_config_names_a_size_it_cannot_make(size, message, tmp_path: Path) -> None:
    result = run_script(
        "scripts/make_bert_config.py",
        f"--size={size}",
        f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
        f"--output_file={tmp_path / 'bert_config.json'}",
    )
    assert message in error_line(result, "make_bert_config.py")
    assert not (tmp_path / "bert_config.json").exists()


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda path: path.name)
def test_shell_script_parses(script: Path) -> None:
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_paper_script_is_checked() -> None:
    names = {path.name for path in SHELL_SCRIPTS}
    assert {"quickstart.sh", "pretrain_bert.sh", "pretrain_tiny.sh"} <= names


@pytest.mark.slow
def test_paper_recipe_runs_both_phases_with_its_steps_scaled_down(tmp_path: Path) -> None:
    data = tmp_path / "data"
    subprocess.run(
        [
            "bash",
            "scripts/create_pretraining_data_two_phases.sh",
            str(SAMPLE_DATA / "sample_text.txt"),
            str(data),
        ],
        cwd=REPO,
        env=SCRIPT_ENV,
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = tmp_path / "out"
    settings = {
        "DATA": str(data),
        "OUT": str(out),
        "PLATFORM": "cpu",
        "TRAIN_BATCH_SIZE": "4",
        "EVAL_BATCH_SIZE": "4",
        "PHASE1_STEPS": "3",
        "PHASE1_WARMUP": "1",
        "PHASE2_STEPS": "2",
        "PHASE2_WARMUP": "1",
        "LOG_STEPS": "1",
    }
    result = succeeded(
        run_script(
            "scripts/paper/pretrain_bert.sh", "tiny", env=settings, timeout=600, program="bash"
        )
    )
    assert json.loads((out / "bert_config.json").read_text())["num_hidden_layers"] == 2
    for phase, steps in (("phase1", 3), ("phase2", 2)):
        results = (out / phase / "eval_results.txt").read_text()
        assert f"global_step = {steps}\n" in results
        assert (out / phase / "pretrained" / "bert_model.ckpt.index").is_file()
        assert (out / phase / "pretrained" / "vocab.txt").is_file()
    # Phase 2 starts from phase 1's model, in the original format.
    assert "initializing from " + str(out / "phase1" / "pretrained") in result.stderr
