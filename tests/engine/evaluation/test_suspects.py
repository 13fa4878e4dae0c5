"""evaluate.py --suspects on a tiny run whose training file has 5% of its labels flipped."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import evaluate
import train
from engine.evaluation.suspects import SET_COLUMNS
from inspection.methods.data_map import example_statistics
from run_folder import runs, saved_run
from tests.helpers import tiny_args
from tests.review_fixture import TOPICS, write_flipped_fixture, write_flipped_label_sets_fixture

COLUMNS = [
    "position",
    "text",
    "label",
    "model_label",
    "score",
    "confidence",
    "variability",
    "correctness",
    "aum",
    "epochs",
]


@pytest.fixture(scope="module")
def flipped_run(tmp_path_factory):
    """(run folder, flipped texts): the tiny model trained 5 epochs on 600 reviews, every
    20th with the wrong label, then ranked with --suspects 1000 (more than the split)."""
    root = tmp_path_factory.mktemp("flipped")
    flipped = write_flipped_fixture(root / "flipped.csv")
    assert (
        train.main(
            tiny_args(
                root, root / "flipped.csv", "training.steps_per_epoch=null", "training.epochs=5"
            )
        )
        == 0
    )
    assert evaluate.main([str(root / "tiny"), "--suspects", "1000"]) == 0
    return root / "tiny", flipped


def test_the_flipped_labels_come_first(flipped_run):
    run_dir, flipped = flipped_run
    suspects = pd.read_csv(run_dir / "eval" / "train" / "suspects.csv", keep_default_na=False)
    assert list(suspects.columns) == COLUMNS
    texts, labels = saved_run.load_run(run_dir).load_split("train")
    assert len(suspects) == len(texts) == 480  # all of them: 1000 is more than the split
    is_flipped = suspects["text"].isin(flipped).to_numpy()
    count = int(is_flipped.sum())
    assert 15 <= count <= 35  # about 5% of the 480 training texts
    assert is_flipped[:count].mean() >= 0.9  # measured: 23 of the first 24
    assert roc_auc_score(is_flipped, suspects["score"]) >= 0.98  # measured: 0.9995
    assert suspects["score"].is_monotonic_decreasing
    # The score is the negative area under the margin, from the recorded file.
    statistics = example_statistics(pd.read_parquet(run_dir / runs.DYNAMICS_FILE), len(texts))
    first = suspects.iloc[0]
    assert first["score"] == pytest.approx(-statistics.at[first["position"], "aum"], abs=1e-4)
    assert first["text"] == texts[first["position"]]
    assert first["label"] == ["negative", "positive"][labels[first["position"]]]


def test_the_data_map_holds_the_regions_and_every_suspect(flipped_run):
    run_dir, _ = flipped_run
    folder = run_dir / "eval" / "train"
    report = json.loads((folder / "data_map.json").read_text())
    assert report["split"] == "train" and report["examples"] == 480 and report["epochs"] == 5
    assert sum(report["regions"].values()) == pytest.approx(1, abs=1e-3)
    assert set(report["regions"]) == {"easy-to-learn", "ambiguous", "hard-to-learn"}
    ranks = sorted(
        point["suspect_rank"] for point in report["points"] if point["suspect_rank"] is not None
    )
    assert ranks == list(range(1, 481))
    assert (folder / "data_map.png").stat().st_size > 10_000
    statistics = pd.read_csv(folder / "suspects.csv")
    point = report["points"][0]
    row = statistics[statistics["position"] == point["position"]].iloc[0]
    assert point["confidence"] == pytest.approx(row["confidence"], abs=1e-3)


def test_a_run_without_dynamics_or_with_other_data_is_a_one_line_error(
    flipped_run, tmp_path, capsys
):
    run_dir, _ = flipped_run
    without = tmp_path / "without"
    shutil.copytree(run_dir, without)
    (without / runs.DYNAMICS_FILE).unlink()
    capsys.readouterr()
    assert evaluate.main([str(without), "--suspects"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"evaluate.py: error: {without} has no dynamics.parquet: --suspects ranks labels by "
        "the training dynamics; train it again with --set training.dynamics=true (on by "
        "default when the training split is in memory)"
    )
    assert evaluate.main([str(run_dir), "--suspects", "0"]) == 2
    assert "argument --suspects: must be at least 1, got 0" in capsys.readouterr().err

    # The run's file rewritten: the training split is no longer the one recorded.
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    data = pd.read_csv(saved_run.load_run(run_dir).config.dataset.train_file)
    data["text"] = data["text"] + " again"
    data.to_csv(tmp_path / "changed.csv", index=False)
    config = (other / "config.yaml").read_text()
    (other / "config.yaml").write_text(
        config.replace(
            str(saved_run.load_run(run_dir).config.dataset.train_file),
            str(tmp_path / "changed.csv"),
        )
    )
    assert evaluate.main([str(other), "--suspects"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "is not the one training recorded" in error[0]
    kept = [folder / "eval" / "train" / "suspects.csv" for folder in (other, run_dir)]
    assert kept[0].read_text() == kept[1].read_text()  # nothing replaced


def test_a_later_evaluation_keeps_the_suspects(flipped_run, capsys):
    run_dir, _ = flipped_run
    before = (run_dir / "eval" / "train" / "suspects.csv").read_text()
    assert evaluate.main([str(run_dir)]) == 0
    assert (run_dir / "eval" / "train" / "suspects.csv").read_text() == before
    assert np.isfinite(pd.read_csv(run_dir / "eval" / "train" / "suspects.csv")["aum"]).all()


def test_an_evaluation_of_a_file_named_train_and_the_suspects_keep_each_others_files(
    flipped_run, tmp_path, capsys
):
    run_dir, _ = flipped_run
    folder = run_dir / "eval" / "train"
    suspects = (folder / "suspects.csv").read_text()
    named_train = tmp_path / "train.csv"  # its reports go to eval/train/ too
    shutil.copy(saved_run.load_run(run_dir).config.dataset.train_file, named_train)
    assert evaluate.main([str(run_dir), "--data", str(named_train), "--slices"]) == 0
    assert (folder / "suspects.csv").read_text() == suspects
    assert (folder / "data_map.json").is_file() and (folder / "slices.json").is_file()
    metrics = (folder / "metrics.json").read_text()
    assert evaluate.main([str(run_dir), "--suspects", "5"]) == 0
    assert (folder / "metrics.json").read_text() == metrics
    assert (folder / "slices.json").is_file()
    assert len(pd.read_csv(folder / "suspects.csv")) == 5
    assert "(all that were ranked, and the data map, in" in capsys.readouterr().out


def test_a_label_sets_flipped_labels_come_first_with_the_clean_ones_last(tmp_path, capsys):
    """Each of the 600 texts has 3 (text, topic) labels; one topic of every 20th text is
    flipped. The negative control: no clean label may outrank most flipped ones."""
    flipped = write_flipped_label_sets_fixture(tmp_path / "sets.csv")
    sets = ("dataset.label_column=topics", "dataset.label_separator=|")
    learns = ("training.steps_per_epoch=null", "training.epochs=8", "training.learning_rate=0.005")
    assert train.main(tiny_args(tmp_path, tmp_path / "sets.csv", *sets, *learns)) == 0
    run_dir = tmp_path / "tiny"
    dynamics = pd.read_parquet(run_dir / runs.DYNAMICS_FILE)
    assert dynamics.groupby(["epoch", "position"]).size().eq(3).all()  # a row per label
    capsys.readouterr()
    assert evaluate.main([str(run_dir), "--suspects", "5000"]) == 0
    assert "| position | label | model label |" in capsys.readouterr().out
    suspects = pd.read_csv(run_dir / "eval" / "train" / "suspects.csv", keep_default_na=False)
    assert list(suspects.columns) == SET_COLUMNS
    texts, labels = saved_run.load_run(run_dir).load_split("train")
    assert len(suspects) == 3 * len(texts)  # every (example, label) of the split
    is_flipped = np.array([pair in flipped for pair in zip(suspects["text"], suspects["label"])])
    count = int(is_flipped.sum())
    assert 15 <= count <= 30  # 30 flipped in all, about 80% in the training split
    assert is_flipped[:count].mean() >= 0.9  # measured: 22 of the first 22
    assert roc_auc_score(is_flipped, suspects["score"]) >= 0.99  # measured: 1.0
    # given: what the file says, of the text's own row in the split.
    names = sorted(TOPICS)
    first = suspects.iloc[0]
    assert first["given"] == labels[first["position"]][names.index(first["label"])]
    assert first["text"] == texts[first["position"]]
    report = json.loads((run_dir / "eval" / "train" / "data_map.json").read_text())
    top = next(point for point in report["points"] if point["suspect_rank"] == 1)
    sign = "+" if first["given"] else "−"
    assert (top["position"], top["label"]) == (first["position"], sign + first["label"])
