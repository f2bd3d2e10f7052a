"""Every script's flags: the original's names, types and defaults where the original has the
flag (tests/fixtures/flags/original.json, google-research/bert's as ../shared/SPEC.md 1.1 lists
them), and every flag of ours as recorded (tests/fixtures/flags/bert_tf.json), whether it is
made from an options dataclass or written by hand."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES, REPO, run_script, succeeded

FLAGS = FIXTURES / "flags"
ORIGINAL = json.loads((FLAGS / "original.json").read_text())
OURS = json.loads((FLAGS / "bert_tf.json").read_text())
SPEC = REPO.parent / "shared" / "SPEC.md"

# Imports each script (its flags are defined at import) and prints its flags as
# {script: {name: [type, default] or ["enum", default, choices]}}; each script's flags are
# removed before the next one is imported.
DUMP = """
import importlib, json, sys
from absl import flags
import tensorflow  # noqa: F401  (whatever TensorFlow defines is not a script's)
scripts = {}
for script in sys.argv[1:]:
    before = set(flags.FLAGS)
    importlib.import_module(script)
    ours = {}
    for name in sorted(set(flags.FLAGS) - before):
        flag = flags.FLAGS[name]
        kind = flag.flag_type().replace("string enum", "enum")
        ours[name] = [kind, flag.default] + (
            [list(flag.parser.enum_values)] if kind == "enum" else []
        )
        delattr(flags.FLAGS, name)
    scripts[script] = ours
print(json.dumps(scripts))
"""


@pytest.fixture(scope="module")
def script_flags() -> dict:
    result = succeeded(run_script("-c", DUMP, *OURS))
    return json.loads(result.stdout.splitlines()[-1])


# The one default that departs from the original's, by design (issue 93): where a script reads a
# model, --do_lower_case unset asks the model (its files, its released name, its vocab) and only
# then takes the original's True (tests/test_casing.py), so that a cased model is not lower-cased
# silently; given, it means what the original's does.
ASKS_THE_MODEL = {"run_classifier", "run_squad", "run_ner", "run_swag", "extract_features"}


@pytest.mark.parametrize("script", list(ORIGINAL))
def test_the_originals_flags_keep_their_names_types_and_defaults(script, script_flags):
    ours = {name: flag[:2] for name, flag in script_flags[script].items()}
    for name, (kind, default) in ORIGINAL[script].items():
        assert name in ours, f"{script}.py lacks the original's --{name}"
        if name == "do_lower_case" and script in ASKS_THE_MODEL:
            default = None
        assert ours[name] == [kind, default], f"{script}.py --{name}"


@pytest.mark.parametrize("script", list(OURS))
def test_every_flag_is_as_recorded(script, script_flags):
    assert script_flags[script] == OURS[script]


def test_the_recorded_original_flags_are_the_specs():
    if not SPEC.is_file():
        pytest.skip("../shared/SPEC.md is absent")
    assert parse_spec_flags(SPEC.read_text()) == ORIGINAL


TPU_FLAGS = ["use_tpu", "tpu_name", "tpu_zone", "gcp_project", "master", "num_tpu_cores"]


def parse_spec_flags(text: str) -> dict:
    """SPEC.md 1.1's tables: script -> flag -> [type, default] ("as above" and "TPU flags"
    rows take run_pretraining.py's)."""
    section = text[text.index("### 1.1") : text.index("### 1.2")]
    parts = re.split(r"^#### `([a-z_]+)\.py`", section, flags=re.M)
    result: dict = {}
    for script, body in zip(parts[1::2], parts[2::2], strict=True):
        flags = {}
        for line in body.splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not line.startswith("| ") or cells[0] == "flag" or len(cells) < 3:
                continue
            names = re.findall(r"`([a-z_0-9]+)`", cells[0])
            names = names or (TPU_FLAGS if cells[0] == "TPU flags" else [])
            if cells[2] == "as above":
                flags.update({name: result["run_pretraining"][name] for name in names})
                continue
            defaults = re.findall(r"`([^`]*)`", cells[2])
            defaults = defaults * len(names) if len(defaults) == 1 else defaults
            for name, default in zip(names, defaults, strict=True):
                flags[name] = [cells[1], _value(default, cells[1])]
        result[script] = flags
    return result


def _value(text: str, kind: str):
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith('"'):
        return json.loads(text)
    return float(text) if kind == "float" else int(text)
