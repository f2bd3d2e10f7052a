"""What every absl script shares (bert_tf/cli.py): `--help` prints the usage example as the
docstring writes it (its backslash-continued lines kept), lists every flag the script takes and
exits 0; a healthy run leaves out TensorFlow's C++ INFO lines unless the user asks for them."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys

import pytest
from conftest import (
    FIXTURES,
    REPO,
    SAMPLE_DATA,
    SCRIPT_ENV,
    error_line,
    run_script,
    succeeded,
    take_ctrl_c,
)

# Every script that takes flags: the top-level ones, those of scripts/ and scripts/paper/ (all
# declare their options with @options and run through bert_tf.cli).
SCRIPTS = [
    "run_pretraining.py", "run_classifier.py", "run_squad.py", "run_ner.py", "run_swag.py",
    "extract_features.py", "create_pretraining_data.py", "create_vocab.py", "prepare_corpus.py",
    "scripts/fill_mask.py", "scripts/make_bert_config.py", "scripts/make_random_bert.py",
    "scripts/stdlib_corpus.py", "scripts/convert_checkpoint.py", "scripts/conll_sample.py",
    "scripts/squad_sample.py", "scripts/swag_sample.py", "scripts/paper/reproduce.py",
    "scripts/paper/glue_search.py", "scripts/paper/plot_reproduction.py",
    "scripts/paper/unigram_baseline.py", "scripts/paper/bow_baseline.py",
    "scripts/paper/doc_tables.py",
]  # fmt: skip
# Every flag of the top-level scripts, as recorded (see test_flags.py).
RECORDED_FLAGS = json.loads((FIXTURES / "flags" / "bert_tf.json").read_text())
# The training scripts' flags from bert_tf/training/options.py: defined in bert_tf/cli.py, not
# in the script.
TRAINING_SCRIPTS = ["run_pretraining", "run_classifier", "run_squad", "run_ner", "run_swag"]
RUNTIME_FLAGS = ["seed", "dtype", "distribution_strategy", "use_xla", "num_gpus", "use_tpu"]

# Runs `SCRIPT --help` for each script in one interpreter, so that TensorFlow loads once: each
# as `python SCRIPT --help` runs it (as __main__, sys.argv[0] the script), printing
# {script: [exit status, stdout]}. Each script's flags are removed before the next one runs.
HELP = """
import contextlib, io, json, os, runpy, sys
from absl import app, flags
import tensorflow  # noqa: F401  (whatever TensorFlow defines is not a script's)
app.define_help_flags()
helps = {}
for script in sys.argv[1:]:
    before = set(flags.FLAGS)
    sys.argv = [script, "--help"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as `python SCRIPT` has it
    stdout = io.StringIO()
    status = "did not exit"
    with contextlib.redirect_stdout(stdout):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            status = e.code
    helps[script] = [status, stdout.getvalue()]
    del sys.path[0]
    for name in set(flags.FLAGS) - before:
        delattr(flags.FLAGS, name)
print(json.dumps(helps))
"""


@pytest.fixture(scope="module")
def helps() -> dict:
    result = succeeded(run_script("-c", HELP, *SCRIPTS))
    return json.loads(result.stdout.splitlines()[-1])


def docstring_as_written(script: str) -> str:
    """The script's docstring as its source spells it, between the quotes."""
    source = (REPO / script).read_text()
    literal = ast.get_source_segment(source, ast.parse(source).body[0])
    return literal[literal.index('"""') + 3 : -3]


def listed_flags(help_text: str) -> set[str]:
    return set(re.findall(r"^  --(?:\[no\])?(\w+):", help_text, re.MULTILINE))


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_shows_the_usage_example_as_written_and_exits_0(script, helps):
    status, help_text = helps[script]
    assert status == 0
    written = docstring_as_written(script)
    assert help_text.startswith(written)
    if "\\\n" in written:  # a shell example continued over lines, each line as the user types it
        assert any(line.endswith(" \\") for line in help_text.splitlines())


@pytest.mark.parametrize("script", list(RECORDED_FLAGS))
def test_help_lists_every_flag_the_script_takes(script, helps):
    assert listed_flags(helps[f"{script}.py"][1]) == set(RECORDED_FLAGS[script])


@pytest.mark.parametrize("script", TRAINING_SCRIPTS)
def test_help_lists_the_runtime_flags(script, helps):
    assert set(RUNTIME_FLAGS) <= listed_flags(helps[f"{script}.py"][1])


def cli_env(**settings: str) -> dict:
    """The tests' script environment without their TF_CPP_MIN_LOG_LEVEL: a user's shell."""
    env = {name: value for name, value in SCRIPT_ENV.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
    return {**env, **settings}


def variable_after_importing_cli(name: str, env: dict) -> str | None:
    code = f"import os, bert_tf.cli; print(os.environ.get({name!r}, 'unset'))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    value = succeeded(result).stdout.strip()
    return None if value == "unset" else value


# Each script run with none of its flags, and the flag it says it lacks (doc_tables.py needs
# none).
FIRST_REQUIRED = {
    "run_pretraining.py": "bert_config_file", "run_classifier.py": "bert_config_file",
    "run_squad.py": "bert_config_file", "run_ner.py": "bert_config_file",
    "run_swag.py": "bert_config_file", "extract_features.py": "input_file",
    "create_pretraining_data.py": "output_file", "create_vocab.py": "input_file",
    "prepare_corpus.py": "input_file", "scripts/fill_mask.py": "model_dir",
    "scripts/make_bert_config.py": "size", "scripts/make_random_bert.py": "bert_config_file",
    "scripts/stdlib_corpus.py": "output_file", "scripts/convert_checkpoint.py": "input",
    "scripts/conll_sample.py": "input_file", "scripts/squad_sample.py": "input_file",
    "scripts/swag_sample.py": "output_dir", "scripts/paper/reproduce.py": "size",
    "scripts/paper/glue_search.py": "glue_dir",
    "scripts/paper/plot_reproduction.py": "output_dir",
    "scripts/paper/unigram_baseline.py": "train_records",
    "scripts/paper/bow_baseline.py": "task_name",
}  # fmt: skip


def test_every_script_but_one_has_a_required_flag_listed_here():
    assert sorted(FIRST_REQUIRED) == sorted(set(SCRIPTS) - {"scripts/paper/doc_tables.py"})


@pytest.mark.parametrize("script", list(FIRST_REQUIRED))
def test_a_flag_error_is_the_first_line_before_tensorflow_starts(script, tmp_path):
    # Issue 93: run_classifier.py --task_name=MRPC printed six lines of TensorFlow's C++
    # start-up (which no TF_CPP_MIN_LOG_LEVEL silences) before its own. The options modules
    # import no TensorFlow; each script imports it once its flags have passed their checks.
    result = subprocess.run(
        [sys.executable, str(REPO / script)], cwd=tmp_path, env=cli_env(),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    name = os.path.basename(script)
    assert result.stderr.splitlines() == [f"{name}: error: --{FIRST_REQUIRED[script]} is required"]


def test_run_classifier_says_its_missing_flag_first():
    # The issue's own command.
    result = subprocess.run(
        [sys.executable, "run_classifier.py", "--task_name=MRPC"], cwd=REPO, env=cli_env(),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith("run_classifier.py: error: --"), result.stderr


def test_importing_cli_drops_only_tensorflows_info_lines_unless_the_user_chose():
    from bert_tf.cli import accelerator_present

    # Without an accelerator, its errors too: a healthy run's there are about absent devices.
    expected = "1" if accelerator_present() else "3"
    assert variable_after_importing_cli("TF_CPP_MIN_LOG_LEVEL", cli_env()) == expected
    level = variable_after_importing_cli("TF_CPP_MIN_LOG_LEVEL", cli_env(TF_CPP_MIN_LOG_LEVEL="0"))
    assert level == "0"


def test_on_a_cpu_scripts_use_tensorflows_bfc_allocator_up_to_all_memory_unless_the_user_chose():
    from bert_tf.cli import physical_memory_mb, uses_bfc_allocator_by_default

    if not uses_bfc_allocator_by_default():
        pytest.skip("an accelerator's host or not Linux: TensorFlow's default allocator stays")
    mine = {"TF_CPU_ALLOCATOR_USE_BFC", "TF_CPU_BFC_MEM_LIMIT_IN_MB"}
    shell = {name: value for name, value in cli_env().items() if name not in mine}
    assert variable_after_importing_cli("TF_CPU_ALLOCATOR_USE_BFC", shell) == "true"
    # Not BFC's own 64 GiB: a machine with more gives a run all of it, as malloc would.
    limit = variable_after_importing_cli("TF_CPU_BFC_MEM_LIMIT_IN_MB", shell)
    assert int(limit) == physical_memory_mb() > 1024
    chosen = {**shell, "TF_CPU_ALLOCATOR_USE_BFC": "false", "TF_CPU_BFC_MEM_LIMIT_IN_MB": "512"}
    assert variable_after_importing_cli("TF_CPU_ALLOCATOR_USE_BFC", chosen) == "false"
    assert variable_after_importing_cli("TF_CPU_BFC_MEM_LIMIT_IN_MB", chosen) == "512"


def test_a_healthy_run_without_a_gpu_prints_no_cuinit_error(tmp_path):
    from bert_tf.cli import accelerator_present

    if accelerator_present():
        pytest.skip("this machine has an accelerator")
    code = "import bert_tf.cli, tensorflow as tf; tf.config.list_physical_devices()"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=cli_env(), capture_output=True, text=True
    )
    assert "cuInit" not in succeeded(result).stderr


def cpp_info_sources(stderr: str) -> set[str]:
    """The `file.cc:line` of each C++ INFO line (`I0000 00:00:... 1234 port.cc:153] ...`)."""
    return set(re.findall(r"^I\d{4} [\d:.]+ +\d+ ([\w.]+\.cc:\d+)\]", stderr, re.MULTILINE))


def test_a_healthy_run_prints_no_tensorflow_info_line_after_start_up(tmp_path):
    # What this CPU's TensorFlow prints as its libraries load, before it reads
    # TF_CPP_MIN_LOG_LEVEL: a "could not find cuda drivers" note, a oneDNN banner on CPUs with
    # AVX-512 VNNI or AMX, ... (TensorFlow's choice, not ours: whatever it is here is allowed).
    loading = subprocess.run(
        [sys.executable, "-c", "import bert_tf.cli, tensorflow"],
        cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    command = [
        sys.executable, "create_vocab.py", f"--input_file={SAMPLE_DATA / 'sample_text.txt'}",
        f"--output_file={tmp_path / 'vocab.txt'}", "--vocab_size=200", "--min_count=2",
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=300
    )
    succeeded(result)
    # Nothing after that: no CPU-instruction banner (cpu_feature_guard), no set-up notes.
    assert cpp_info_sources(result.stderr) <= cpp_info_sources(loading.stderr), result.stderr


def test_ctrl_c_outside_training_is_one_line_and_the_status_of_sigint(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text((SAMPLE_DATA / "sample_text.txt").read_text() * 200)
    process = subprocess.Popen(
        [sys.executable, "create_pretraining_data.py", f"--input_file={corpus}",
         f"--output_file={tmp_path / 'records'}", f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
         "--dupe_factor=50"],
        cwd=REPO, env=SCRIPT_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=take_ctrl_c,
    )  # fmt: skip
    try:
        for line in process.stderr:
            if "Read " in line and " documents" in line:  # at work: making the instances
                break
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == "create_pretraining_data.py: interrupted by Ctrl-C (SIGINT)"
    assert not (tmp_path / "records").exists()


# A script whose run ends in `error`, with exit handlers registered as a worker's are: one that
# removes its scratch file, and one that writes to stderr's file descriptor as TensorFlow's C++
# runtime does while the interpreter shuts down (gRPC to a multi-worker run's lost peers); and,
# first to run, a SIGTERM as it exits (a launcher stopping the survivors of a lost worker).
ENDS_WITH = """
import atexit, os, signal, sys
from bert_tf import cli, errors
scratch, error = sys.argv[1], sys.argv[2]
sys.argv = ["run_pretraining.py"]
atexit.register(os.remove, scratch)
atexit.register(os.write, 2, b"E1202 00:36:01.1 grpc: failed to connect to all addresses\\n")
atexit.register(os.kill, os.getpid(), signal.SIGTERM)
def main(argv):
    raise {"WorkerLost": errors.WorkerLost("worker 1: worker 0 stopped answering after step 7"),
           "Preempted": errors.Preempted("stopped by SIGTERM at step 7; saved ckpt-7"),
           "InputError": errors.InputError("--input_file=x: no such file")}[error]
cli.run(main)
"""


@pytest.mark.parametrize(
    "error, status, line",
    [
        ("WorkerLost", 75, "run_pretraining.py: worker 1: worker 0 stopped answering after step 7"),
        ("Preempted", 143, "run_pretraining.py: stopped by SIGTERM at step 7; saved ckpt-7"),
        ("InputError", 1, "run_pretraining.py: error: --input_file=x: no such file"),
    ],
)
def test_the_line_a_run_ends_with_is_the_last_on_stderr_its_status_final_and_exit_handlers_run(
    error, status, line, tmp_path
):
    scratch = tmp_path / "workertemp_worker_1"
    scratch.write_text("")
    result = run_script("-c", ENDS_WITH, str(scratch), error)
    assert result.returncode == status, result.stderr
    assert result.stderr.splitlines()[-1] == line, result.stderr
    assert "grpc" not in result.stderr
    assert not scratch.exists()


@pytest.mark.parametrize(
    "script, flag",
    [
        ("create_vocab.py", "--output_file"),
        ("prepare_corpus.py", "--output_file"),
        ("create_pretraining_data.py", "--output_file"),
        ("run_pretraining.py", "--output_dir"),
    ],
)
def test_an_output_path_of_the_wrong_kind_is_one_line_before_any_work(script, flag, tmp_path):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    file.write_text("kept")
    wrong = file if flag == "--output_dir" else folder
    flags = {
        "--input_file": SAMPLE_DATA / "sample_text.txt",
        "--vocab_file": SAMPLE_DATA / "vocab.txt",
        "--bert_config_file": FIXTURES / "flags" / "bert_tf.json",  # not read: checked first
        "--do_train": "True",
        flag: wrong,
    }
    if script in ("create_vocab.py", "prepare_corpus.py"):
        del flags["--vocab_file"]
    if script != "run_pretraining.py":
        del flags["--bert_config_file"], flags["--do_train"]
    result = run_script(script, *(f"{name}={value}" for name, value in flags.items()))
    kind = "is a file; expected a folder" if flag == "--output_dir" else "is a folder; expected"
    assert f"{script}: error: {flag}={wrong}: {kind}" in error_line(result, script)
    assert file.read_text() == "kept" and list(folder.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["run_classifier.py", "--task_name=MRPC", "--do_train", "--data_dir=http://example.com/glue"],
        ["scripts/convert_checkpoint.py", "--input=model", "--output=s3://bucket/model"],
    ],
)  # fmt: skip
def test_a_path_whose_scheme_no_file_system_serves_is_one_line(args, tmp_path):
    scheme = args[-1].split("=")[1].split("://")[0]
    output_dir = [f"--output_dir={tmp_path / 'out'}"] if args[0] == "run_classifier.py" else []
    program = os.path.basename(args[0])
    assert error_line(run_script(*args, *output_dir), program).startswith(
        f"{program}: error: {args[-1]}: TensorFlow has no file system for {scheme}:// here; "
        "expected a local path or one of "
    )
    assert not (tmp_path / "out").exists() and not os.path.exists(f"{scheme}:")


def test_a_remote_file_systems_refusal_is_the_users_to_fix():
    import tensorflow as tf

    from bert_tf.cli import is_file_system_error

    offline = "Could not resolve host: www.googleapis.com\n\t when reading gs://bucket/x"
    assert is_file_system_error(tf.errors.FailedPreconditionError(None, None, offline))
    assert is_file_system_error(tf.errors.NotFoundError(None, None, "gs://bucket/x not found"))
    assert not is_file_system_error(tf.errors.InvalidArgumentError(None, None, "in the model"))
    assert not is_file_system_error(ValueError("gs://bucket/x"))
