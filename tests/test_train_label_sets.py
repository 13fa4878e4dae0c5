"""Multi-label data end to end: a column of label sets or 0/1 columns trains a sigmoid
classifier whose thresholds are chosen on validation and kept; evaluate, predict and the
SavedModel give sets; bad input is one line."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

import evaluate
import predict
import train
from engine.calibration import expected_calibration_error
from engine.evaluation.faithfulness import tokenize
from run_folder import saved_run
from tests.helpers import tiny_args
from tests.review_fixture import TOPICS, write_label_sets_fixture

LEARNS = ("training.steps_per_epoch=null", "training.epochs=15", "training.learning_rate=0.005")
SETS = ("dataset.label_column=topics", "dataset.label_separator=|")


@pytest.fixture(scope="module")
def sets_run(tmp_path_factory):
    data = write_label_sets_fixture(tmp_path_factory.mktemp("data") / "topics.csv")
    root = tmp_path_factory.mktemp("runs")
    assert train.main(tiny_args(root, data, *SETS, *LEARNS)) == 0
    return root / "tiny"


def test_a_column_of_label_sets_trains_and_keeps_its_thresholds(sets_run):
    metrics = json.loads((sets_run / "metrics.json").read_text())
    assert metrics["class_names"] == sorted(TOPICS)  # " | " read as "|", spaces stripped
    for split in ("validation", "test"):
        assert {"micro_f1", "macro_f1", "samples_f1", "subset_accuracy", "hamming_loss"} <= set(
            metrics[split]
        )
    assert metrics["test"]["micro_f1"] >= 0.9
    thresholds = json.loads((sets_run / "thresholds.json").read_text())
    assert sorted(thresholds) == sorted(TOPICS) and all(0 < t < 1 for t in thresholds.values())
    assert "val_micro_f1" in (sets_run / "history.csv").read_text().splitlines()[0]


def test_each_label_is_calibrated_in_the_saved_model(sets_run):
    temperatures = json.loads((sets_run / "metrics.json").read_text())["calibration"]["temperature"]
    assert sorted(temperatures) == sorted(TOPICS)
    run = saved_run.load_run(sets_run)
    texts, labels = run.load_split("validation")
    probabilities = np.asarray(run.model.predict(np.asarray(texts, object), verbose=0))
    # The saved model gives the probabilities the reported ECE was computed from.
    ece = expected_calibration_error(labels, probabilities, multi_label=True)
    calibration = json.loads((sets_run / "metrics.json").read_text())["calibration"]
    assert ece == pytest.approx(calibration["validation"]["ece_after"], abs=1e-4)
    # Validation is all right here: the prior keeps the temperatures from the bound.
    assert all(0.1 < t < 1 for t in temperatures.values())


def test_evaluate_reports_label_sets_that_predictions_csv_reproduces(sets_run):
    assert evaluate.main([str(sets_run)]) == 0
    folder = sets_run / "eval" / "test"
    per_label = pd.read_csv(folder / "per_label.csv")
    thresholds = json.loads((sets_run / "thresholds.json").read_text())
    assert dict(zip(per_label["label"], per_label["threshold"])) == pytest.approx(thresholds)
    table = pd.read_csv(folder / "predictions.csv", keep_default_na=False)
    names = sorted(TOPICS)
    truth = np.array([[name in row.split("|") for name in names] for row in table.true_labels])
    probabilities = table[[f"p({name})" for name in names]].to_numpy()
    predicted = probabilities >= np.array([thresholds[name] for name in names]) - 5e-5
    reported = json.loads((folder / "metrics.json").read_text())
    assert reported["micro_f1"] == pytest.approx(f1_score(truth, predicted, average="micro"))
    assert reported["subset_accuracy"] == pytest.approx((truth == predicted).all(1).mean())


def test_predict_gives_each_text_its_set(sets_run, capsys):
    capsys.readouterr()
    texts = ["the coach and the senate vote", "a film"]
    assert predict.main([str(sets_run), *texts, "--json"]) == 0
    predictions = json.loads(capsys.readouterr().out)["predictions"]
    assert predictions[0]["predicted_labels"] == ["politics", "sports"]
    assert predictions[1]["predicted_labels"] == []


def test_the_saved_model_gives_sets(sets_run, tmp_path):
    import tensorflow as tf

    import export

    assert export.main([str(sets_run), "--out", str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served"))
    outputs = served.signatures["serving_default"](tf.constant(["goal team chip code"]))
    thresholds = json.loads((sets_run / "thresholds.json").read_text())
    cut = np.array([thresholds[name] for name in sorted(TOPICS)])
    probabilities, labels = outputs["probabilities"].numpy(), outputs["labels"].numpy()
    np.testing.assert_array_equal(labels, probabilities >= cut)
    assert labels[0].tolist() == [False, True, True]


def test_slices_are_measured_on_micro_f1(sets_run, capsys):
    capsys.readouterr()
    assert evaluate.main([str(sets_run), "--slices", "--min-count", "5"]) == 0
    assert "micro-F1" in capsys.readouterr().out
    folder = sets_run / "eval" / "test"
    report = json.loads((folder / "slices.json").read_text())
    assert report["metric"] == "micro_f1" and report["examples"] == 30
    table = pd.read_csv(folder / "predictions.csv", keep_default_na=False)
    names = sorted(TOPICS)
    truth = np.array([[name in row.split("|") for name in names] for row in table.true_labels])
    predicted = np.array(
        [[name in row.split("|") for name in names] for row in table.predicted_labels]
    )
    entry = next(entry for entry in report["slices"] if entry["slice"] == "label: tech")
    rows = truth[:, names.index("tech")]
    assert entry["size"] == rows.sum()
    assert entry["micro_f1"] == pytest.approx(
        f1_score(truth[rows], predicted[rows], average="micro")
    )
    assert "micro-F1 [95% CI]" in (folder / "slices.md").read_text()


def test_faithfulness_explains_each_texts_most_probable_label(sets_run):
    assert evaluate.main([str(sets_run), "--faithfulness", "30"]) == 0
    report = json.loads((sets_run / "eval" / "test" / "faithfulness.json").read_text())
    best = report["methods"][report["best_method"]]
    # The topic words decide the labels: removing the top-ranked ones first lowers the
    # most probable label's probability more than removing random ones (measured: 0.41
    # against 0.06, the difference's interval well above 0).
    assert best["vs_random"]["comprehensiveness"]["ci95"][0] > 0.1


def test_heads_are_measured_with_the_binary_cross_entropy(sets_run):
    import keras

    from inspection.methods.heads import head_ablation

    assert evaluate.main([str(sets_run), "--heads", "30"]) == 0
    report = json.loads((sets_run / "eval" / "test" / "heads.json").read_text())
    run = saved_run.load_run(sets_run)
    texts, labels = run.load_split("test")
    token_ids = tokenize(run, texts[:30])
    classifier = run.parts[1]
    drops, rises, _ = head_ablation(classifier, token_ids, labels[:30])
    # The full model's loss is its BCE: masking head (0, 0) changes it by what the
    # report says, recomputed here from the model's probabilities.
    full = np.asarray(classifier(token_ids, training=False))
    bce = float(
        keras.losses.binary_crossentropy(labels[:30].astype("float32"), full).numpy().mean()
    )
    assert 0 < bce < 0.7  # a learnt model's BCE, not a softmax cross-entropy of sets
    first = next(h for h in report["heads"] if (h["layer"], h["head"]) == (0, 0))
    assert first["ablation_loss_increase"] == pytest.approx(rises[0, 0], abs=1e-5)
    assert first["ablation_accuracy_drop"] == pytest.approx(drops[0, 0], abs=1e-6)
    assert all(np.isfinite(h["importance"]) and h["importance"] >= 0 for h in report["heads"])


def test_compare_sets_two_runs_sets_at_their_own_thresholds(sets_run, tmp_path):
    other = tmp_path / "strict"
    shutil.copytree(sets_run, other, ignore=shutil.ignore_patterns("eval"))
    names = sorted(TOPICS)
    (other / "thresholds.json").write_text(json.dumps({name: 0.999999 for name in names}))
    assert evaluate.main([str(sets_run), "--compare", str(other)]) == 0
    folder = sets_run / "eval" / "test"
    (path,) = folder.glob("compare_strict-*.json")
    report = json.loads(path.read_text())
    table = pd.read_csv(folder / "predictions.csv", keep_default_na=False)
    assert report["metric"] == "subset_accuracy"
    # The strict copy gives every text the empty set: it agrees where the run does, and
    # is right on the texts without a topic.
    assert report["agreement"] == pytest.approx((table["predicted_labels"] == "").mean())
    assert report["other_accuracy"] == pytest.approx((table["true_labels"] == "").mean())
    assert report["accuracy"] == pytest.approx(
        (table["true_labels"] == table["predicted_labels"]).mean()
    )
    assert all(entry["other_label"] == "" for entry in report["disagreements"])
    assert "subset accuracy" in path.with_suffix(".md").read_text()


def test_what_evaluate_does_not_yet_measure_is_one_line(sets_run, capsys):
    for flag in (["--tokens"],):
        capsys.readouterr()
        assert evaluate.main([str(sets_run), *flag]) == 2
        error = capsys.readouterr().err.strip()
        assert "do" in error and "not yet" in error and error.count("\n") == 0


def test_zero_one_columns_train_with_their_order_as_the_classes(tmp_path):
    data = write_label_sets_fixture(tmp_path / "columns.csv", columns=True)
    columns = "dataset.label_columns=[sports, politics, tech]"
    assert train.main(tiny_args(tmp_path, data, columns, *LEARNS)) == 0
    metrics = json.loads((tmp_path / "tiny" / "metrics.json").read_text())
    assert metrics["class_names"] == ["sports", "politics", "tech"]
    assert metrics["test"]["micro_f1"] >= 0.9


@pytest.mark.parametrize(
    "content, overrides, message",
    [
        (
            "text,sports,politics\na b,1,0\nc d,2,1\n",
            ("dataset.label_columns=[sports, politics]",),
            "row 2 (line 3) column 'sports' holds '2'; a column of dataset.label_columns "
            "holds 0 or 1",
        ),
        (
            "text,topics\na b,x\n",
            ("dataset.label_separator=|", "dataset.label_columns=[a, b]"),
            "not both",
        ),
    ],
)
def test_bad_label_sets_are_one_line(tmp_path, capsys, content, overrides, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert train.main(tiny_args(tmp_path, path, *overrides)) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and error.count("\n") == 0


def test_a_data_file_with_an_unknown_label_is_one_line(sets_run, tmp_path, capsys):
    path = tmp_path / "new.csv"
    path.write_text("text,topics\ngoal team,sports|cooking\n")
    capsys.readouterr()
    assert evaluate.main([str(sets_run), "--data", str(path)]) == 2
    assert "has labels ['cooking'] that the model does not know" in capsys.readouterr().err


def test_explain_ranks_the_words_toward_a_chosen_label(sets_run, capsys):
    text = "the coach and the senate vote"  # sports and politics
    for label, word in (("sports", "coach"), ("politics", "senate")):
        capsys.readouterr()
        args = [str(sets_run), text, "--explain", "--label", label, "--json"]
        assert predict.main([*args, "--method", "leave_one_out"]) == 0
        (prediction,) = json.loads(capsys.readouterr().out)["predictions"]
        assert prediction["explained_label"] == label
        ranked = [token["token"] for token in prediction["tokens"]]
        assert ranked[0] == word, ranked  # each label's own word first
    assert predict.main([str(sets_run), text, "--explain", "--label", "art"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--label 'art' is not a class of" in error and error.count("\n") == 0
