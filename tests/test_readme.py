"""The README as a new user reads it: every code block runs, in a copy of the checkout.

Python blocks run as written (the BertViz one needs packages that are not dependencies:
it is only compiled). Command blocks run line by line, in order, in a copy of the checkout
where the runs the README names (`runs/default`, ...) are the tiny test run and the
built-in datasets are prepared (TFDS_DATA_DIR): evaluate.py, predict.py, `python -m data`
and the own-data section run as written. Jobs of minutes to hours run in a form that
checks them without the hours: `train.py` / `pretrain.py` with `--print-config` (the config
and every override resolve), `make` targets with `make -n`, benchmarks with `--help`.
The commands of this project's scripts (`python train.py ...`, `python -m data`, the
benchmarks) run in one Python process, in order, through each one's `main(argv)`, so that
TensorFlow loads once; the others (`make -n`, `TF_CONFIG=... python ...`) run in bash.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.review_fixture import write_reviews_fixture

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Training runs the README shows that take seconds: they run as written.
RUN_AS_WRITTEN = ("configs/example_csv.yaml",)
# Runs the README's commands use; the test puts the tiny run in each place.
NAMED_RUNS = ("default", "reuters_r8", "reuters_r52", "pretrain_rotten_tomatoes")


def blocks(language):
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def commands():
    """Every command of the bash blocks, continuation lines joined, comments dropped."""
    lines = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def checked_form(command):
    """The command as the test runs it (see the module docstring)."""
    if command.startswith("make "):
        return "make -n " + command[len("make "):]
    if re.search(r"\bbench/\w+\.py", command):
        return re.sub(r"(bench/\w+\.py).*$", r"\1 --help", command)
    if re.search(r"\b(pre)?train\.py\b", command) and not any(
            config in command for config in RUN_AS_WRITTEN):
        return command + " --print-config"
    return command


def checkout_copy(tmp_path, tiny_run_dir):
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv", "runs", "__pycache__", ".pytest_cache", ".ruff_cache"))
    (copy / ".venv").symlink_to(ROOT / ".venv")
    for name in NAMED_RUNS:
        shutil.copytree(tiny_run_dir, copy / "runs" / name,
                        ignore=shutil.ignore_patterns("attention", "eval"))
    # The files a reader brings: texts, one per line, and a labelled file.
    (copy / "texts.txt").write_text("a good film\n\nbad\n")
    (copy / "my.txt").write_text("such a wonderful film\n")
    write_reviews_fixture(copy / "my_reviews.csv")
    return copy


SCRIPT_COMMAND = re.compile(r"^(?:\.venv/bin/)?python (?:-m (\w+)|([\w/]+)\.py) ?(.*)$")
# Runs [(module, argv, stdout file or None)] through each module's main(argv), in order.
DRIVER = """
import contextlib, importlib, io, json, sys
sys.path.insert(0, "bench")
for module, argv, out in json.loads(sys.argv[1]):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            code = importlib.import_module(module).main(argv)
        except SystemExit as exit:  # --help
            code = exit.code or 0
    if out:
        open(out, "w").write(buffer.getvalue())
    if code != 0:
        sys.exit(f"{module} {' '.join(argv)} exited {code}")
"""


def script_call(command):
    """(module, argv, stdout file or None) of `python SCRIPT.py ARGS [> FILE]` or
    `python -m PACKAGE ARGS`, else None."""
    match = SCRIPT_COMMAND.match(command)
    if not match:
        return None
    package, script, rest = match.groups()
    module = f"{package}.__main__" if package else script.split("/")[-1]
    argv, out = shlex.split(rest), None
    if ">" in argv:
        argv, out = argv[:argv.index(">")], argv[argv.index(">") + 1]
    return module, argv, out


def run(command, cwd, env):
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_readme_has_python_and_command_blocks():
    assert blocks("python") and blocks("py") and len(commands()) > 20


def test_every_readme_block_runs(tmp_path, tiny_run_dir, builtin_data_dir):
    copy = checkout_copy(tmp_path, tiny_run_dir)
    env = {**os.environ, "PYTHONPATH": str(copy), "TFDS_DATA_DIR": builtin_data_dir,
           "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    calls = []
    for command in map(checked_form, commands()):
        call = script_call(command)
        if call is not None:
            calls.append(call)
            continue
        completed = run(command, copy, env)
        assert completed.returncode == 0, (command, completed.stderr[-2000:])
    assert len(calls) > 15
    completed = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(calls)], cwd=copy,
                               env=env, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    # The own-data section trained, evaluated, predicted and exported for real.
    example = copy / "runs" / "example_csv"
    assert (example / "model.keras").is_file()
    assert (example / "eval" / "movie_reviews_new" / "metrics.json").is_file()
    assert (example / "attention" / "test" / "index.html").is_file()
    assert (copy / "predictions.json").read_text().startswith("{")

    for block in blocks("python") + blocks("py"):
        if "from bertviz import" in block:
            compile(block, "README.md", "exec")  # bertviz and torch are not dependencies
            continue
        completed = subprocess.run([sys.executable, "-c", block], cwd=copy, env=env,
                                   capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr[-2000:]
