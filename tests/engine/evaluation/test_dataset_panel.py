"""The Dataset panel's block (engine/evaluation/dataset_panel.py): what an export embeds of a
run's tokens.json, data_map.json and slices.json, each only when the run has it."""

import json

import pytest

from engine.evaluation.attention import ExportError, _dataset_block
from engine.evaluation.dataset_panel import dataset_block
from tests.data_quality_fixture import HOSTILE_TEXT, LONG_TEXT, write, write_data_quality_files

TOKENS = {
    "split": "test",
    "examples": 10,
    "method": "gradient_x_input",
    "faithfulness": None,
    "classes": {
        "positive": [
            {
                "word": "great",
                "count": 12,
                "reliance": 0.15,
                "reliance_ci": [0.1, 0.2],
                "insertion": 0.1,
                "insertion_ci": [0.05, 0.15],
                "control": 0.01,
                "attribution": 0.5,
                "attribution_ci": [0.4, 0.6],
                "deletion": 0.2,
                "deletion_ci": [0.1, 0.3],
                "p_class_given_word": 0.9,
                "shortcut": False,
            }
        ]
    },
}


def test_the_block_keeps_the_data_map_points_and_the_weak_slices_rounded(tmp_path):
    block = dataset_block(write_data_quality_files(tmp_path), "test")
    assert set(block) == {"data_map", "slices"}  # no tokens.json: no words
    data_map = block["data_map"]
    assert data_map["source"] == str(tmp_path / "eval" / "train" / "data_map.json")
    assert (data_map["split"], data_map["examples"], data_map["epochs"]) == ("train", 8530, 3)
    assert data_map["regions"] == {
        "easy-to-learn": 0.621,
        "ambiguous": 0.27,
        "hard-to-learn": 0.109,
    }
    assert data_map["region_rule"].startswith("ambiguous: variability at least 0.2")
    # The unseen example (NaN) is left out; floats to 3 digits; texts to 300 characters.
    assert [point["position"] for point in data_map["points"]] == [12, 40, 7, 99]
    assert data_map["points"][0] == {
        "position": 12,
        "text": "a wonderful, moving film",
        "label": "positive",
        "model_label": "positive",
        "confidence": 0.912,
        "variability": 0.05,
        "correctness": 1.0,
        "suspect_rank": None,
    }
    assert data_map["points"][1]["text"] == HOSTILE_TEXT
    assert data_map["points"][1]["suspect_rank"] == 1
    assert data_map["points"][2]["correctness"] == 0.667
    assert data_map["points"][3]["text"] == LONG_TEXT[:300]
    slices = block["slices"]
    assert (slices["split"], slices["examples"], slices["accuracy"], slices["candidates"]) == (
        "test",
        1066,
        0.85,
        5,
    )
    assert slices["correction"].startswith("Bonferroni over 5 candidate slices")
    assert slices["weak_slices"][1] == {
        "slice": "length: over 40 words",
        "kind": "length",
        "size": 120,
        "accuracy": 0.612,
        "accuracy_ci": [0.52, 0.7],
    }
    assert [row["slice"] for row in slices["weak_slices"]] == [
        "word: zqxv",
        "length: over 40 words",
        f"word: {HOSTILE_TEXT}",
    ]
    json.dumps(block, allow_nan=False)  # embeddable as it is


@pytest.mark.parametrize(
    ("splits", "data_name", "picked"),
    [
        (("test", "validation", "other"), "test", "test"),  # the export's own split
        (("test", "validation", "other"), "reviews", "validation"),  # a data file: validation
        (("test", "other"), "validation", "test"),
        (("other", "zother"), "test", "other"),  # any split, by name
    ],
)
def test_the_slices_are_the_exports_split_else_validation_else_test_else_any(
    tmp_path, splits, data_name, picked
):
    write_data_quality_files(tmp_path, data_map=False, slice_splits=splits)
    slices = dataset_block(tmp_path, data_name)["slices"]
    assert slices["split"] == picked
    assert slices["source"] == str(tmp_path / "eval" / picked / "slices.json")


def test_a_missing_file_leaves_its_key_out_and_no_file_gives_none(tmp_path):
    assert dataset_block(tmp_path, "test") is None
    assert set(
        dataset_block(write_data_quality_files(tmp_path / "map", slice_splits=()), "test")
    ) == {"data_map"}
    assert set(
        dataset_block(write_data_quality_files(tmp_path / "slices", data_map=False), "test")
    ) == {"slices"}
    # With a tokens.json: its fields as before, and the data map next to them.
    run_dir = write_data_quality_files(tmp_path / "tokens", slice_splits=())
    write(run_dir / "eval" / "test" / "tokens.json", TOKENS)
    block = dataset_block(run_dir, "test")
    assert set(block) == {
        "source",
        "split",
        "examples",
        "method",
        "faithfulness",
        "classes",
        "data_map",
    }
    [word] = block["classes"]["positive"]
    assert word == {
        "word": "great",
        "count": 12,
        "reliance": 0.15,
        "reliance_ci": [0.1, 0.2],
        "insertion": 0.1,
        "control": 0.01,
        "attribution": 0.5,
        "p_class_given_word": 0.9,
        "shortcut": False,
    }


def test_a_broken_file_is_an_export_error_that_says_how_to_measure_again(tmp_path):
    write(tmp_path / "eval" / "train" / "data_map.json", {"split": "train", "points": []})
    with pytest.raises(
        ExportError,
        match=r"data_map.json is not a data map of evaluate.py "
        r"--suspects \(KeyError: 'examples'\)",
    ):
        _dataset_block(tmp_path, "test")
    (tmp_path / "eval" / "train" / "data_map.json").unlink()
    write(tmp_path / "eval" / "test" / "slices.json", {"weak_slices": [{"slice": "x"}]})
    with pytest.raises(
        ExportError,
        match=r"slices.json is not a slices file .* --split test "
        r"--slices",
    ):
        _dataset_block(tmp_path, "test")
