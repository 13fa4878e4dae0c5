import numpy as np
import pytest

from layers import PositionEmbedding
from tests.layers.layer_test_case import to_numpy


def test_returns_the_table_rows_from_start_index_broadcast_over_the_batch():
    layer = PositionEmbedding(sequence_length=6)
    layer.build((None, None, 3))
    table = np.arange(18, dtype="float32").reshape(6, 3)
    layer.set_weights([table])
    output = to_numpy(layer(np.zeros((2, 4, 3), "float32"), start_index=2))
    np.testing.assert_array_equal(output, np.broadcast_to(table[2:6], (2, 4, 3)))


def test_too_long_inputs_name_the_fix():
    with pytest.raises(ValueError, match="raise `sequence_length`"):
        PositionEmbedding(sequence_length=3)(np.zeros((1, 4, 2), "float32"))


@pytest.mark.parametrize("value", [0, -2, 3.5])
def test_invalid_sequence_length(value):
    with pytest.raises(ValueError, match=f"Received: sequence_length={value}"):
        PositionEmbedding(sequence_length=value)
