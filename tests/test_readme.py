"""The examples run as written: after README.md's command 1 (the quickstart), every `bash` block
of README.md and of the pages under docs/ that it leads to, page after page in the order of
`PAGES` (the order the sections had when they were one README), in a fresh clone of the
committed repository (slow). Order matters: a block sees what the blocks before it exported
(docs/examples.md's `BERT_BASE_DIR`, docs/squad.md's `SQUAD_DIR`) and wrote. A block that
cannot run here is marked in its page, on the line before it:
`<!-- not run by tests/test_readme.py: the reason -->`.

The fast checks: every flag of a documented command is one its script defines (a typo fails here
in a second, not after the quickstart), every command that takes a pre-trained model starts
from its weights, README.md stays a way in (at most `README_MAX_LINES` lines), and its Python
example is docs/python_api.md's, which tests/test_keras_api.py runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, SCRIPT_ENV

# README.md, then the pages with the examples, in the order their sections had in the README:
# the blocks run in this order.
PAGES = [
    "README.md",
    "docs/examples.md",
    "docs/pretraining.md",
    "docs/several_machines.md",
    "docs/reproducing_the_paper.md",
    "docs/glue.md",
    "docs/squad.md",
    "docs/continued_pretraining.md",
    "docs/ner.md",
    "docs/swag.md",
    "docs/adding_a_task.md",
    "docs/serving.md",
    "docs/checkpoints.md",
    "docs/features.md",
]
README_MAX_LINES = 220
SKIP_MARKER = re.compile(r"^<!-- not run by tests/test_readme\.py: (.+) -->$", re.M)
# Every flag of the top-level scripts, as tests/test_flags.py checks them against the scripts.
RECORDED_FLAGS = json.loads((FIXTURES / "flags" / "bert_tf.json").read_text())
# Flags that scripts/*.py define by hand (absl or argparse), read from their source.
# A flag as a script defines it: an absl DEFINE, or a field of an @options class.
DEFINED_FLAG = re.compile(
    r"""(?:DEFINE_\w+\(\s*["'](\w+)["']|^    (\w+): [^=\n]+ = (?:option|redefault)\("""
    r"""|add_argument\(\s*["']--(\w+)["'])""",  # absl, our options, argparse (benchmarks/)
    re.MULTILINE,
)
# A module of the script's own folder that it imports (its options' base classes).
SIBLING_IMPORT = re.compile(r"^from (\w+) import", re.MULTILINE)
# The commands that load a pre-trained model: without --init_checkpoint they silently train
# from random weights.
TAKES_A_MODEL = {
    "run_pretraining",
    "run_classifier",
    "run_squad",
    "run_ner",
    "run_swag",
    "extract_features",
}
# What the quickstart leaves behind, to reuse instead of running it again (minutes): set it to
# an earlier run's output folder (scripts/quickstart.sh's OUT).
QUICKSTART_OUT = "BERT_TF_README_QUICKSTART_OUT"


@dataclasses.dataclass
class Block:
    page: str  # "docs/glue.md"
    line: int  # the page's line of the block's opening fence
    text: str
    skip: str | None  # the page's reason not to run it

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


@dataclasses.dataclass
class Command:
    script: str  # "run_squad.py", "scripts/swag_sample.py"
    flags: list[str]  # the names, without "--"
    where: str  # "docs/glue.md line 12", its block's


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The ```bash blocks of a Markdown text, each with the skip marker on its line before."""
    lines = text.splitlines()
    blocks = []
    start = None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```bash":
            start = number
        elif start is not None and line.strip() == "```":
            before = lines[start - 2].strip() if start > 1 else ""
            marker = SKIP_MARKER.fullmatch(before)
            body = "\n".join(lines[start : number - 1])
            blocks.append(Block(page, start, body, marker and marker[1]))
            start = None
    return blocks


def block_commands(block: Block) -> list[Command]:
    """The `python SCRIPT.py --flag...` commands of a block (continued lines joined)."""
    lines = block.text.replace("\\\n", " ").splitlines()
    commands = []
    pending = ""
    for line in lines:
        pending = f"{pending}\n{line}" if pending else line
        lexer = shlex.shlex(pending, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # a quote that a later line closes
            continue
        pending = ""
        for i, token in enumerate(tokens[:-1]):
            # (After a launcher's "--": the command each of its workers runs.)
            if token in ("python", "python3", "--") and tokens[i + 1].endswith(".py"):
                flags = []
                for arg in tokens[i + 2 :]:
                    if arg == "--":  # the launcher's flags end
                        break
                    if not arg.startswith("-"):
                        if set(arg) <= set("&|;<>()"):
                            break
                        continue
                    flags.append(arg.lstrip("-").split("=", 1)[0])
                commands.append(Command(tokens[i + 1], flags, block.where))
    return commands


def script_flags(script: str) -> set[str]:
    """The flags a script defines (absl booleans also as `no<name>`)."""
    name = Path(script).stem
    if Path(script).parent == Path(".") and name in RECORDED_FLAGS:
        recorded = RECORDED_FLAGS[name]
        negated = {f"no{flag}" for flag, spec in recorded.items() if spec[0] == "bool"}
        return set(recorded) | negated
    source = REPO / script
    assert source.is_file(), f"the examples run {script}, which does not exist"
    text = source.read_text()
    for module in SIBLING_IMPORT.findall(text):
        sibling = source.parent / f"{module}.py"
        text += sibling.read_text() if sibling.is_file() else ""
    found = {a or b or c for a, b, c in DEFINED_FLAG.findall(text)}
    return found | {f"no{flag}" for flag in found}  # absl booleans


def pages_blocks(root: Path) -> list[Block]:
    """The blocks of every page of PAGES under `root`, in PAGES' order."""
    return [block for page in PAGES for block in readme_blocks((root / page).read_text(), page)]


README_BLOCKS = pages_blocks(REPO)
README_COMMANDS = [command for block in README_BLOCKS for command in block_commands(block)]


def test_the_readme_is_a_way_in():
    lines = len((REPO / "README.md").read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move a section to docs/"


def test_the_pages_are_the_readmes_links_and_exist():
    readme = (REPO / "README.md").read_text()
    for page in PAGES[1:]:
        assert (REPO / page).is_file(), page
        assert f"]({page})" in readme or f"]({page}#" in readme, f"README.md links no {page}"


def test_the_first_block_is_the_quickstart():
    assert README_BLOCKS[0].page == "README.md"
    assert "bash scripts/quickstart.sh" in README_BLOCKS[0].text, "command 1 is the quickstart"


def test_the_readmes_python_example_is_one_that_python_api_md_runs():
    examples = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    python_api = (REPO / "docs" / "python_api.md").read_text()
    assert examples and all(f"```python\n{example}```" in python_api for example in examples)


def test_the_readme_runs_the_scripts_it_describes():
    scripts = {command.script for command in README_COMMANDS}
    assert {f"{name}.py" for name in TAKES_A_MODEL} | {"create_pretraining_data.py"} <= scripts


@pytest.mark.parametrize(
    "command", README_COMMANDS, ids=[f"{c.script}@{c.where}" for c in README_COMMANDS]
)
def test_every_flag_of_a_readme_command_exists(command):
    unknown = set(command.flags) - script_flags(command.script)
    assert not unknown, f"{command.where}: {command.script} has no --{unknown}"


@pytest.mark.parametrize(
    "command",
    [c for c in README_COMMANDS if Path(c.script).stem in TAKES_A_MODEL],
    ids=lambda c: f"{c.script}@{c.where}",
)
def test_every_readme_command_that_takes_a_model_starts_from_its_weights(command):
    assert "init_checkpoint" in command.flags, command.where


@pytest.mark.parametrize("page", PAGES)
def test_skip_markers_stand_just_before_a_bash_block(page):
    markers = SKIP_MARKER.findall((REPO / page).read_text())
    skipped = [block.skip for block in README_BLOCKS if block.page == page and block.skip]
    assert sorted(markers) == sorted(skipped)


def test_every_page_with_a_skip_marker_is_one_the_test_runs():
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    marked = {str(page.relative_to(REPO)) for page in pages if SKIP_MARKER.search(page.read_text())}
    assert marked <= set(PAGES)


@pytest.mark.slow
def test_the_readme_examples_run_as_written(tmp_path):
    """Command 1's quickstart, then the blocks of PAGES in order, each in its own `bash` with
    `set -euo pipefail` and the variables the blocks before it exported. Paths under /tmp/ are
    moved into tmp_path (the blocks' outputs would otherwise meet an earlier run's, which a
    rerun resumes from)."""
    clone = tmp_path / "bert_tf"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head], check=True)
    env = {**SCRIPT_ENV, "PYTHONPATH": str(clone)}  # the clone's bert_tf, as `pip install -e`
    blocks = pages_blocks(clone)  # the clone's pages: README.md, then docs/ in PAGES' order
    assert "bash scripts/quickstart.sh" in blocks[0].text, "command 1 is the quickstart"

    if os.environ.get(QUICKSTART_OUT):
        (clone / "output").mkdir()
        (clone / "output" / "quickstart").symlink_to(Path(os.environ[QUICKSTART_OUT]).resolve())
    else:
        run_bash("bash scripts/quickstart.sh", clone, env, "command 1 (the quickstart)", 3600)

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    exports = tmp_path / "exports.sh"
    exports.write_text("")
    for block in blocks:
        if block.skip:
            continue
        text = block.text.replace("/tmp/", f"{scratch}/")
        script = f"source {exports}\nset -euo pipefail\n{text}\nexport -p >{exports}\n"
        run_bash(script, clone, env, block.where, 1800)


def run_bash(script: str, cwd: Path, env: dict, name: str, timeout: float) -> None:
    """Runs `script` with bash in `cwd`; fails with `name` and the output's tail."""
    start = time.monotonic()
    result = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    print(f"{name}: {time.monotonic() - start:.0f} s")
    assert result.returncode == 0, (
        f"{name} failed (exit {result.returncode}):\n{script}\n"
        + result.stdout[-2000:]
        + result.stderr[-4000:]
    )
