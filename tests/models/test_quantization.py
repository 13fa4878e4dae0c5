"""`model.quantize("int8")` on a run's model (Keras quantizes the attention projections,
the feed-forward, head and embedding layers): it predicts, saves and reloads in safe mode
with the same outputs."""

import numpy as np

from tests.models.int8_round_trip import TEXTS, quantized_round_trip


def test_a_run_quantized_to_int8_predicts_saves_and_reloads(tiny_run_dir, tmp_path):
    model, before, after, reloaded = quantized_round_trip(tiny_run_dir, tmp_path)
    quantized = {
        layer.path for layer in model._flatten_layers() if layer.quantization_mode == "int8"
    }
    assert {"head", "token_and_position_embedding/token_embedding"} <= quantized
    assert any(path.endswith("feed_forward/intermediate_dense") for path in quantized)
    for projection in ("query", "key", "value", "attention_output"):
        assert any(path.endswith(f"self_attention/{projection}") for path in quantized)
    np.testing.assert_allclose(after, before, atol=0.02)  # int8 weights: close, not equal
    assert not np.array_equal(after, before)
    np.testing.assert_array_equal(np.asarray(reloaded(TEXTS, training=False)), after)
    assert {
        layer.path for layer in reloaded._flatten_layers() if layer.quantization_mode == "int8"
    } == quantized
