"""bench_own_file: the user-style files, one file's runs end to end (a recipe that trains in
seconds, no checkpoint), the TF-IDF + LR beside it, the goal and the reuse of runs."""

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_own_file as bench  # noqa: E402
import own_file_data  # noqa: E402

from tests.helpers import TINY_RECIPE  # noqa: E402

HIERARCHIES = {"alt", "comp", "misc", "rec", "sci", "soc", "talk"}


def read_rows(path):
    with open(path, newline="") as file:
        reader = csv.reader(file)
        return next(reader), list(reader)


def test_a_question_runs_from_its_opener_to_a_stop_phrase_or_the_next_question():
    first = own_file_data.first_question
    assert first("re printers hi is there a driver for my printer thanks in advance") == (
        "is there a driver for my printer?"
    )
    assert first("how do i fix it does anyone know a shop") == "how do i fix it?"
    assert first("in article bob writes can anyone help i m stuck") is None  # 3 words
    assert first("nothing asked here") is None
    assert len(first("does anyone " + "know " * 40).split()) == own_file_data.QUESTION_WORDS


def test_the_files_are_samples_of_short_labelled_texts_written_once(tmp_path, builtin_data_dir):
    notes = {
        "reviews": "12,752 sentences; 300 sampled",
        "news": "7,674 articles cut to 40 words; 300 sampled",
        # The misc.forsale posts ask little.
        "questions": "5,394 questions in 18,821 posts; classes under 50 dropped: misc "
        "(30); 300 sampled",
    }
    stats = {}
    for name in own_file_data.FILES:
        path, stats[name] = own_file_data.user_file(name, 300, tmp_path, builtin_data_dir)
        header, rows = read_rows(path)
        assert header == ["text", "label"] and len(rows) == stats[name]["rows"] == 300
        labels = {label for _, label in rows}
        assert len(labels) == stats[name]["classes"] and stats[name]["note"] == notes[name]
        words = [len(text.split()) for text, _ in rows]
        assert stats[name]["median_words"] == np.median(words)
        if name == "reviews":
            assert labels == {"fresh", "rotten"}
        if name == "news":
            assert labels == {
                "acq",
                "crude",
                "earn",
                "grain",
                "interest",
                "money-fx",
                "ship",
                "trade",
            }
            assert max(words) == own_file_data.NEWS_WORDS
        if name == "questions":
            assert labels <= HIERARCHIES - {"misc"} and len(labels) == 6
            assert all(text.endswith("?") for text, _ in rows)
            assert 4 <= min(words) and max(words) <= own_file_data.QUESTION_WORDS
    # Deterministic: the same rows, so the file is not written again.
    written = (tmp_path / "news.csv").stat().st_mtime_ns
    assert own_file_data.user_file("news", 300, tmp_path, builtin_data_dir)[1] == stats["news"]
    assert (tmp_path / "news.csv").stat().st_mtime_ns == written


def test_a_file_trains_from_a_config_naming_only_it_beside_tfidf_then_is_reused(
    tmp_path, builtin_data_dir
):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from config.files import load_config
    from data import load_text_splits

    # The built-in datasets from the suite's own TFDS folder: nothing goes to ~.
    args = [
        "--out",
        str(tmp_path),
        "--data-dir",
        builtin_data_dir,
        "--sample",
        "300",
        "--seeds",
        "0",
        "--files",
        "questions",
        "--tag",
        "tiny",
        "--recipe",
        *TINY_RECIPE,
    ]
    assert bench.main(args) == 0
    config_path = tmp_path / "own_file" / "questions.yaml"
    assert config_path.read_text() == (
        f"dataset:\n  train_file: {tmp_path / 'own_file' / 'questions.csv'}\n"
    )
    report = json.loads((tmp_path / "own_file.json").read_text())
    (row,) = report["rows"]
    (seed,) = row["seeds"]
    assert (row["file"], row["tag"], row["rows"], row["classes"]) == ("questions", "tiny", 300, 6)
    assert seed["recipe"] == {
        "pretrained": None,
        "pretrained_layers": None,
        "fine_tune": "full",
        "epochs": 1,
        "batch_size": 16,
        "sequence_length": 32,
    }
    assert seed["epochs_run"] == 1 and seed["wall_clock_s"] > seed["train_wall_time_s"] > 0
    # TF-IDF + LR: its C is the best on validation, and gives its test accuracy.
    splits = load_text_splits(load_config(config_path).dataset)
    assert seed["test_examples"] == len(splits.test[0]) == row["tfidf"]["sizes"]["test"]
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    train = vectorizer.fit_transform(splits.train[0])
    validation = {
        C: LogisticRegression(C=C, max_iter=2000).fit(train, splits.train[1])
        for C in (1.0, 10.0, 100.0)
    }
    scores = {
        C: (
            model.predict(vectorizer.transform(splits.validation[0])) == splits.validation[1]
        ).mean()
        for C, model in validation.items()
    }
    chosen = row["tfidf"]["C"]
    assert scores[chosen] == max(scores.values()) == row["tfidf"]["validation"]["accuracy"]
    test = validation[chosen].predict(vectorizer.transform(splits.test[0]))
    assert row["tfidf"]["test"]["accuracy"] == pytest.approx((test == splits.test[1]).mean())
    # The goal column follows the numbers.
    margin = 100 * (seed["test_accuracy"] - row["tfidf"]["test"]["accuracy"])
    assert row["min_margin"] == pytest.approx(margin)
    assert row["met"] == (margin >= 1 - 1e-9 and seed["wall_clock_s"] <= 300)
    table = (tmp_path / "own_file.md").read_text()
    assert table.startswith(f"{bench.machine_line()}\n\nCommands: `python bench/bench_own_file.py")
    lines = [line for line in table.splitlines() if line.startswith("| questions |")]
    assert len(lines) == 1 and lines[0].endswith(f"| {'yes' if row['met'] else 'NO'} |")
    # --reuse: nothing is trained again, and the row is the same.
    metrics = tmp_path / "own_file" / "runs" / "questions_tiny_0" / "metrics.json"
    trained = metrics.stat().st_mtime_ns
    assert bench.main([*args, "--reuse"]) == 0
    assert metrics.stat().st_mtime_ns == trained
    again = json.loads((tmp_path / "own_file.json").read_text())["rows"]
    assert [entry["seeds"] for entry in again] == [row["seeds"]]
    assert again[0]["command"].endswith("--reuse")


def test_the_goal_needs_every_seed_a_point_over_tfidf_within_five_minutes():
    tfidf = {"test": {"accuracy": 0.85}}

    def seed(accuracy, seconds):
        return {"test_accuracy": accuracy, "validation_accuracy": 0.5, "wall_clock_s": seconds}

    summary = bench.summarize(tfidf, [seed(0.86, 300.0), seed(0.90, 120.0)])
    assert summary["met"] and summary["min_margin"] == 1.0
    assert summary["test_accuracy"]["mean"] == pytest.approx(88.0)
    assert summary["test_accuracy"]["std"] == pytest.approx(2 * 2**0.5)
    assert (summary["wall_clock_mean_s"], summary["wall_clock_max_s"]) == (210.0, 300.0)
    assert not bench.summarize(tfidf, [seed(0.859, 100.0), seed(0.95, 100.0)])["met"]
    assert not bench.summarize(tfidf, [seed(0.90, 300.1)])["met"]


def test_a_bench_run_replaces_only_its_own_files_rows_of_its_recipe():
    earlier = [
        {"file": "news", "tag": "default", "value": 1},
        {"file": "reviews", "tag": "l3e2", "value": 2},
        {"file": "reviews", "tag": "default", "value": 3},
    ]
    again = [{"file": "reviews", "tag": "default", "value": 4}]
    assert [row["value"] for row in bench.merged(again, earlier)] == [4, 2, 1]
