"""Whether a model lower-cases its text, decided once, from evidence (bert_tf.text.casing):
the model's files, then the released model's name, then its vocab, then the flag, then True.
A model this project pre-trains on cased text has none of the first two: its vocab says it is
cased, and before issue 93 it was fine-tuned and converted as lower-cased without a word."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import CASED_VOCAB, UNCASED_VOCAB, run_script, succeeded, write_tsv

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.model_io.convert import convert_checkpoint
from bert_tf.model_io.source import ModelSource
from bert_tf.modeling import BertPretrainer, ConfigModel
from bert_tf.text.casing import CASED_VOCAB_SHARE, decide_do_lower_case, vocab_is_cased

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = "the company said profits rose in third quarter shares fell after announcement".split()


def cased_vocab(path) -> str:
    """A vocab learned from cased text: each word lower-cased and capitalised, as a books
    corpus's vocab holds them."""
    pieces = SPECIAL + [w for word in WORDS for w in (word, word.capitalize())] + [".", ","]
    path.write_text("\n".join(pieces) + "\n")
    return str(path)


def own_pretrained_model(folder) -> str:
    """A model directory as run_pretraining.py exports one: bert_config.json, bert_model.ckpt
    and a cased vocab.txt, under a name the original's rule does not know, no casing file."""
    folder.mkdir(parents=True)
    vocab = cased_vocab(folder / "vocab.txt")
    config = BertConfig(
        vocab_size=len(open(vocab).read().split()), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    config.to_json_file(str(folder / "bert_config.json"))
    save_original_checkpoint(BertPretrainer(config), str(folder / "bert_model.ckpt"))
    return str(folder)


def vocab_with_upper_share(path, share: float) -> str:
    """A vocab of 1,000 word pieces, `share` of them with an upper-case letter."""
    upper = round(1000 * share)
    pieces = [f"Word{i}" for i in range(upper)] + [f"word{i}" for i in range(1000 - upper)]
    path.write_text("\n".join(SPECIAL + [f"[unused{i}]" for i in range(50)] + pieces) + "\n")
    return str(path)


def test_a_vocab_is_cased_when_over_one_percent_of_its_word_pieces_hold_an_upper_case_letter(
    tmp_path,
):
    assert CASED_VOCAB_SHARE == 0.01
    assert vocab_is_cased(str(CASED_VOCAB))  # the original's cased test vocab
    assert not vocab_is_cased(str(UNCASED_VOCAB))  # Google's uncased vocab (2 of 29,523)
    # Both sides of the rule; the special tokens ([CLS], [unused0]) are not word pieces.
    assert vocab_is_cased(vocab_with_upper_share(tmp_path / "a.txt", 0.011))
    assert not vocab_is_cased(vocab_with_upper_share(tmp_path / "b.txt", 0.01))


def test_the_models_files_or_name_decide_and_a_flag_against_them_is_an_error(tmp_path):
    vocab = cased_vocab(tmp_path / "vocab.txt")
    # The files say lower-cased: they win over a cased-looking vocab, and the flag must agree.
    assert decide_do_lower_case(
        None, "--init_checkpoint=m", True, "its task_model.json says", vocab
    )
    with pytest.raises(InputError, match=r"--do_lower_case=False does not match --init_checkp"):
        decide_do_lower_case(False, "--init_checkpoint=m", True, "its task_model.json says")


def test_a_cased_vocab_decides_cased_and_an_explicit_true_wins_with_a_warning(tmp_path, caplog):
    vocab = cased_vocab(tmp_path / "vocab.txt")
    assert decide_do_lower_case(None, vocab_file=vocab) is False
    assert decide_do_lower_case(False, vocab_file=vocab) is False
    with caplog.at_level(logging.WARNING, "bert_tf"):
        assert decide_do_lower_case(True, vocab_file=vocab) is True  # the original accepts it
    assert "--do_lower_case=True" in caplog.text and vocab in caplog.text


def test_a_vocab_without_case_leaves_it_to_the_flag_then_true(tmp_path, caplog):
    # No upper case says nothing: a Chinese vocab has no case; lower-casing strips accents too.
    uncased = str(UNCASED_VOCAB)
    assert decide_do_lower_case(False, vocab_file=uncased) is False
    with caplog.at_level(logging.INFO, "bert_tf"):
        assert decide_do_lower_case(None, vocab_file=uncased) is True
    assert "do_lower_case=True assumed" in caplog.text


def test_our_own_cased_model_converts_to_hugging_face_cased(tmp_path):
    model = own_pretrained_model(tmp_path / "books_L-4_H-128" / "pretrained")
    assert ModelSource(model).do_lower_case() is False
    convert_checkpoint(model, str(tmp_path / "hf"), ConfigModel)
    tokenizer_config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer_config["do_lower_case"] is False


def fine_tune(model: str, data, output_dir, *flags: str):
    return run_script(
        "run_classifier.py", "--task_name=MRPC", f"--data_dir={data}", "--do_train",
        f"--vocab_file={model}/vocab.txt", f"--bert_config_file={model}/bert_config.json",
        f"--init_checkpoint={model}/bert_model.ckpt", f"--output_dir={output_dir}",
        "--max_seq_length=16", "--train_batch_size=4", "--num_train_epochs=1", *flags,
    )  # fmt: skip


def test_our_own_cased_model_fine_tunes_cased_unless_told_otherwise_with_a_warning(tmp_path):
    model = own_pretrained_model(tmp_path / "books_L-4_H-128" / "pretrained")
    rows = [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]]
    rows += [[str(i % 2), str(i), str(i), "The company said profits rose.", "Shares fell."]
             for i in range(8)]  # fmt: skip
    write_tsv(tmp_path / "MRPC" / "train.tsv", rows)

    succeeded(fine_tune(model, tmp_path / "MRPC", tmp_path / "asked"))
    assert (
        json.loads((tmp_path / "asked" / "task_model.json").read_text())["do_lower_case"] is False
    )

    told = succeeded(fine_tune(model, tmp_path / "MRPC", tmp_path / "told", "--do_lower_case=true"))
    assert json.loads((tmp_path / "told" / "task_model.json").read_text())["do_lower_case"] is True
    assert "--do_lower_case=True lower-cases the text, but" in told.stderr
    assert f"{model}/vocab.txt is a cased vocab" in told.stderr
