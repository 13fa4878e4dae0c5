"""`models.upgrade.upgraded_weights_copy` (upgrade_run.py's): files saved before the
attention's projections were sublayers get their weights moved in a copy; current files are
left alone, and `is_old_model_file` tells them apart."""

import shutil
from pathlib import Path

import h5py
import numpy as np

from models.upgrade import is_old_encoder_file, is_old_model_file, upgraded_weights_copy

ROOT = Path(__file__).resolve().parents[2]
OLD_ENCODER = ROOT / "tests" / "fixtures" / "pretrained_before_one_class" / "encoder.weights.h5"
OLD_MODEL = ROOT / "tests" / "fixtures" / "saved_before_move" / "model.keras"


def attention_groups(path):
    """{attention group's vars path: [its values]}, the old layout's and the new one's."""
    found = {}

    def collect(name, item):  # visititems stops at the first non-None return
        if "self_attention" in name and name.endswith("vars"):
            found[name] = [item[str(index)][()] for index in range(len(item))]

    with h5py.File(path, "r") as weights:
        weights.visititems(collect)
    return found


def test_the_eight_weights_move_in_order_to_the_four_projections(tmp_path):
    old = attention_groups(OLD_ENCODER)
    copy = upgraded_weights_copy(OLD_ENCODER, tmp_path)
    new = attention_groups(copy)
    name = next(name for name in old if len(old[name]) == 8)
    attention = name[: -len("/vars")]
    assert new[f"{attention}/vars"] == []
    for number, projection in enumerate(("query", "key", "value", "output")):
        kernel, bias = new[f"{attention}/{projection}_dense/vars"]
        np.testing.assert_array_equal(kernel, old[name][2 * number])
        np.testing.assert_array_equal(bias, old[name][2 * number + 1])
    assert OLD_ENCODER.read_bytes() != copy.read_bytes()  # the original is left as it was


def test_a_current_file_needs_no_copy(tmp_path):
    (tmp_path / "first").mkdir()
    copy = upgraded_weights_copy(OLD_MODEL, tmp_path / "first")  # an old .keras file
    assert copy is not None
    shutil.copy(copy, tmp_path / "current.keras")
    assert upgraded_weights_copy(tmp_path / "current.keras", tmp_path) is None
    assert is_old_model_file(OLD_MODEL) and not is_old_model_file(tmp_path / "current.keras")
    assert is_old_encoder_file(OLD_ENCODER)
