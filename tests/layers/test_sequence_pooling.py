import numpy as np
import pytest

from layers import SequencePooling

X = np.array([[[1.0, -2.0], [3.0, -4.0], [100.0, 100.0]]], "float32")  # (1, 3, 2)
MASK = np.array([[True, True, False]])


def test_mean_ignores_padding():
    np.testing.assert_allclose(SequencePooling("mean")(X, mask=MASK), [[2.0, -3.0]])


def test_max_ignores_padding():
    np.testing.assert_allclose(SequencePooling("max")(X, mask=MASK), [[3.0, -2.0]])


def test_cls_takes_position_zero():
    np.testing.assert_allclose(SequencePooling("cls")(X, mask=MASK), [[1.0, -2.0]])


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_fully_masked_rows_pool_to_zero(pooling):
    pooled = np.asarray(SequencePooling(pooling)(X, mask=np.zeros((1, 3), bool)))
    np.testing.assert_array_equal(pooled, [[0.0, 0.0]])


def test_without_mask_every_position_counts():
    np.testing.assert_allclose(SequencePooling("mean")(X), [[104 / 3, 94 / 3]], rtol=1e-6)


def test_float16_inputs_stay_float16_and_exact():
    pooled = SequencePooling("mean", dtype="mixed_float16")(X, mask=MASK)
    assert str(pooled.dtype) == "float16" or "float16" in str(pooled.dtype)
    np.testing.assert_allclose(np.asarray(pooled, "float32"), [[2.0, -3.0]])


def test_config_round_trip_and_bad_argument():
    layer = SequencePooling("max", name="pool")
    assert SequencePooling.from_config(layer.get_config()).pooling == "max"
    with pytest.raises(ValueError, match="Received: pooling='sum'"):
        SequencePooling("sum")
