"""`python script.py args` for the tests, in a process forked from one that has imported
TensorFlow already: the standard library's forkserver with TensorFlow preloaded.

Each fresh interpreter spends 5-10 s of CPU importing TensorFlow before a script reads its first
flag; the suite runs scripts several hundred times (most of them to see one line refuse bad
input), and that import was most of CI's time. A child here runs the script as Python runs it:
the same file (or `-c` code) as `__main__`, `sys.argv`, `sys.path` (the script's folder, then a
fresh interpreter's path), environment, working folder, stdin from /dev/null, stdout and stderr
(file descriptors 1 and 2, so TensorFlow's C++ lines too) and exit status (`sys.exit`'s code, 1
and the traceback for an uncaught exception, minus the signal that killed it). What differs is
only what happened before the script's first line: TensorFlow (and Keras) were imported under
the environment the forkserver started with. So a run whose environment changes what TensorFlow
reads on import (`can_run` says which) is not run here, and nor are the tests of start-up itself
(they start `python` themselves). This module imports nothing of bert_tf or the tests: the
forkserver imports it, and bert_tf.cli reads the command line on import.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
import traceback
import types

# Read by TensorFlow, Keras or Python when they are imported (or when the interpreter starts),
# not when a script runs: a run that sets one of these to another value needs its own
# interpreter.
IMPORT_TIME_VARIABLES = (
    "KERAS_BACKEND",
    "KERAS_HOME",
    "PYTHONHASHSEED",
    "PYTHONPATH",
    "TF_CPP_MAX_VLOG_LEVEL",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_CPP_VMODULE",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_USE_LEGACY_KERAS",
)

_started_with: dict[str, str | None] | None = None  # the forkserver's import-time environment
_fresh_path: list[str] = []  # a fresh interpreter's sys.path after its script's folder


def can_run(args: list[str], env: dict[str, str]) -> bool:
    """Whether `python *args` under `env` can start from the forkserver: `args[0]` a Python
    file or "-c", and the server not started yet or started with the import-time variables
    `env` gives. BERT_TF_TESTS_FRESH=1 in the tests' own environment turns the forkserver off."""
    if os.environ.get("BERT_TF_TESTS_FRESH") == "1":
        return False
    if not (args[0].endswith(".py") or args[0] == "-c"):
        return False
    if _started_with is None:
        return True
    return all(env.get(name) == _started_with[name] for name in IMPORT_TIME_VARIABLES)


def run(args: list[str], env: dict[str, str], cwd, timeout: float) -> subprocess.CompletedProcess:
    """`subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
    text=True, timeout=timeout)` for `args[0]` a Python file (or "-c" and the code), forked
    from the forkserver."""
    context = _forkserver(env)
    with tempfile.TemporaryDirectory() as folder:
        stdout, stderr = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
        child = context.Process(
            target=_run_as_main, args=(list(args), env, str(cwd), stdout, stderr, _fresh_path)
        )
        child.start()
        child.join(timeout)
        timed_out = child.exitcode is None
        if timed_out:
            child.kill()
            child.join()
        with open(stdout) as out, open(stderr) as err:
            output, errors = out.read(), err.read()
    command = [sys.executable, *args]
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout, output=output, stderr=errors)
    return subprocess.CompletedProcess(command, child.exitcode, output, errors)


def _forkserver(env: dict[str, str]):
    """The forkserver context, its server started (TensorFlow imported) under `env`'s
    import-time variables on first use."""
    global _started_with
    context = multiprocessing.get_context("forkserver")
    if _started_with is None:
        _fresh_path[:] = json.loads(
            subprocess.run(
                [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
                env=env, capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        context.set_forkserver_preload(["tensorflow", __name__])
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)  # the server starts under the environment the scripts get
        try:
            from multiprocessing import forkserver

            forkserver.ensure_running()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        _started_with = {name: env.get(name) for name in IMPORT_TIME_VARIABLES}
    return context


def _run_as_main(args, env, cwd, stdout, stderr, fresh_path) -> None:
    """In the forked child: runs `args[0]` as `python *args` would, then exits with its
    status."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, stdout), (2, stderr)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(opened, fd)
        os.close(opened)
    if args[0] == "-c":  # python -c CODE: argv[0] "-c", the working folder first on the path
        sys.argv = ["-c", *args[2:]]
        sys.path[:] = ["", *fresh_path]
    else:
        sys.argv = list(args)
        sys.path[:] = [os.path.dirname(os.path.abspath(args[0])), *fresh_path]
    status = 0
    try:
        if args[0] == "-c":
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(args[1], "<string>", "exec"), main.__dict__)
        else:
            runpy.run_path(os.path.abspath(args[0]), run_name="__main__")
    except SystemExit as e:
        status = e.code
    except BaseException:  # as the interpreter reports an uncaught exception
        traceback.print_exc()
        status = 1
    finally:  # as the interpreter ends: its threads joined, then the exit functions (which a
        threading._shutdown()  # multiprocessing child would leave out)
        atexit._run_exitfuncs()
    sys.exit(status)
