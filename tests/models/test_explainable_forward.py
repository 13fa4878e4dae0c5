"""explainable_forward replays every kind of classifier the builder makes, exactly."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ModelConfig
from models import build_classifier
from models.checkpoints import read_checkpoint
from models.explainable_forward import explainable_forward, token_vectors

TOKEN_IDS = np.array([[4, 7, 9, 3, 0], [3, 0, 0, 0, 0], [5, 6, 7, 8, 9]])


@pytest.mark.parametrize("options", [
    {},
    {"pooling": "cls"},
    {"pooling": "max", "norm_first": True, "head_hidden_dim": 8},
    {"attention_block_size": 2, "token_dropout": 0.2},
    {"positional_encoding": "learned", "mask_zero": False},
], ids=["mean", "cls", "max-prenorm-hidden", "local-blocks", "learned-unmasked"])
def test_the_probabilities_equal_the_classifiers(options):
    keras.utils.set_random_seed(0)
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, **options)
    classifier = build_classifier(config, 50, sequence_length=8, num_classes=3)
    outputs = explainable_forward(classifier, TOKEN_IDS)
    np.testing.assert_allclose(outputs["probabilities"], classifier(TOKEN_IDS), atol=1e-6)
    np.testing.assert_allclose(keras.ops.softmax(outputs["logits"]), outputs["probabilities"],
                               atol=1e-7)
    length = TOKEN_IDS.shape[1] + (options.get("pooling") == "cls")
    assert [tuple(s.shape) for s in outputs["attention_scores"]] == [(3, 2, length, length)] * 2


def test_a_pretrained_classifier_and_its_hooks_keep_the_values(tmp_path):
    from tests.models.bert_reference import write_tiny_checkpoint

    checkpoint = read_checkpoint(write_tiny_checkpoint(tmp_path / "bert"))
    config = ModelConfig(pretrained=str(tmp_path / "bert"))
    classifier = build_classifier(config, None, None, num_classes=2, checkpoint=checkpoint)
    plain = explainable_forward(classifier, TOKEN_IDS)
    hooked = explainable_forward(classifier, TOKEN_IDS, token_vectors(classifier, TOKEN_IDS),
                                 attention_weights_fn=keras.ops.stop_gradient,
                                 detach_norm_scale=True)
    np.testing.assert_allclose(plain["probabilities"], classifier(TOKEN_IDS), atol=1e-6)
    np.testing.assert_allclose(hooked["logits"], plain["logits"], atol=1e-5)


def test_held_constant_the_norm_scale_and_attention_change_the_gradient_only():
    keras.utils.set_random_seed(1)
    config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    classifier = build_classifier(config, 50, sequence_length=8, num_classes=2)
    vectors = token_vectors(classifier, TOKEN_IDS)

    def gradient(**options):
        with tf.GradientTape() as tape:
            tape.watch(vectors)
            logits = explainable_forward(classifier, TOKEN_IDS, vectors, **options)["logits"]
            target = keras.ops.sum(logits[:, 0])
        return tape.gradient(target, vectors).numpy(), logits.numpy()

    full, logits = gradient()
    held, held_logits = gradient(attention_weights_fn=tf.stop_gradient, detach_norm_scale=True)
    np.testing.assert_allclose(held_logits, logits, atol=1e-6)
    assert np.abs(held - full).max() > 1e-3  # the detached paths carried gradient
