"""export.py: a run's SavedModel serves raw strings and token ids in a fresh process that
imports TensorFlow only, with the saved model's probabilities."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import compress
import export
import runs
from models import get_model_parts, load_end_to_end_model

TEXTS = ["a good film", "dull, dull and far too long", "fine", ""]
# Loads the SavedModel with TensorFlow alone and prints each signature's probabilities.
SERVE = """
import json, sys
import numpy as np
import tensorflow as tf
folder, ids, texts = sys.argv[1], np.load(sys.argv[2]), json.loads(sys.argv[3])
served = tf.saved_model.load(folder)
out = {"signatures": sorted(served.signatures)}
if "serve" in served.signatures:  # serving_default is its alias
    out["texts"] = served.signatures["serving_default"](tf.constant(texts))["probabilities"]
out["token_ids"] = served.signatures["serve_token_ids"](tf.constant(ids))["probabilities"]
print(json.dumps({key: value if key == "signatures" else value.numpy().tolist()
                  for key, value in out.items()}))
"""


@pytest.fixture(scope="module")
def runs_to_export(tiny_run_dir, tmp_path_factory):
    """The tiny run, a copy with one of its two heads pruned, and one quantized to int8."""
    root = tmp_path_factory.mktemp("export")
    run_dir = shutil.copytree(tiny_run_dir, root / "tiny",
                              ignore=shutil.ignore_patterns("eval", "attention"))
    assert compress.main([str(run_dir), "--prune-heads", "1", "--order", "random"]) == 0
    assert compress.main([str(run_dir), "--int8"]) == 0
    return {"tiny": run_dir, "pruned": root / "tiny_pruned", "int8": root / "tiny_int8"}


# What a tokenizer runs: TextVectorization's and tensorflow-text's WordPiece ops.
TOKENIZER_OPS = ("StringLower", "RegexReplace", "StringSplit", "LookupTableFind", "Wordpiece",
                 "NormalizeUTF8")


def graph_ops(folder):
    """Every op type of a SavedModel's graph and its functions."""
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((folder / "saved_model.pb").read_bytes())
    graph = saved.meta_graphs[0].graph_def
    return ({node.op for node in graph.node}
            | {node.op for function in graph.library.function for node in function.node_def})


def tokenizer_ops(folder):
    return sorted(op for op in graph_ops(folder) if any(word in op for word in TOKENIZER_OPS))


@pytest.mark.parametrize("name", ["tiny", "pruned", "int8"])
@pytest.mark.parametrize("token_ids_only", [False, True], ids=["both", "token_ids_only"])
def test_the_saved_model_serves_what_the_run_predicts(runs_to_export, tmp_path, name,
                                                      token_ids_only):
    run_dir = runs_to_export[name]
    out = tmp_path / "served"
    assert export.main([str(run_dir), "--out", str(out),
                        *(["--token-ids-only"] if token_ids_only else [])]) == 0
    model = load_end_to_end_model(run_dir / runs.MODEL_FILE)
    expected = np.asarray(model(np.array(TEXTS, dtype=object), training=False))
    ids = np.asarray(get_model_parts(model)[0](np.array(TEXTS, dtype=object)), np.int64)
    np.save(tmp_path / "ids.npy", ids)
    served = subprocess.run(
        [sys.executable, "-c", SERVE, str(out), str(tmp_path / "ids.npy"), json.dumps(TEXTS)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert served.returncode == 0, served.stderr[-2000:]
    result = json.loads(served.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(result["token_ids"], expected, atol=1e-5)
    if token_ids_only:
        assert result["signatures"] == ["serve_token_ids", "serving_default"]
        assert "texts" not in result
        assert tokenizer_ops(out) == []
        assert graph_ops(out) <= set(dir(tf.raw_ops))  # TensorFlow's own ops only
    else:
        assert result["signatures"] == ["serve", "serve_token_ids", "serving_default"]
        np.testing.assert_allclose(result["texts"], expected, atol=1e-5)
        assert "StringLower" in tokenizer_ops(out)  # the tokenizer is inside


def test_a_missing_run_or_an_existing_folder_is_one_line_and_exit_2(runs_to_export, tmp_path,
                                                                    capsys):
    assert export.main([str(tmp_path / "nothere")]) == 2  # before TensorFlow's work
    missing = tmp_path / "nothere"
    assert capsys.readouterr().err == f"export.py: error: {missing}: no such run folder\n"
    taken = tmp_path / "taken"
    taken.mkdir()
    assert export.main([str(runs_to_export["tiny"]), "--out", str(taken)]) == 2
    assert capsys.readouterr().err == (f"export.py: error: {taken} already exists: pass --out "
                                       "DIR for a new folder, or remove it\n")
    assert list(taken.iterdir()) == []


def test_keras_own_model_export_serves_the_same(runs_to_export, tmp_path):
    """`model.export(DIR)`, Keras' one line, keeps working on a loaded `model.keras`."""
    model = load_end_to_end_model(runs_to_export["tiny"] / runs.MODEL_FILE)
    model.export(str(tmp_path / "exported"), verbose=False)
    expected = np.asarray(model(np.array(TEXTS, dtype=object), training=False))
    script = ("import json, sys\nimport tensorflow as tf\n"
              "served = tf.saved_model.load(sys.argv[1])\n"
              "out = served.serve(tf.constant(json.loads(sys.argv[2])))\n"
              "print(json.dumps(out.numpy().tolist()))\n")
    served = subprocess.run([sys.executable, "-c", script, str(tmp_path / "exported"),
                             json.dumps(TEXTS)], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert served.returncode == 0, served.stderr[-2000:]
    np.testing.assert_allclose(json.loads(served.stdout.strip().splitlines()[-1]), expected,
                               atol=1e-5)
