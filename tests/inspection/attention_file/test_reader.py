"""The attention file written and read (inspection/attention_file/reader.py): round trips,
word pieces, attribution scores and pruned heads, and one test per refused input (earlier
versions: test_upgrade.py)."""

import json

import numpy as np
import pandas as pd
import pytest

from inspection.attention_file.format import FORMAT_VERSION, MANIFEST_COLUMNS
from inspection.attention_file.reader import load_attention, save_attention
from tests.inspection.attention_file.records import CLASS_NAMES, make_record


def test_round_trip_keeps_arrays_manifest_and_meta(tmp_path):
    records = [make_record("00007", 4, seed=1), make_record("a-b.c_d", 6, None, seed=2)]
    save_attention(
        tmp_path,
        records,
        CLASS_NAMES,
        run_info={"model": "stand-in"},
        max_probability_difference=2.5e-7,
        probability_tolerance=1e-4,
    )

    with load_attention(tmp_path) as export:
        assert export.format_version == FORMAT_VERSION == 4
        assert export.class_names == CLASS_NAMES
        assert (export.num_layers, export.num_heads) == (2, 3)
        assert export.max_probability_difference == pytest.approx(2.5e-7)
        assert export.run_info == {"model": "stand-in"}
        assert export.example_ids == ["00007", "a-b.c_d"]  # "00007" stays a string
        for original, loaded in zip(records, export.records(), strict=True):
            assert loaded.attention_scores.dtype == np.float32
            np.testing.assert_array_equal(loaded.attention_scores, original.attention_scores)
            assert loaded.tokens == original.tokens
            assert loaded.true_label_index == original.true_label_index
            np.testing.assert_allclose(loaded.probabilities, original.probabilities)
            assert loaded.rollout_importance.sum() == pytest.approx(1.0)
        row = export.manifest.iloc[0]
        assert list(export.manifest.columns) == list(MANIFEST_COLUMNS)
        assert (row["true_label"], row["predicted_label"], row["correct"]) == (
            "positive",
            "positive",
            True,
        )
        assert row["num_tokens"] == 4
        assert export.record("a-b.c_d").true_label_index is None


def test_manifest_reads_with_plain_pandas_and_arrays_with_plain_numpy(tmp_path):
    save_attention(tmp_path, [make_record("0", 3)], CLASS_NAMES)
    manifest = pd.read_json(tmp_path / "manifest.jsonl", lines=True, dtype=False)
    assert manifest.loc[0, "tokens"] == ["word0", "word1", "word2"]
    with np.load(tmp_path / "attention.npz") as arrays:
        assert arrays["attention_0"].shape == (2, 3, 3, 3)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["format_version"] == 4
    assert meta["num_examples"] == 1


def test_load_without_meta_names_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="No meta.json"):
        load_attention(tmp_path)


def test_load_rejects_other_format_versions(tmp_path):
    save_attention(tmp_path, [make_record("0", 3)], CLASS_NAMES)
    meta = json.loads((tmp_path / "meta.json").read_text())
    meta["format_version"] = 99
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="format_version=99"):
        load_attention(tmp_path)


@pytest.mark.parametrize("example_id", ["", "a/b", "x y", 7])
def test_unsafe_example_ids_are_rejected(tmp_path, example_id):
    record = make_record("0", 2)
    record.example_id = example_id
    with pytest.raises(ValueError, match="example_id must be"):
        save_attention(tmp_path, [record], CLASS_NAMES)


def test_duplicate_ids_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="appears twice"):
        save_attention(tmp_path, [make_record("1", 2), make_record("1", 3)], CLASS_NAMES)


def test_scores_must_match_token_count(tmp_path):
    record = make_record("0", 3)
    record.tokens = record.tokens[:2]
    with pytest.raises(ValueError, match="for its 2 tokens"):
        save_attention(tmp_path, [record], CLASS_NAMES)


def test_unfinished_export_is_not_loadable(tmp_path):
    save_attention(tmp_path, [make_record("0", 3)], CLASS_NAMES)
    with pytest.raises(RuntimeError):
        save_attention(tmp_path, _records_then_failure(), CLASS_NAMES)
    with pytest.raises(FileNotFoundError, match="No meta.json"):
        load_attention(tmp_path)


def _records_then_failure():
    yield make_record("0", 3)
    raise RuntimeError("interrupted")


def word_piece_record(example_id="0"):
    record = make_record(example_id, 6)
    record.tokens = ["[CLS]", "they", "play", "##ed", "well", "[SEP]"]
    record.word_index = [None, 0, 1, 1, 2, None]
    record.word_texts = ["they", "played", "well"]  # as WordPiece's scheme joins them
    record.rollout_importance = np.array([0.3, 0.1, 0.05, 0.15, 0.25, 0.15])
    return record


def test_word_pieces_are_grouped_into_words_and_specials_marked(tmp_path):
    save_attention(tmp_path, [word_piece_record(), make_record("1", 2)], CLASS_NAMES, pooling="cls")
    with load_attention(tmp_path) as export:
        row = export.manifest.iloc[0]
        assert row["word_index"] == [None, 0, 1, 1, 2, None]
        assert row["special"] == [True, False, False, False, False, True]
        assert row["words"] == ["they", "played", "well"]
        np.testing.assert_allclose(row["word_importance"], [0.1, 0.2, 0.25], atol=1e-12)
        record = export.record("0")
        assert record.word_index == [None, 0, 1, 1, 2, None]
        assert record.word_pieces == [["they"], ["play", "##ed"], ["well"]]
        # A record without a word index: every token is a word of its own.
        word_level = export.manifest.iloc[1]
        assert word_level["word_index"] == [0, 1] and word_level["words"] == ["word0", "word1"]
        assert word_level["word_importance"] == word_level["rollout_importance"]


def test_attribution_scores_round_trip_and_sum_into_words(tmp_path):
    record = word_piece_record()
    record.attributions = {
        "rollout": record.rollout_importance,
        "leave_one_out": np.array([0.5, -0.25, 0.125, 1e-9, -2.0, 0.75]),
    }
    save_attention(tmp_path, [record], CLASS_NAMES, pooling="cls")
    with load_attention(tmp_path) as export:
        assert export.attribution_methods == ["rollout", "leave_one_out"]
        assert export.meta["faithfulness"] is None and export.best_method is None
        scores = export.attributions("0")
        assert scores["leave_one_out"].tolist() == [0.5, -0.25, 0.125, 1e-9, -2.0, 0.75]
        # they, played (play + ##ed), well; [CLS] and [SEP] in no word.
        assert export.word_attributions("0")["leave_one_out"].tolist() == [
            -0.25,
            0.125 + 1e-9,
            -2.0,
        ]
        loaded = export.record("0")
        assert loaded.word_attributions["leave_one_out"].tolist() == [-0.25, 0.125 + 1e-9, -2.0]
        np.testing.assert_allclose(loaded.word_attributions["rollout"], [0.1, 0.2, 0.25])


@pytest.mark.parametrize(
    "attributions, message",
    [
        ({"rollout": [0.5, 0.5]}, r"same methods, \['rollout', 'random'\]; example '1' has "),
        (
            {"rollout": [0.5, 0.5], "random": [0.1]},
            r"attributions\['random'\] of example '1' "
            r"must be 2 finite scores",
        ),
        ({"rollout": [0.5, 0.5], "random": [0.1, np.nan]}, "finite=False"),
    ],
)
def test_attribution_scores_that_do_not_fit_are_rejected(tmp_path, attributions, message):
    first, second = make_record("0", 3), make_record("1", 2)
    first.attributions = {"rollout": [0.2, 0.3, 0.5], "random": [0.1, 0.2, 0.3]}
    second.attributions = attributions
    with pytest.raises(ValueError, match=message):
        save_attention(tmp_path, [first, second], CLASS_NAMES)


@pytest.mark.parametrize(
    "word_index, message",
    [
        ([None, 0, 1, 1, 2], "one entry per token \\(6\\)"),
        ([None, 0, 2, 2, 3, None], "number the words 0, 1"),
        ([None, 1, 1, 1, 2, None], "number the words 0, 1"),
        ([None, 0, "1", 1, 2, None], "number the words 0, 1"),
        ([None, 0, 1, 1, 1, None], r"word_texts .* one text per word .* \(2\)\. Received: 3"),
    ],
)
def test_a_word_index_that_does_not_number_the_words_is_rejected(tmp_path, word_index, message):
    record = word_piece_record()
    record.word_index = word_index
    with pytest.raises(ValueError, match=message):
        save_attention(tmp_path, [record], CLASS_NAMES)


def pruned_record(example_id="0", num_tokens=3):
    """A record of a model pruned to heads [[0, 2], [1]] of 3: the others' maps all 0."""
    record = make_record(example_id, num_tokens)
    record.attention_scores[0, 1] = 0.0
    record.attention_scores[1, [0, 2]] = 0.0
    record.rollout_importance = None
    return record


def test_a_pruned_models_heads_round_trip_and_rollout_averages_only_them(tmp_path):
    record = pruned_record()
    scores = record.attention_scores.copy()
    save_attention(tmp_path, [record], CLASS_NAMES, kept_heads=[[0, 2], [1]])
    with load_attention(tmp_path) as export:
        assert export.kept_heads == [[0, 2], [1]] == export.meta["kept_heads"]
        assert export.num_heads == 3
        loaded = export.record("0")
    # Layer 0 averages heads 0 and 2, layer 1 is head 1 alone.
    real = [scores[0, [0, 2]].mean(axis=0), scores[1, 1]]
    rollout = np.eye(3)
    for averaged in real:
        mixed = 0.5 * averaged + 0.5 * np.eye(3)
        rollout = (mixed / mixed.sum(axis=-1, keepdims=True)) @ rollout
    np.testing.assert_allclose(loaded.rollout_importance, rollout.mean(axis=0), rtol=1e-6)
    diluted = np.eye(3)
    for layer in scores:  # what a mean over all 3 heads, the removed ones' zeros in, gives
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(3)
        diluted = (mixed / mixed.sum(axis=-1, keepdims=True)) @ diluted
    assert not np.allclose(loaded.rollout_importance, diluted.mean(axis=0), rtol=1e-3)


def test_an_unpruned_export_keeps_every_head(tmp_path):
    save_attention(tmp_path, [make_record("0", 3)], CLASS_NAMES)
    with load_attention(tmp_path) as export:
        assert export.kept_heads == [[0, 1, 2], [0, 1, 2]]


@pytest.mark.parametrize(
    "kept_heads, message",
    [
        ([[0, 2]], "for each of the 2 layers"),
        ([[0, 2], []], "one at least"),
        ([[2, 0], [1]], "increasing numbers from 0 to 2"),
        ([[0, 3], [1]], "increasing numbers from 0 to 2"),
        ([[0, 1], [1]], r"layer 0 keeps heads \[0, 1\], so the maps of heads \[2\] must be all 0"),
    ],
)
def test_kept_heads_that_do_not_fit_the_maps_are_rejected(tmp_path, kept_heads, message):
    with pytest.raises(ValueError, match=message):
        save_attention(tmp_path, [pruned_record()], CLASS_NAMES, kept_heads=kept_heads)
