"""The README and the pages of docs/ as a new user reads them: every block runs, every link
leads somewhere, and the recipes' headers agree with the README's results table.

Python blocks run as written (one that imports BertViz needs packages that are not
dependencies: it is only compiled). Command blocks run line by line, page after page (the
README first, then docs/ in name order), in one copy of the checkout where the runs the
pages name (`runs/default`, ...) are the tiny test run and the built-in datasets are
prepared (TFDS_DATA_DIR): evaluate.py, predict.py, `python -m data` and the own-data
section run as written. Jobs of minutes to hours run in a form that checks them without the
hours: `train.py` / `pretrain.py` with `--print-config` (the config and every override
resolve), `make` targets with `make -n`, benchmarks, `serve.py` and `tensorboard` with
`--help` (the live lab's own commands run in tests/test_serve.py). The commands of this
project's scripts (`python train.py ...`, `python -m data`, the
benchmarks) and then the Python blocks run in one driver process, in order, the scripts
through each one's `main(argv)`, so that TensorFlow loads once; the other commands
(`make -n`, `TF_CONFIG=... python ...`) run in bash.

Relative links (`[text](page.md#heading)`, images) must name a file that exists and, for a
Markdown file, a heading it has, with GitHub's anchors (`## Quick tour` -> `#quick-tour`).
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
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
# Training runs the pages show that take seconds: they run as written.
RUN_AS_WRITTEN = ("python train.py --config configs/example_csv.yaml",)
# Runs the pages' commands use; the test puts the tiny run in each place.
NAMED_RUNS = ("default", "reuters_r8", "reuters_r52", "pretrain_rotten_tomatoes")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)


def blocks(languages, pages=PAGES):
    """[(page, code)] of the fenced blocks in those languages, in reading order."""
    return [
        (page, code)
        for page in pages
        for language, code in FENCE.findall(page.read_text(encoding="utf-8"))
        if language in languages
    ]


def commands(pages=PAGES):
    """Every command of the bash blocks, continuation lines joined, comments dropped."""
    lines = []
    for _, block in blocks(("bash",), pages):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def checked_form(command):
    """The command as the test runs it (see the module docstring)."""
    if command.startswith("make "):
        return "make -n " + command[len("make ") :]
    if command.startswith("tensorboard ") or re.search(r"\bserve\.py\b", command):
        return command + " --help"  # a server runs until Ctrl-C: tests/test_serve.py runs it
    if re.search(r"\bbench/\w+\.py", command):
        return re.sub(r"(bench/\w+\.py).*$", r"\1 --help", command)
    if re.search(r"\b(pre)?train\.py\b", command) and command not in RUN_AS_WRITTEN:
        return command + " --print-config"
    return command


def checkout_copy(tmp_path, tiny_run_dir):
    copy = tmp_path / "checkout"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "runs", "__pycache__", ".pytest_cache", ".ruff_cache"
        ),
    )
    (copy / ".venv").symlink_to(ROOT / ".venv")
    for name in NAMED_RUNS:
        shutil.copytree(
            tiny_run_dir, copy / "runs" / name, ignore=shutil.ignore_patterns("attention", "eval")
        )
    # The files a reader brings: texts, one per line, and a labelled file.
    (copy / "texts.txt").write_text("a good film\n\nbad\n")
    (copy / "my.txt").write_text("such a wonderful film\n")
    write_reviews_fixture(copy / "my_reviews.csv")
    return copy


SCRIPT_COMMAND = re.compile(r"^(?:\.venv/bin/)?python (?:-m (\w+)|([\w/]+)\.py) ?(.*)$")
# Runs [(module, argv, stdout file or None)] through each module's main(argv), in order,
# then the Python blocks [(name, code, compile only)], each in fresh globals.
DRIVER = """
import contextlib, importlib, io, json, sys
sys.path.insert(0, "bench")
calls, python_blocks = json.loads(sys.argv[1])
for module, argv, out in calls:
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
import keras
for name, code, compile_only in python_blocks:
    program = compile(code, name, "exec")
    if compile_only:
        continue
    keras.config.set_dtype_policy("float32")  # what a fresh process starts with
    keras.utils.clear_session()
    with contextlib.redirect_stdout(io.StringIO()):
        exec(program, {"__name__": "__main__"})
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
        argv, out = argv[: argv.index(">")], argv[argv.index(">") + 1]
    return module, argv, out


def python_blocks():
    """[(name, code, compile only)]: BertViz and torch are not dependencies."""
    found = []
    for number, (page, code) in enumerate(blocks(("python", "py"))):
        name = f"{page.relative_to(ROOT)} (Python block {number})"
        found.append((name, code, "from bertviz import" in code))
    return found


def run(command, cwd, env):
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


# GitHub's heading anchors: inline markup dropped, lower case, punctuation other than `-`
# and `_` removed, each space a `-`; a repeated heading gets -1, -2, ...
def github_anchor(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown):
    """The anchors of a Markdown text's headings (those outside code blocks)."""
    seen, found = {}, set()
    for line in FENCE.sub("", markdown).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            anchor = github_anchor(match.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def broken_links(pages):
    """'page: target (why)' for each relative link that leads nowhere."""
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))  # links in code are code
        for target in LINK.findall(prose):
            if re.match(r"^[a-zA-Z][\w+.-]*:", target):  # https:, mailto:, ...
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                problems.append(f"{page.name}: {target} (no such file)")
            elif (
                anchor
                and linked.suffix == ".md"
                and anchor not in anchors(linked.read_text(encoding="utf-8"))
            ):
                problems.append(f"{page.name}: {target} (no heading #{anchor})")
    return problems


# A file of the repository named in backticks: `tests/test_train.py`, `configs/tiny.yaml`.
NAMED_FILE = re.compile(
    r"`((?:bench|configs|data|docs|inspection|layers|models|engine|config|"
    r"runtime|tests|tokenization)/[\w/.-]+\.(?:py|yaml|md|png|csv))`"
)


def test_files_the_pages_name_exist():
    named = {path for page in PAGES for path in NAMED_FILE.findall(page.read_text("utf-8"))}
    assert len(named) > 10
    assert sorted(path for path in named if not (ROOT / path).is_file()) == []


def test_pages_have_python_and_command_blocks():
    assert blocks(("python",)) and blocks(("py",)) and len(commands()) > 40


def test_every_block_runs(tmp_path, tiny_run_dir, builtin_data_dir):
    copy = checkout_copy(tmp_path, tiny_run_dir)
    env = {
        **os.environ,
        "PYTHONPATH": str(copy),
        "TFDS_DATA_DIR": builtin_data_dir,
        "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    calls = []
    for command in map(checked_form, commands()):
        call = script_call(command)
        if call is not None:
            calls.append(call)
            continue
        completed = run(command, copy, env)
        assert completed.returncode == 0, (command, completed.stderr[-2000:])
    assert len(calls) > 30
    completed = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps([calls, python_blocks()])],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    # The own-data section trained, evaluated, predicted and exported for real.
    example = copy / "runs" / "example_csv"
    assert (example / "model.keras").is_file()
    assert (example / "eval" / "movie_reviews_new" / "metrics.json").is_file()
    assert (example / "attention" / "test" / "index.html").is_file()
    assert (copy / "predictions.json").read_text().startswith("{")
    # The tour's export and make train's, which the format page and BertViz block read.
    assert (copy / "runs" / "reuters_r8" / "attention" / "test" / "index.html").is_file()
    assert (copy / "runs" / "default" / "attention" / "test" / "bertviz").is_dir()


def test_checked_forms():
    assert checked_form("make train") == "make -n train"
    assert checked_form("python bench/bench_padding.py --set a=1") == (
        "python bench/bench_padding.py --help"
    )
    assert checked_form("python train.py --config configs/reuters_r8.yaml").endswith(
        " --print-config"
    )
    assert checked_form(RUN_AS_WRITTEN[0]) == RUN_AS_WRITTEN[0]
    assert checked_form(RUN_AS_WRITTEN[0] + " --set output.name=mine").endswith(" --print-config")


def test_no_link_is_broken():
    assert broken_links(PAGES) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(
        "# Guide\n\n## Use `layers` alone\n\n## Notes\n\n## Notes\n\n"
        "```bash\n# not a heading\n```\n"
    )
    (tmp_path / "picture.png").write_bytes(b"")
    readme = tmp_path / "README.md"
    readme.write_text(
        "![a picture](picture.png) [fine](docs/guide.md#use-layers-alone)\n"
        "[again](docs/guide.md#notes-1) [here](#top) [web](https://example.org/x.md)\n"
        "[gone](docs/missing.md) [no heading](docs/guide.md#not-there)\n"
        "[code block](docs/guide.md#not-a-heading) `[in code](docs/also_missing.md)`\n"
        "# Top\n"
    )
    assert broken_links([readme, tmp_path / "docs" / "guide.md"]) == [
        "README.md: docs/missing.md (no such file)",
        "README.md: docs/guide.md#not-there (no heading #not-there)",
        "README.md: docs/guide.md#not-a-heading (no heading #not-a-heading)",
    ]


def test_github_anchors():
    assert github_anchor("Layers: ours vs `keras.layers.MultiHeadAttention`") == (
        "layers-ours-vs-keraslayersmultiheadattention"
    )
    assert github_anchor("Set-up and test times") == "set-up-and-test-times"
    assert github_anchor("In place of [Keras](https://keras.io)' layer") == (
        "in-place-of-keras-layer"
    )
    assert anchors("## 20 Newsgroups\n## 20 Newsgroups\n") == {"20-newsgroups", "20-newsgroups-1"}


def test_readme_fits_five_minutes_and_links_every_docs_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for page in PAGES[1:]:
        assert f"](docs/{page.name})" in text, page.name


def test_recipe_headers_expect_what_the_results_table_says():
    """Each `ours` row of the README's results table names its config file, whose header
    (first comment block) expects the same test accuracy and macro-F1."""
    rows = re.findall(
        r"^\| [^|]+ \| [^|]*`(configs/[\w.]+\.yaml)` \| ([\d.]+ ± [\d.]+) \| "
        r"([\d.]+) ± [\d.]+ \|",
        README.read_text(encoding="utf-8"),
        flags=re.MULTILINE,
    )
    assert len(rows) >= 5
    for config, accuracy, macro_f1 in rows:
        header = (ROOT / config).read_text().split("\n\n")[0].replace("+-", "±")
        assert f"test accuracy {accuracy}%" in header, (config, accuracy)
        assert f"macro-F1 {macro_f1}" in header, (config, macro_f1)
        # A config that is only another one under a new run name expects the same.
        for alias in (ROOT / "configs").glob("*.yaml"):
            text = alias.read_text()
            settings = [line for line in text.splitlines() if line and line[0] != "#"]
            if settings == [f"base: {Path(config).name}"]:
                assert f"test accuracy {accuracy}%" in text.replace("+-", "±"), alias.name
