"""LoRA on the classifier (`models.lora`): what trains, and the adapter file's round trip."""

import h5py
import numpy as np
import pytest

from config import ModelConfig
from models import build_classifier
from models.lora import enable_lora, load_adapter, save_adapter, starting_kernels

SMALL = dict(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0)
TOKEN_IDS = np.array([[3, 4, 5, 6, 0], [7, 8, 9, 0, 0]])


def classifier():
    return build_classifier(ModelConfig(**SMALL), 20, sequence_length=8, num_classes=3)


def test_only_the_factors_and_the_head_train():
    model = classifier()
    enable_lora(model, 2, ["query", "output"])
    factors = [
        f"encoder_block_{block}/self_attention/{projection}/lora_kernel_{ab}"
        for block in (0, 1)
        for projection in ("query", "attention_output")
        for ab in "ab"
    ]
    assert [variable.path for variable in model.trainable_weights] == [
        *factors,
        "head/kernel",
        "head/bias",
    ]


def test_the_adapter_puts_the_trained_change_on_the_starting_model(tmp_path):
    base = classifier()
    trained = classifier()
    trained.set_weights(base.get_weights())
    start = starting_kernels(trained, ["query", "value"])
    enable_lora(trained, 2, ["query", "value"])
    rng = np.random.default_rng(0)
    for variable in trained.trainable_weights:  # as if trained
        variable.assign(rng.normal(size=variable.shape).astype("float32") * 0.3)
    save_adapter(trained, start, 2, tmp_path / "adapter.weights.h5")
    with h5py.File(tmp_path / "adapter.weights.h5") as adapter:
        assert adapter["blocks/0/query/lora_kernel_a"].shape == (16, 2, 2)  # (D, N, r)
        assert adapter["blocks/0/query/lora_kernel_b"].shape == (2, 8)  # (r, H)
    assert load_adapter(base, tmp_path / "adapter.weights.h5") == 2
    np.testing.assert_allclose(
        np.asarray(base(TOKEN_IDS)), np.asarray(trained(TOKEN_IDS)), atol=1e-5
    )


def test_a_file_that_is_not_an_adapter_is_refused(tmp_path):
    with h5py.File(tmp_path / "other.weights.h5", "w") as other:
        other["x"] = np.zeros(2)
    with pytest.raises(ValueError, match="is not an adapter file"):
        load_adapter(classifier(), tmp_path / "other.weights.h5")
