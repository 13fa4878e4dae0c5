"""export.py: a run's SavedModel serves raw strings and token ids in a fresh process that
imports TensorFlow only, with the saved model's probabilities."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import compress
import export
from models import get_model_parts, load_end_to_end_model
from run_folder import runs

TEXTS = ["a good film", "dull, dull and far too long", "fine", ""]
# Loads each SavedModel with TensorFlow alone and prints each signature's probabilities:
# one fresh process serves every export of this module (a process imports TensorFlow in
# seconds, once).
SERVE = """
import json, sys
import numpy as np
import tensorflow as tf
jobs, texts = json.loads(sys.argv[1]), json.loads(sys.argv[2])
results = {}
for name, (folder, ids_path) in jobs.items():
    served = tf.saved_model.load(folder)
    if ids_path is None:  # Keras' own model.export: one endpoint, serve
        results[name] = {"texts": served.serve(tf.constant(texts)).numpy().tolist()}
        continue
    out = {"texts": None}
    if "serve" in served.signatures:  # serving_default is its alias
        out["texts"] = served.signatures["serving_default"](tf.constant(texts))["probabilities"]
    out["token_ids"] = served.signatures["serve_token_ids"](
        tf.constant(np.load(ids_path)))["probabilities"]
    result = {key: None if value is None else value.numpy().tolist()
              for key, value in out.items()}
    results[name] = {**result, "signatures": sorted(served.signatures)}
print(json.dumps(results))
"""
RUNS = ("tiny", "pruned", "int8")
MODES = {"both": [], "token_ids_only": ["--token-ids-only"]}


@pytest.fixture(scope="module")
def runs_to_export(tiny_run_dir, tmp_path_factory):
    """The tiny run, a copy with one of its two heads pruned, and one quantized to int8."""
    root = tmp_path_factory.mktemp("export")
    run_dir = shutil.copytree(
        tiny_run_dir, root / "tiny", ignore=shutil.ignore_patterns("eval", "attention")
    )
    assert compress.main([str(run_dir), "--prune-heads", "1", "--order", "random"]) == 0
    assert compress.main([str(run_dir), "--int8"]) == 0
    return {"tiny": run_dir, "pruned": root / "tiny_pruned", "int8": root / "tiny_int8"}


@pytest.fixture(scope="module")
def served(runs_to_export, tmp_path_factory):
    """{(run, mode) or "keras": (SavedModel folder, expected probabilities, what a fresh
    TensorFlow-only process served)}: export.py's SavedModel of each run both ways, and
    Keras' own `model.export(DIR)` of the tiny run."""
    root = tmp_path_factory.mktemp("served")
    jobs, expected = {}, {}
    for name in RUNS:
        model = load_end_to_end_model(runs_to_export[name] / runs.MODEL_FILE)
        probabilities = np.asarray(model(np.array(TEXTS, dtype=object), training=False))
        ids = np.asarray(get_model_parts(model)[0](np.array(TEXTS, dtype=object)), np.int64)
        np.save(root / f"{name}_ids.npy", ids)
        for mode, flags in MODES.items():
            out = root / f"{name}_{mode}"
            assert export.main([str(runs_to_export[name]), "--out", str(out), *flags]) == 0
            jobs[f"{name}/{mode}"] = (str(out), str(root / f"{name}_ids.npy"))
            expected[f"{name}/{mode}"] = probabilities
        if name == "tiny":  # `model.export(DIR)`, Keras' one line, on a loaded model.keras
            model.export(str(root / "keras"), verbose=False)
            jobs["keras"], expected["keras"] = (str(root / "keras"), None), probabilities
    result = subprocess.run(
        [sys.executable, "-c", SERVE, json.dumps(jobs), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads(result.stdout.strip().splitlines()[-1])
    return {key: (Path(jobs[key][0]), expected[key], results[key]) for key in jobs}


# What a tokenizer runs: TextVectorization's and tensorflow-text's WordPiece ops.
TOKENIZER_OPS = (
    "StringLower",
    "RegexReplace",
    "StringSplit",
    "LookupTableFind",
    "Wordpiece",
    "NormalizeUTF8",
)


def graph_ops(folder):
    """Every op type of a SavedModel's graph and its functions."""
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((folder / "saved_model.pb").read_bytes())
    graph = saved.meta_graphs[0].graph_def
    return {node.op for node in graph.node} | {
        node.op for function in graph.library.function for node in function.node_def
    }


def tokenizer_ops(folder):
    return sorted(op for op in graph_ops(folder) if any(word in op for word in TOKENIZER_OPS))


@pytest.mark.parametrize("name", RUNS)
@pytest.mark.parametrize("mode", list(MODES))
def test_the_saved_model_serves_what_the_run_predicts(served, name, mode):
    out, expected, result = served[f"{name}/{mode}"]
    np.testing.assert_allclose(result["token_ids"], expected, atol=1e-5)
    if mode == "token_ids_only":
        assert result["signatures"] == ["serve_token_ids", "serving_default"]
        assert result["texts"] is None
        assert tokenizer_ops(out) == []
        assert graph_ops(out) <= set(dir(tf.raw_ops))  # TensorFlow's own ops only
    else:
        assert result["signatures"] == ["serve", "serve_token_ids", "serving_default"]
        np.testing.assert_allclose(result["texts"], expected, atol=1e-5)
        assert "StringLower" in tokenizer_ops(out)  # the tokenizer is inside


def test_a_missing_run_or_an_existing_folder_is_one_line_and_exit_2(
    runs_to_export, tmp_path, capsys
):
    assert export.main([str(tmp_path / "nothere")]) == 2  # before TensorFlow's work
    missing = tmp_path / "nothere"
    assert capsys.readouterr().err == f"export.py: error: {missing}: no such run folder\n"
    taken = tmp_path / "taken"
    taken.mkdir()
    assert export.main([str(runs_to_export["tiny"]), "--out", str(taken)]) == 2
    assert capsys.readouterr().err == (
        f"export.py: error: {taken} already exists: pass --out DIR for a new folder, or remove it\n"
    )
    assert list(taken.iterdir()) == []


def test_keras_own_model_export_serves_the_same(served):
    """`model.export(DIR)`, Keras' one line, keeps working on a loaded `model.keras`."""
    _, expected, result = served["keras"]
    np.testing.assert_allclose(result["texts"], expected, atol=1e-5)
