import json

import numpy as np
import pandas as pd
import pytest

from inspection.attention_file import (
    FORMAT_VERSION,
    MANIFEST_COLUMNS,
    load_attention,
    save_attention,
)
from inspection.attention_record import AttentionRecord

CLASS_NAMES = ["negative", "positive"]


def make_record(example_id, num_tokens, true_label_index=1, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.random((2, 3, num_tokens, num_tokens)).astype("float32")
    scores /= scores.sum(axis=-1, keepdims=True)
    return AttentionRecord(
        example_id=example_id,
        text=" ".join(f"word{index}" for index in range(num_tokens)),
        tokens=[f"word{index}" for index in range(num_tokens)],
        attention_scores=scores,
        probabilities=np.array([0.3, 0.7], "float32"),
        predicted_label_index=1,
        true_label_index=true_label_index,
    )


def test_round_trip_keeps_arrays_manifest_and_meta(tmp_path):
    records = [make_record("00007", 4, seed=1), make_record("a-b.c_d", 6, None, seed=2)]
    save_attention(tmp_path, records, CLASS_NAMES, run_info={"model": "stand-in"},
                   max_probability_difference=2.5e-7, probability_tolerance=1e-4)

    with load_attention(tmp_path) as export:
        assert export.format_version == FORMAT_VERSION == 1
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
            "positive", "positive", True)
        assert row["num_tokens"] == 4
        assert export.record("a-b.c_d").true_label_index is None


def test_manifest_reads_with_plain_pandas_and_arrays_with_plain_numpy(tmp_path):
    save_attention(tmp_path, [make_record("0", 3)], CLASS_NAMES)
    manifest = pd.read_json(tmp_path / "manifest.jsonl", lines=True, dtype=False)
    assert manifest.loc[0, "tokens"] == ["word0", "word1", "word2"]
    with np.load(tmp_path / "attention.npz") as arrays:
        assert arrays["attention_0"].shape == (2, 3, 3, 3)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["format_version"] == 1
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
