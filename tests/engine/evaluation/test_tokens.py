"""evaluate.py --tokens and --compare on a tiny run that learned a planted shortcut."""

import json
import shutil

import numpy as np
import pytest

import evaluate
import train
from engine.evaluation.compare import compare_file
from engine.evaluation.faithfulness import tokenize
from inspection.methods.word_reliance import EDITED_TEXTS, insertion_sites, text_words
from run_folder import saved_run
from tests.helpers import tiny_args
from tests.review_fixture import PLANTED_WORD, SPREAD_WORD, write_planted_fixture

KEYS = {
    "word",
    "count",
    "train_count",
    "p_class_given_word",
    "lift",
    "z",
    "p_value",
    "insertion",
    "insertion_ci",
    "control",
    "net",
    "net_ci",
    "reliance",
    "reliance_ci",
    "attribution",
    "attribution_ci",
    "deletion",
    "deletion_ci",
    "shortcut",
}


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """The tiny model trained 3 epochs on the planted fixture, measured with --tokens."""
    root = tmp_path_factory.mktemp("planted")
    data = write_planted_fixture(root / "planted.csv")
    assert (
        train.main(tiny_args(root, data, "training.steps_per_epoch=null", "training.epochs=3")) == 0
    )
    run_dir = root / "tiny"
    assert evaluate.main([str(run_dir), "--tokens", "--min-count", "5"]) == 0
    return run_dir


def report_of(run_dir, name="tokens.json"):
    return json.loads((run_dir / "eval" / "test" / name).read_text())


def test_the_planted_word_ranks_first_and_is_a_shortcut_the_spread_one_is_no_candidate(
    planted_run,
):
    report = report_of(planted_run)
    assert report["split"] == "test" and report["examples"] == 240
    assert report["method"] == "conservative_gradient_x_input" and report["min_count"] == 5
    assert report["inserted_into"] == EDITED_TEXTS and len(report["control_words"]) == 10
    positive = report["classes"]["positive"]
    assert set(positive[0]) == KEYS
    top = positive[0]
    assert top["word"] == PLANTED_WORD and top["shortcut"]
    assert top["p_class_given_word"] == 1.0 and top["p_value"] < 1e-10 and top["lift"] > 1.9
    assert top["reliance_ci"][0] > 0 and top["net"] > 0.05 and top["deletion"] > 0
    assert top["net"] == pytest.approx(top["insertion"] - top["control"])
    assert top["attribution_ci"][0] <= top["attribution"] <= top["attribution_ci"][1]
    for entries in report["classes"].values():
        assert [entry["reliance"] for entry in entries] == sorted(
            (entry["reliance"] for entry in entries), reverse=True
        )
        assert all(entry["train_count"] >= 5 for entry in entries)
        # In a tenth of each class's texts, the training data ties it to neither class.
        assert SPREAD_WORD not in [entry["word"] for entry in entries]
    # Each class's words are the training data's: none favours both classes.
    words = [{entry["word"] for entry in entries} for entries in report["classes"].values()]
    assert words[0] and words[1] and not words[0] & words[1]
    assert PLANTED_WORD not in report["control_words"]
    check = report["faithfulness"]
    assert check["words"] == 10 and check["difference_ci"][0] > 0
    assert check["top_words"] > 3 * check["random_words"]
    assert set(check["classes"]) == {"negative", "positive"}
    folder = planted_run / "eval" / "test"
    assert f"| 1 | {PLANTED_WORD} |" in (folder / "tokens.md").read_text()
    assert (folder / "tokens.png").stat().st_size > 10_000


def test_insertion_and_deletion_match_a_direct_computation(planted_run):
    """The planted word inserted into the raw texts by hand (a word-level model's token
    positions are the text's words) and removed from the token ids by hand."""
    run = saved_run.load_run(planted_run)
    texts, labels = run.load_split("test")
    vectorizer, classifier = run.parts
    token_ids = tokenize(run, list(texts))
    rows, _ = text_words(token_ids, vectorizer.get_vocabulary())
    sites = insertion_sites(rows, seed=0)
    top = report_of(planted_run)["classes"]["positive"][0]
    # The texts measured: a seeded sample of the split (tokens._Insertion's).
    sample = np.sort(np.random.default_rng(0).permutation(len(texts))[:EDITED_TEXTS])
    targets = sample[labels[sample] != 1]
    edited = []
    for index in targets:
        words = str(texts[index]).split()
        edited.append(" ".join(words[: sites[index]] + [PLANTED_WORD] + words[sites[index] :]))
    before = np.asarray(run.model(np.array([texts[index] for index in targets])))[:, 1]
    after = np.asarray(run.model(np.array(edited)))[:, 1]
    np.testing.assert_allclose(top["insertion"], np.mean(after - before), atol=1e-5)
    planted = np.asarray(vectorizer([PLANTED_WORD]))[0, 0]
    holding = (token_ids == planted).any(axis=1)
    assert top["count"] == holding.sum()
    containing = np.flatnonzero(holding)[:EDITED_TEXTS]
    removed = np.where(token_ids[containing] == planted, 0, token_ids[containing])
    full = np.asarray(classifier(token_ids[containing], training=False))[:, 1]
    without = np.asarray(classifier(removed, training=False))[:, 1]
    np.testing.assert_allclose(top["deletion"], np.mean(full - without), atol=1e-5)


def test_compare_with_itself_agrees_and_with_another_run_explains_the_differences(
    planted_run, tiny_run_dir, tmp_path, capsys
):
    copy = shutil.copytree(planted_run, tmp_path / "copy", ignore=shutil.ignore_patterns("eval"))
    assert evaluate.main([str(planted_run), "--compare", str(copy), "--min-count", "5"]) == 0
    same = report_of(planted_run, compare_file(copy))
    assert same["agreement"] == 1.0 and same["disagreements"] == []
    assert same["accuracy_difference"] == 0.0 and same["median_spearman"] == 1.0
    assert all(
        entry["change"] == 0.0 for entries in same["changed_words"].values() for entry in entries
    )
    # The session's tiny run: the same classes, another vocabulary and weights.
    assert (
        evaluate.main([str(planted_run), "--compare", str(tiny_run_dir), "--min-count", "5"]) == 0
    )
    other = report_of(planted_run, compare_file(tiny_run_dir))
    run = saved_run.load_run(planted_run)
    texts, labels = run.load_split("test")
    mine = np.asarray(run.model(np.array(texts))).argmax(-1)
    theirs = np.asarray(saved_run.load_run(tiny_run_dir).model(np.array(texts))).argmax(-1)
    assert other["agreement"] == pytest.approx(np.mean(mine == theirs))
    assert other["accuracy_difference"] == pytest.approx(
        np.mean(mine == labels) - np.mean(theirs == labels)
    )
    low, high = other["accuracy_difference_ci"]
    assert low <= other["accuracy_difference"] <= high
    assert len(other["disagreements"]) == int(np.sum(mine != theirs))
    confidence = [
        max(entry["run_probability"], entry["other_probability"])
        for entry in other["disagreements"]
    ]
    assert confidence == sorted(confidence, reverse=True)
    assert -1.0 <= other["median_spearman"] <= 1.0
    # Both kept by the next evaluation without the flags.
    assert evaluate.main([str(planted_run)]) == 0
    assert report_of(planted_run, compare_file(copy)) == same
    assert report_of(planted_run)["classes"]["positive"][0]["word"] == PLANTED_WORD


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tokens", "0"], "argument --tokens: must be at least 1, got 0"),
        (["--tokens", "--min-count", "0"], "argument --min-count: must be at least 1, got 0"),
        (["--compare", "nothere"], "nothere: no such run folder"),
        (["--method", "rollout"], "--method is the attribution method of --tokens and --compare"),
        (["--tokens", "--texts-file", "x.txt"], "--tokens needs labelled data to evaluate"),
    ],
)
def test_bad_values_are_one_line_errors(tiny_run_dir, capsys, args, message):
    assert evaluate.main([str(tiny_run_dir), *args]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1


def test_a_run_without_a_model_and_runs_of_other_classes_are_refused(
    tiny_run_dir, tmp_path, capsys
):
    empty = shutil.copytree(
        tiny_run_dir,
        tmp_path / "empty",
        ignore=shutil.ignore_patterns("eval", "attention", "model.keras"),
    )
    assert evaluate.main([str(empty), "--tokens"]) == 2
    assert "model.keras: missing" in capsys.readouterr().err
    other = shutil.copytree(
        tiny_run_dir, tmp_path / "other", ignore=shutil.ignore_patterns("eval", "attention")
    )
    (other / "labels.json").write_text(json.dumps(["bad", "good"]))
    assert evaluate.main([str(tiny_run_dir), "--compare", str(other)]) == 2
    error = capsys.readouterr().err.strip()
    assert "predict different classes" in error and len(error.splitlines()) == 1


def test_an_export_of_the_split_carries_the_words_into_its_viewer(planted_run, tmp_path):
    from tests.inspection.viewer_browser import embedded_data

    out = tmp_path / "export"
    assert (
        evaluate.main(
            [str(planted_run), "--export-attention", "3", "--methods", "rollout", "--out", str(out)]
        )
        == 0
    )
    dataset = embedded_data(out / "index.html")["dataset"]
    assert dataset["split"] == "test" and dataset["examples"] == 240
    assert dataset["classes"]["positive"][0]["word"] == PLANTED_WORD
    assert dataset["classes"]["positive"][0]["shortcut"] is True
    assert len(dataset["classes"]["negative"]) <= 20


def test_too_few_examples_for_any_word_says_what_to_change(tiny_run_dir, tmp_path, capsys):
    copy = shutil.copytree(
        tiny_run_dir, tmp_path / "copy", ignore=shutil.ignore_patterns("eval", "attention")
    )
    assert evaluate.main([str(copy), "--tokens", "10", "--min-count", "100000"]) == 0
    assert (
        "no word of 100000 training texts or more is tied to this class: lower --min-count"
        in capsys.readouterr().out
    )
    report = json.loads((copy / "eval" / "test" / "tokens.json").read_text())
    assert report["classes"] == {"negative": [], "positive": []}
    assert report["faithfulness"] is None
