import keras
import numpy as np

from models import TrimPadding


def test_cuts_to_the_longest_row_and_keeps_one_column():
    layer = TrimPadding()
    ids = np.array([[4, 0, 0, 0], [5, 6, 7, 0]])
    np.testing.assert_array_equal(layer(ids), ids[:, :3])
    np.testing.assert_array_equal(layer(np.zeros((2, 5), "int64")), np.zeros((2, 1)))
    # A padding id inside a text does not end it: only trailing columns go.
    np.testing.assert_array_equal(layer(np.array([[4, 0, 9, 0]])), [[4, 0, 9]])


def test_config_round_trip_and_symbolic_shape():
    layer = TrimPadding(padding_id=1, name="trim")
    again = TrimPadding.from_config(layer.get_config())
    assert again.padding_id == 1 and again.name == "trim"
    assert layer(keras.Input((8,), dtype="int64")).shape == (None, None)
    np.testing.assert_array_equal(again(np.array([[3, 1, 1]])), [[3]])
