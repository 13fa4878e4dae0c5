"""Text pairs end to end: a file of two text columns trains from scratch and from a
checkpoint, and predict.py, evaluate.py and the live API take pairs; bad input is one line."""

import json

import numpy as np
import pytest

import evaluate
import predict
import train
from tests.helpers import pretrained_args, tiny_args
from tests.review_fixture import write_pairs_fixture
from tokenization.pairs import PAIR_MARK, join_pair

PAIR_COLUMNS = "dataset.text_column=[first, second]"


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    return write_pairs_fixture(tmp_path_factory.mktemp("pairs") / "pairs.csv")


@pytest.fixture(scope="module")
def pair_run(tmp_path_factory, pairs_file):
    """From scratch, long enough to learn the fixture (the second side's sentiment)."""
    root = tmp_path_factory.mktemp("runs")
    overrides = ("training.steps_per_epoch=null", "training.epochs=15")
    args = tiny_args(root, pairs_file, PAIR_COLUMNS, "training.learning_rate=0.005", *overrides)
    assert train.main(args) == 0
    return root / "tiny"


def test_a_pair_file_learns_what_only_the_second_side_tells(pair_run):
    from run_folder import saved_run

    metrics = json.loads((pair_run / "metrics.json").read_text())
    # The first side holds a sentiment word of either kind: a model that could not tell
    # the sides apart would stay far below this.
    assert metrics["test"]["accuracy"] >= 0.9
    run = saved_run.load_run(pair_run)
    assert run.is_pair and run.config.dataset.text_column == ["first", "second"]
    vectorizer, classifier = run.parts
    vocabulary = vectorizer.get_vocabulary()
    assert classifier.encoder.separator_id == vocabulary.index(PAIR_MARK)
    ids = vectorizer(np.array([join_pair("good film", "bad plot")], dtype=object)).numpy()[0]
    types = classifier.encoder.embedding.token_types(ids[None]).numpy()[0]
    assert types[: np.count_nonzero(ids)].tolist() == [0, 0, 0, 1, 1]


def test_predict_takes_pairs_and_refuses_single_texts(pair_run, tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("the film was great\tawful plot\n\nlovely\tsuperb actor\n")
    capsys.readouterr()
    argv = [str(pair_run), "--pair", "a dull film", "a wonderful film", "--texts-file", str(pairs)]
    assert predict.main([*argv, "--json"]) == 0
    predictions = json.loads(capsys.readouterr().out)["predictions"]
    assert [p["predicted_label"] for p in predictions] == ["yes", "no", "yes"]
    assert predictions[0]["text"] == join_pair("a dull film", "a wonderful film")
    assert predictions[2]["line"] == 3
    assert predict.main([str(pair_run), "a single text"]) == 2
    assert "reads text pairs: give each as --pair FIRST SECOND" in capsys.readouterr().err
    pairs.write_text("no tab here\n")
    assert predict.main([str(pair_run), "--texts-file", str(pairs)]) == 2
    assert "line 1: the run reads text pairs" in capsys.readouterr().err


def test_evaluate_measures_pairs_and_says_what_it_does_not_yet(pair_run, capsys):
    assert evaluate.main([str(pair_run), "--slices", "--suspects", "5"]) == 0
    suspects = (pair_run / "eval" / "train" / "suspects.csv").read_text()
    assert PAIR_MARK in suspects
    capsys.readouterr()
    assert evaluate.main([str(pair_run), "--tokens"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "--tokens does not yet rank the words of text pairs" in error


def test_the_live_api_and_show_take_pairs(pair_run):
    from engine.evaluation.live.api import RequestError, check_texts
    from inspection import show

    assert check_texts([["good film", "bad"], "one"]) == [join_pair("good film", "bad"), "one"]
    with pytest.raises(RequestError, match="a pair of strings"):
        check_texts([["a", "b", "c"]])
    view = show(str(pair_run), [["good film", "lovely plot"]], methods=["rollout"])
    assert PAIR_MARK in view.records[0].tokens


def test_a_checkpoint_reads_a_pair_as_cls_a_sep_b_sep(tmp_path, pairs_file, tiny_checkpoint):
    from run_folder import saved_run
    from tests.models.bert_reference import TINY_VOCABULARY

    assert train.main(pretrained_args(tmp_path, pairs_file, tiny_checkpoint, PAIR_COLUMNS)) == 0
    run = saved_run.load_run(tmp_path / "tiny")
    vectorizer, classifier = run.parts
    assert vectorizer.get_config()["pairs"]
    ids = vectorizer(np.array([join_pair("the film", "good")], dtype=object)).numpy()[0]
    words = [TINY_VOCABULARY[i] for i in ids if i]
    assert words == ["[CLS]", "the", "film", "[SEP]", "good", "[SEP]"]
    assert classifier.encoder.separator_id == TINY_VOCABULARY.index("[SEP]")


@pytest.mark.parametrize(
    "override, message",
    [
        ("dataset.text_column=[first, missing]", "has no column 'missing'"),
        ("dataset.text_column=[first, first]", "a list of two different ones"),
        ("dataset.streaming=true", "text pairs and multi-label data are read into memory"),
    ],
)
def test_bad_pair_settings_are_one_line(tmp_path, pairs_file, capsys, override, message):
    assert train.main(tiny_args(tmp_path, pairs_file, PAIR_COLUMNS, override)) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and error.count("\n") == 0


def test_a_side_holding_the_pair_mark_names_its_row(tmp_path, capsys):
    path = tmp_path / "marked.csv"
    path.write_text(f"first,second,label\na,b,x\nc {PAIR_MARK} d,e,y\n")
    assert train.main(tiny_args(tmp_path, path, PAIR_COLUMNS)) == 2
    assert f"{path} row 2 (line 3) column 'first' holds" in capsys.readouterr().err
