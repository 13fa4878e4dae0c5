"""`model.quantize("int8")` on a run's model (Keras quantizes the feed-forward, head and
embedding layers): it predicts, saves and reloads in safe mode with the same outputs."""

import numpy as np
import pytest

import runs
from models import load_end_to_end_model

TEXTS = np.array(["a good film", "dull, dull and far too long", "fine"], dtype=object)


def quantized_round_trip(run_dir, tmp_path):
    model = load_end_to_end_model(run_dir / runs.MODEL_FILE)
    before = np.asarray(model(TEXTS, training=False))
    with pytest.warns(UserWarning, match="does not have a `quantize` method"):
        model.quantize("int8")
    after = np.asarray(model(TEXTS, training=False))
    path = tmp_path / "int8.keras"
    model.save(path)
    reloaded = load_end_to_end_model(path)  # safe mode
    return model, before, after, reloaded


def test_a_run_quantized_to_int8_predicts_saves_and_reloads(tiny_run_dir, tmp_path):
    model, before, after, reloaded = quantized_round_trip(tiny_run_dir, tmp_path)
    quantized = {layer.path for layer in model._flatten_layers()
                 if layer.quantization_mode == "int8"}
    assert {"head", "token_and_position_embedding/token_embedding"} <= quantized
    assert any(path.endswith("feed_forward/intermediate_dense") for path in quantized)
    np.testing.assert_allclose(after, before, atol=0.02)  # int8 weights: close, not equal
    assert not np.array_equal(after, before)
    np.testing.assert_array_equal(np.asarray(reloaded(TEXTS, training=False)), after)
    assert {layer.path for layer in reloaded._flatten_layers()
            if layer.quantization_mode == "int8"} == quantized
