"""bert_tf/serving.py's guard on --export_dir: an export replaces a new or empty folder or an
earlier export of ours, and refuses every other folder before any work, so that nothing a user
keeps there is deleted. (The signatures are tested with each task: test_run_classifier.py,
test_squad_serving.py, test_ner_serving.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from bert_tf.errors import InputError
from bert_tf.serving import METADATA_FILE, check_export_dir


def earlier_export(folder: Path) -> Path:
    (folder / METADATA_FILE).parent.mkdir(parents=True)
    (folder / METADATA_FILE).write_text("{}")
    (folder / "saved_model.pb").write_bytes(b"")
    return folder


def test_a_new_or_empty_folder_or_an_earlier_export_may_be_replaced(tmp_path: Path):
    check_export_dir(str(tmp_path / "new" / "export"))
    (tmp_path / "empty").mkdir()
    check_export_dir(str(tmp_path / "empty"))
    check_export_dir(str(earlier_export(tmp_path / "export")), str(tmp_path / "out"))
    check_export_dir(str(tmp_path / "out" / "export"), str(tmp_path / "out"))  # inside: its own


@pytest.mark.parametrize(
    "layout, message",
    [
        ("user files", "holds notes.txt, photos, not a SavedModel exported here; expected a new "
                       "or empty folder, or an earlier export (which is replaced)"),
        ("a SavedModel of someone else", "holds saved_model.pb, variables, not a SavedModel"),
        ("the output_dir", "holds --output_dir="),
        ("the output_dir's parent", "holds --output_dir="),
        ("a file", "is a file; expected a folder"),
    ],
)  # fmt: skip
def test_any_other_folder_is_refused_naming_what_it_holds(layout, message, tmp_path: Path):
    folder = tmp_path / "target"
    output_dir = tmp_path / "out"
    if layout == "user files":
        (folder / "photos").mkdir(parents=True)
        (folder / "notes.txt").write_text("mine")
    elif layout == "a SavedModel of someone else":
        (folder / "variables").mkdir(parents=True)
        (folder / "saved_model.pb").write_bytes(b"")
    elif layout == "the output_dir":
        folder = output_dir
    elif layout == "the output_dir's parent":
        folder = tmp_path
    else:
        folder.write_text("a file")
    with pytest.raises(InputError) as error:
        check_export_dir(str(folder), str(output_dir))
    assert str(error.value).startswith(f"--export_dir={folder}: ")
    assert message in str(error.value)
