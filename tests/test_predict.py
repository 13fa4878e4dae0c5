"""predict.py on a tiny trained run: the table, --explain, --json, --texts-file, warnings and
error cases."""

import json
import shutil

import numpy as np
import pytest

import predict

TEXTS = ["such a wonderful film", "a dull boring plot and a weak actor"]


def test_json_output_matches_the_model_and_ranks_tokens_by_rollout(tiny_run_dir, capsys):
    from models import load_end_to_end_model

    capsys.readouterr()
    assert (
        predict.main(
            [str(tiny_run_dir), *TEXTS, "--explain", "--method", "rollout", "--top", "3", "--json"]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["class_names"] == ["negative", "positive"]
    assert document["pooling"] == "mean"
    model = load_end_to_end_model(tiny_run_dir / "model.keras")
    expected = np.asarray(model(np.array(TEXTS, dtype=str), training=False))  # (2, C)
    for prediction, text, row in zip(document["predictions"], TEXTS, expected):
        assert prediction["text"] == text
        probabilities = prediction["probabilities"]
        np.testing.assert_allclose(
            [probabilities["negative"], probabilities["positive"]], row, atol=1e-6
        )
        assert prediction["predicted_label"] == ["negative", "positive"][int(row.argmax())]
        assert prediction["explanation_method"] == "rollout"
        tokens = prediction["tokens"]
        assert len(tokens) == 3
        importances = [token["importance"] for token in tokens]
        assert importances == sorted(importances, reverse=True)
        assert all(0.0 < importance < 1.0 for importance in importances)
        words = text.split()
        for token in tokens:
            # "such" is not in the fixture's vocabulary: it is the OOV token.
            assert token["token"] in (words[token["position"]], "[UNK]")
            assert sorted(token) == ["importance", "position", "token"]  # no WordPiece pieces


def test_table_with_explain_and_a_texts_file_numbered_by_line(tiny_run_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("a good film\n\n   \nbad\n")
    capsys.readouterr()
    assert (
        predict.main(
            [
                str(tiny_run_dir),
                "great",
                "--texts-file",
                str(texts),
                "--explain",
                "--method",
                "rollout",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    out = captured.out
    assert [line for line in out.splitlines() if line.startswith("[")] == [
        "[1] great",
        "[line 1] a good film",
        "[line 4] bad",
    ]
    assert out.count("predicted: ") == 3
    assert out.count("tokens by rollout:") == 3
    assert "negative" in out and "positive" in out
    assert captured.err == ""  # every text has a known word


def test_a_text_with_no_known_word_gets_a_warning(tiny_run_dir, capsys):
    capsys.readouterr()
    assert predict.main([str(tiny_run_dir), "a good film", "?!... ---", "zyxw qqqq", "--json"]) == 0
    captured = capsys.readouterr()
    known = [item["known_tokens"] for item in json.loads(captured.out)["predictions"]]
    assert known[0] > 0 and known[1:] == [0, 0]
    assert captured.err.splitlines() == [
        f"predict.py: warning: [{number}] has no word the model knows (all punctuation, or "
        "none in its vocabulary): its prediction says nothing about the text"
        for number in (2, 3)
    ]


def test_library_ranks_every_real_token_and_importances_sum_to_one(tiny_run_dir):
    from run_folder.saved_run import load_run

    run = load_run(tiny_run_dir)
    [prediction] = predict.predict(
        run, ["the plot was dull and boring"], explain=True, top=None, method="rollout"
    )
    assert sorted(word.position for word in prediction.tokens) == [0, 1, 2, 3, 4, 5]
    assert sum(word.importance for word in prediction.tokens) == pytest.approx(1.0)
    # Word-level tokens are words of one piece each.
    assert all(word.pieces == (word.token,) for word in prediction.tokens)
    assert not prediction.word_pieces
    assert sum(prediction.probabilities.values()) == pytest.approx(1.0, abs=1e-6)


def test_explain_uses_the_best_measured_method_else_conservative_gradients(tiny_run_dir, tmp_path):
    from inspection.methods.attribution import attribute
    from run_folder.saved_run import load_run

    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run_dir, run_dir)
    text = "the plot was dull and boring"
    [unmeasured] = predict.predict(load_run(run_dir), [text], explain=True, top=None)
    assert unmeasured.method == "conservative_gradient_x_input"
    # Measured on the test split only, then on validation too: validation wins.
    for split, best in (("test", "leave_one_out"), ("validation", "gradient_x_input")):
        (run_dir / "eval" / split).mkdir(parents=True, exist_ok=True)
        (run_dir / "eval" / split / "faithfulness.json").write_text(
            json.dumps({"best_method": best})
        )
        run = load_run(run_dir)
        [measured] = predict.predict(run, [text], explain=True, top=None)
        assert measured.method == best
        vectorizer, classifier = run.parts
        token_ids = np.asarray(vectorizer(np.array([text], dtype=object)))
        scores = attribute(classifier, token_ids, best, run.pooling)[0]
        by_position = {word.position: word.importance for word in measured.tokens}
        np.testing.assert_allclose([by_position[p] for p in range(6)], scores[:6], atol=1e-9)


def test_method_needs_explain(tiny_run_dir, capsys):
    assert error_of([str(tiny_run_dir), "a film", "--method", "rollout"], capsys) == (
        "predict.py: error: --method chooses how --explain ranks words: add --explain"
    )


def error_of(argv, capsys):
    capsys.readouterr()
    assert predict.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("predict.py: error: ") and "\n" not in error
    return error


@pytest.mark.parametrize(
    "args, message",
    [
        (["good", "  "], "text 2 is empty"),
        (["good", "--top", "0"], "--top must be at least 1"),
        (["--texts-file", "missing.txt"], "--texts-file missing.txt: no such file"),
    ],
)
def test_bad_texts(tiny_run_dir, capsys, args, message):
    # The text checks themselves: tests/data/reading/test_texts_file.py.
    assert message in error_of([str(tiny_run_dir), *args], capsys)


def test_missing_run_folder_and_corrupt_model(tiny_run_dir, tmp_path, capsys):
    assert "no such run folder" in error_of([str(tmp_path / "nope"), "good"], capsys)
    model = tiny_run_dir / "model.keras"
    assert error_of([str(model), "good"], capsys) == (
        f"predict.py: error: {model} is a file, not a run folder: pass the folder that holds "
        f"it, {tiny_run_dir}"
    )
    broken = tmp_path / "broken"
    shutil.copytree(tiny_run_dir, broken, ignore=shutil.ignore_patterns("attention", "eval"))
    (broken / "model.keras").write_bytes(b"not a zip file")
    assert "model.keras: cannot load the model" in error_of([str(broken), "good"], capsys)


def test_abstain_below_answers_abstain_under_the_threshold(tiny_run_dir, capsys):
    capsys.readouterr()
    assert predict.main([str(tiny_run_dir), *TEXTS, "--json"]) == 0
    tops = [
        max(p["probabilities"].values()) for p in json.loads(capsys.readouterr().out)["predictions"]
    ]
    cut = (min(tops) + max(tops)) / 2  # one text under it, one over
    assert predict.main([str(tiny_run_dir), *TEXTS, "--json", "--abstain-below", str(cut)]) == 0
    predictions = json.loads(capsys.readouterr().out)["predictions"]
    for prediction, top in zip(predictions, tops):
        assert prediction["abstained"] == (top < cut)
        assert (prediction["predicted_label"] == "abstain") == (top < cut)
    assert predict.main([str(tiny_run_dir), *TEXTS, "--abstain-below", str(cut)]) == 0
    assert "predicted: abstain (top: " in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        predict.main([str(tiny_run_dir), *TEXTS, "--abstain-below", "70"])
    assert exit_.value.code == 2
    assert "must be a probability from 0 to 1, got 70.0" in capsys.readouterr().err
