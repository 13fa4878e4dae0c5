"""The card's layout: packages import from the checkout, and saved models name their classes
by the registered names (old runs: tests/test_upgrade_run.py)."""

import ast
import subprocess
import sys
from pathlib import Path

import keras

ROOT = Path(__file__).resolve().parents[1]


def test_packages_resolve_inside_the_repository():
    code = (
        "import layers, models, data, tokenization, inspection, engine, config, runtime; "
        "print('\\n'.join(m.__file__ for m in (layers, models, data, tokenization, "
        "inspection, engine, config, runtime)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    for path in result.stdout.split():
        assert Path(path).resolve().is_relative_to(ROOT), path


def test_nothing_generic_is_installed_into_site_packages():
    # Run from a folder outside the checkout: only an installed package could be found.
    code = (
        "import importlib.util as u; "
        "print([n for n in ('layers', 'models', 'data', 'tokenization', 'inspection', "
        "'engine', 'config', 'runtime') "
        "if u.find_spec(n)])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip() == "[]"


def test_registered_names_are_those_saved_models_carry():
    import layers
    import models
    import tokenization
    from engine.training.starting_weights.pretrained_encoder import PaddingMask

    registered = [
        models.TextEncoder,
        models.TransformerClassifier,
        PaddingMask,
        tokenization.WordPieceTokenizer,
        tokenization.ByteLevelBpeTokenizer,
        tokenization.SentencePieceTokenizer,
    ]
    for cls in [getattr(layers, name) for name in layers.__all__] + registered:
        assert keras.saving.get_registered_name(cls) == f"keras_attention_lab>{cls.__name__}"


COMMANDS = {
    "train.py",
    "evaluate.py",
    "predict.py",
    "serve.py",
    "pretrain.py",
    "export.py",
    "compress.py",
    "upgrade_run.py",
}
MAX_LINES = 350


def python_files():
    skipped = {".venv", ".git", "runs"}
    return [path for path in ROOT.rglob("*.py") if not skipped & set(path.relative_to(ROOT).parts)]


def test_the_root_holds_only_commands_each_with_main():
    assert {path.name for path in ROOT.glob("*.py")} == COMMANDS
    for name in COMMANDS:
        assert "\ndef main(argv" in (ROOT / name).read_text(encoding="utf-8"), name


def test_no_python_file_passes_350_lines():
    long = {
        str(path.relative_to(ROOT)): count
        for path in python_files()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these files (at most {MAX_LINES} lines): {long}"


MAX_FUNCTION_LINES = 80


def test_no_function_outside_tests_passes_80_lines():
    # Counted from `def` to the end of the body, decorators excluded.
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length})"
        for path in python_files()
        if path.relative_to(ROOT).parts[0] != "tests"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (length := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert long == [], f"split these functions (at most {MAX_FUNCTION_LINES} lines): {long}"
