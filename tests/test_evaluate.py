"""evaluate.py on a tiny trained run: every output file, comparisons, attention export and
error cases."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

import evaluate


@pytest.fixture
def run_dir(tiny_run_dir):
    return tiny_run_dir


def test_writes_every_report_for_the_test_split(run_dir, capsys):
    assert evaluate.main([str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "macro_f1" in out and f"{run_dir}/eval/test/" in out
    eval_dir = run_dir / "eval" / "test"
    metrics = json.loads((eval_dir / "metrics.json").read_text())
    trained = json.loads((run_dir / "metrics.json").read_text())["test"]
    # The saved end-to-end model scores the raw test texts exactly as training scored ids.
    assert metrics["accuracy"] == trained["accuracy"]
    assert metrics["loss"] == pytest.approx(trained["loss"], abs=1e-6)
    assert set(metrics) >= {"accuracy", "macro_f1", "weighted_f1", "loss"}

    per_class = pd.read_csv(eval_dir / "per_class.csv")
    assert list(per_class.columns) == ["class", "precision", "recall", "f1", "support"]
    assert list(per_class["class"]) == ["negative", "positive"]
    assert per_class["support"].sum() == metrics["num_examples"]

    matrix = pd.read_csv(eval_dir / "confusion_matrix.csv", index_col=0)
    assert list(matrix.columns) == ["negative", "positive"]
    assert matrix.to_numpy().sum() == metrics["num_examples"]
    assert (eval_dir / "confusion_matrix.png").read_bytes()[:4] == b"\x89PNG"

    predictions = pd.read_csv(eval_dir / "predictions.csv")
    assert list(predictions.columns)[:4] == ["text", "true_label", "predicted_label", "probability"]
    assert len(predictions) == metrics["num_examples"]
    accuracy = (predictions.true_label == predictions.predicted_label).mean()
    assert accuracy == pytest.approx(metrics["accuracy"])
    worst = pd.read_csv(eval_dir / "worst_mistakes.csv")
    assert (worst.true_label != worst.predicted_label).all()
    assert list(worst.probability) == sorted(worst.probability, reverse=True)


def test_validation_split_and_own_files_and_side_by_side(run_dir, tmp_path, capsys):
    extra = tmp_path / "extra.csv"
    extra.write_text("text,label\nsuch a wonderful film,positive\na dull boring plot,negative\n")
    assert evaluate.main([str(run_dir), str(run_dir), "--split", "validation"]) == 0
    out = capsys.readouterr().out
    assert out.count("validation") >= 2  # One row per run.
    assert (run_dir / "eval" / "validation" / "metrics.json").exists()
    assert evaluate.main([str(run_dir), "--data", str(extra)]) == 0
    metrics = json.loads((run_dir / "eval" / "extra" / "metrics.json").read_text())
    assert metrics["num_examples"] == 2


def error_of(argv, capsys):
    capsys.readouterr()
    assert evaluate.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("evaluate.py: error: ") and "\n" not in error
    return error


def test_missing_run_folder(tmp_path, capsys):
    assert "no such run folder" in error_of([str(tmp_path / "nope")], capsys)


def test_unfinished_run_is_named(tmp_path, capsys):
    (tmp_path / "run.partial").mkdir()
    assert "unfinished run" in error_of([str(tmp_path / "run")], capsys)


def test_missing_model_file(run_dir, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").unlink()
    assert "model.keras: missing" in error_of([str(broken)], capsys)


def test_corrupt_model_file(run_dir, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").write_bytes(b"not a zip file")
    assert "model.keras: cannot load the model" in error_of([str(broken)], capsys)


def test_unknown_labels_in_own_file(run_dir, tmp_path, capsys):
    extra = tmp_path / "extra.csv"
    extra.write_text("text,label\ngreat,thumbs up\n")
    assert "labels ['thumbs up']" in error_of([str(run_dir), "--data", str(extra)], capsys)


def test_export_attention_of_the_first_examples(run_dir, capsys):
    from inspection import load_attention
    from models import load_end_to_end_model

    capsys.readouterr()
    assert evaluate.main([str(run_dir), "--export-attention", "5", "--heatmaps", "3"]) == 0
    out = capsys.readouterr().out
    attention_dir = run_dir / "attention" / "test"
    assert f"attention viewer: {attention_dir / 'index.html'}" in out
    for name in ("meta.json", "manifest.jsonl", "attention.npz", "index.html"):
        assert (attention_dir / name).is_file()
    assert (attention_dir / "heatmaps" / "00002_heads.png").read_bytes()[:4] == b"\x89PNG"
    assert not (attention_dir / "heatmaps" / "00003_heads.png").exists()
    assert not attention_dir.with_name("test.partial").exists()
    meta = json.loads((attention_dir / "meta.json").read_text())
    assert (meta["viewer_examples"], meta["heatmap_examples"]) == (32, 3)

    predictions = pd.read_csv(run_dir / "eval" / "test" / "predictions.csv")
    with load_attention(attention_dir) as export:
        assert export.example_ids == ["00000", "00001", "00002", "00003", "00004"]
        assert export.class_names == ["negative", "positive"]
        assert export.pooling == "mean" and export.num_layers == 1 and export.num_heads == 2
        assert export.run_info["run_dir"] == str(run_dir)
        assert export.run_info["data"] == "test"
        assert export.max_probability_difference is None
        manifest = export.manifest
        assert list(manifest.text) == list(predictions.text[:5])
        assert list(manifest.true_label) == list(predictions.true_label[:5])
        assert list(manifest.predicted_label) == list(predictions.predicted_label[:5])
        probabilities = np.array(list(manifest.probabilities), dtype=np.float32)  # (5, C)
        # The evaluation's fast-path probabilities (written with 4 decimals) and the model's.
        np.testing.assert_allclose(
            probabilities.max(axis=-1), predictions.probability[:5], atol=1e-4
        )
        model = load_end_to_end_model(run_dir / "model.keras")
        expected = np.asarray(model(np.array(list(manifest.text), dtype=str), training=False))
        np.testing.assert_allclose(probabilities, expected, atol=1e-4)
        record = export.record("00002")
        scores = export.attention_scores("00002")  # (layers, heads, T, T)
        assert scores.shape == (1, 2, record.num_tokens, record.num_tokens)
        np.testing.assert_allclose(scores.sum(axis=-1), 1.0, atol=1e-5)


def test_exports_go_to_their_own_folders_and_never_replace_one_unasked(run_dir, tmp_path, capsys):
    from inspection import load_attention

    assert (
        evaluate.main([str(run_dir), "--split", "validation", "--export-attention-ids", "3", "1"])
        == 0
    )
    validation_dir = run_dir / "attention" / "validation"
    predictions = pd.read_csv(run_dir / "eval" / "validation" / "predictions.csv")
    with load_attention(validation_dir) as export:
        assert export.example_ids == ["00003", "00001"]
        assert list(export.manifest.text) == [predictions.text[3], predictions.text[1]]
        assert export.run_info["data"] == "validation"
    before = (validation_dir / "meta.json").read_text()

    # The same export again: refused before any work, the first one kept.
    error = error_of([str(run_dir), "--split", "validation", "--export-attention", "2"], capsys)
    assert error.endswith(
        f"{validation_dir} already holds an export: pass --overwrite to "
        "replace it, or --out DIR to write this one elsewhere"
    )
    assert (validation_dir / "meta.json").read_text() == before

    texts = tmp_path / "my.txt"
    texts.write_text("such a wonderful film\n\na dull boring plot\n")
    capsys.readouterr()
    assert evaluate.main([str(run_dir), "--texts-file", str(texts), "--viewer-examples", "1"]) == 0
    out = capsys.readouterr().out
    assert "accuracy" not in out and "attention viewer:" in out
    with load_attention(run_dir / "attention" / "my") as export:
        assert list(export.manifest.text) == ["such a wonderful film", "a dull boring plot"]
        assert export.example_ids == ["00001", "00003"]  # their line numbers
        assert export.manifest.true_label.isna().all()
    assert (
        json.loads((run_dir / "attention" / "my" / "meta.json").read_text())["viewer_examples"] == 1
    )
    assert (validation_dir / "meta.json").read_text() == before  # still there

    elsewhere = tmp_path / "elsewhere"
    assert evaluate.main([str(run_dir), "--texts-file", str(texts), "--out", str(elsewhere)]) == 0
    assert (elsewhere / "index.html").is_file()
    assert (
        evaluate.main(
            [str(run_dir), "--split", "validation", "--export-attention", "2", "--overwrite"]
        )
        == 0
    )
    with load_attention(validation_dir) as export:
        assert export.example_ids == ["00000", "00001"]


def test_input_files_that_do_not_exist_are_named_as_typed(run_dir, capsys):
    assert error_of([str(run_dir), "--data", "nothere.csv"], capsys) == (
        "evaluate.py: error: --data nothere.csv: no such file"
    )
    assert error_of([str(run_dir), "--texts-file", "nothere.txt"], capsys) == (
        "evaluate.py: error: --texts-file nothere.txt: no such file"
    )
    model = run_dir / "model.keras"
    assert error_of([str(model)], capsys) == (
        f"evaluate.py: error: {model} is a file, not a run folder: pass the folder that "
        f"holds it, {run_dir}"
    )
    assert "--out, --overwrite and --methods are for an attention export" in error_of(
        [str(run_dir), "--overwrite"], capsys
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--export-attention-ids", "3", "999"], "999 is not an example of 'test' (24 examples)"),
        (["--export-attention-ids", "2", "2"], "2 is given twice"),
        (["--export-attention-ids", "-1"], "-1 is not an example id"),
        (["--export-attention", "0"], "argument --export-attention: must be at least 1, got 0"),
    ],
)
def test_export_attention_bad_ids(run_dir, tmp_path, capsys, args, message):
    out = ["--out", str(tmp_path / "export")]  # RUN_DIR/attention/test/ may exist already
    assert message in error_of([str(run_dir), *args, *out], capsys)
    assert not (tmp_path / "export").exists()


def test_export_attention_empty_texts_file(run_dir, tmp_path, capsys):
    # The file checks themselves: tests/data/reading/test_texts_file.py.
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    assert "no texts in the file" in error_of([str(run_dir), "--texts-file", str(empty)], capsys)


def test_measurements_are_kept_only_on_the_data_they_measured(run_dir, tmp_path, capsys):
    copy = shutil.copytree(run_dir, tmp_path / "run", ignore=shutil.ignore_patterns("eval"))
    folder = copy / "eval" / "test"
    assert evaluate.main([str(copy), "--slices"]) == 0
    record = json.loads((folder / "data.json").read_text())
    assert record["source"] == "test" and record["examples"] > 0 and len(record["sha256"]) == 64
    assert evaluate.main([str(copy)]) == 0  # the same split: kept
    assert (folder / "slices.json").is_file()
    capsys.readouterr()
    # A file named like the split lands in the same folder: its data is other data.
    other = tmp_path / "test.csv"
    other.write_text("text,label\nsuch a wonderful film,positive\na dull boring plot,negative\n")
    assert evaluate.main([str(copy), "--data", str(other)]) == 0
    assert not (folder / "slices.json").exists()
    assert (
        f"{folder}: slices.json, slices.md measured other data than this evaluation's: "
        "not kept; measure again with their flags"
    ) in capsys.readouterr().out
    assert json.loads((folder / "data.json").read_text())["examples"] == 2
    # A folder from before data.json: kept for the run's own split, never for a file.
    assert evaluate.main([str(copy), "--slices"]) == 0
    (folder / "data.json").unlink()
    assert evaluate.main([str(copy)]) == 0 and (folder / "slices.json").is_file()
    (folder / "data.json").unlink()
    assert evaluate.main([str(copy), "--data", str(other)]) == 0
    assert not (folder / "slices.json").exists()
