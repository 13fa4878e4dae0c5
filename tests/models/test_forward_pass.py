"""The classifier's one forward pass: what each caller asks of it, for every kind of
classifier the builder makes."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ModelConfig
from engine.training.starting_weights.checkpoints import read_checkpoint
from models import build_classifier, token_vectors

TOKEN_IDS = np.array([[4, 7, 9, 3, 0], [3, 0, 0, 0, 0], [5, 6, 7, 8, 9]])
KINDS = [
    {},
    {"pooling": "cls"},
    {"pooling": "max", "norm_first": True, "head_hidden_dim": 8},
    {"attention_block_size": 2, "token_dropout": 0.2},
    {"positional_encoding": "learned", "mask_zero": False},
]
KIND_IDS = ["mean", "cls", "max-prenorm-hidden", "local-blocks", "learned-unmasked"]


def small_classifier(seed=0, **options):
    keras.utils.set_random_seed(seed)
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, **options)
    return build_classifier(config, 50, sequence_length=8, num_classes=3)


@pytest.mark.parametrize("options", KINDS, ids=KIND_IDS)
def test_scores_and_logits_come_with_the_fast_paths_probabilities(options):
    classifier = small_classifier(**options)
    fast = np.asarray(classifier(TOKEN_IDS))
    outputs = classifier(TOKEN_IDS, return_attention_scores=True, return_logits=True)
    np.testing.assert_allclose(outputs["probabilities"], fast, atol=1e-6)
    np.testing.assert_allclose(
        keras.ops.softmax(outputs["logits"]), outputs["probabilities"], atol=1e-7
    )
    length = TOKEN_IDS.shape[1] + (options.get("pooling") == "cls")
    scores = [np.asarray(s) for s in outputs["attention_scores"]]
    assert [s.shape for s in scores] == [(3, 2, length, length)] * 2
    assert all(s.dtype == np.float32 for s in scores)
    if options.get("mask_zero", True):
        # Row 1 has one real token (and the class token): padded keys get exactly 0.
        real = 1 + (options.get("pooling") == "cls")
        assert np.all(scores[0][1, :, :real, real:] == 0.0)
        np.testing.assert_allclose(scores[0][1, :, :real].sum(axis=-1), 1.0, rtol=1e-5)


def test_local_attention_blocks_reach_the_scores():
    classifier = small_classifier(attention_block_size=2)
    ids = np.array([[5, 6, 7, 8, 9, 4]])
    for scores in classifier(ids, return_attention_scores=True)["attention_scores"]:
        scores = np.asarray(scores)
        # Tokens 0-1, 2-3 and 4-5 are three blocks: no weight crosses between them.
        assert np.all(scores[:, :, :2, 2:] == 0.0) and np.all(scores[:, :, 2:4, 4:] == 0.0)


def test_a_pretrained_classifier_and_its_hooks_keep_the_values(tmp_path):
    from tests.models.bert_reference import write_tiny_checkpoint

    checkpoint = read_checkpoint(write_tiny_checkpoint(tmp_path / "bert"))
    config = ModelConfig(pretrained=str(tmp_path / "bert"))
    classifier = build_classifier(config, None, None, num_classes=2, checkpoint=checkpoint)
    plain = classifier(TOKEN_IDS, return_logits=True)
    hooked = classifier(
        TOKEN_IDS,
        token_vectors=token_vectors(classifier, TOKEN_IDS),
        attention_weights_fn=keras.ops.stop_gradient,
        detach_norm_scale=True,
        return_logits=True,
    )
    np.testing.assert_allclose(hooked["logits"], plain["logits"], atol=1e-5)


def test_held_constant_the_norm_scale_and_attention_change_the_gradient_only():
    classifier = small_classifier(seed=1)
    vectors = token_vectors(classifier, TOKEN_IDS)

    def gradient(**options):
        with tf.GradientTape() as tape:
            tape.watch(vectors)
            logits = classifier(TOKEN_IDS, token_vectors=vectors, return_logits=True, **options)[
                "logits"
            ]
            target = keras.ops.sum(logits[:, 0])
        return tape.gradient(target, vectors).numpy(), logits.numpy()

    full, logits = gradient()
    held, held_logits = gradient(attention_weights_fn=tf.stop_gradient, detach_norm_scale=True)
    np.testing.assert_allclose(held_logits, logits, atol=1e-6)
    assert np.abs(held - full).max() > 1e-3  # the detached paths carried gradient


@pytest.mark.parametrize("options", [{}, {"attention_block_size": 2}], ids=["full", "local"])
def test_a_head_mask_of_ones_changes_nothing_and_zeros_switch_heads_off(options):
    classifier = small_classifier(dropout=0.0, **options)
    ones = np.ones((2, 2), "float32")
    np.testing.assert_allclose(
        classifier(TOKEN_IDS, head_mask=ones), classifier(TOKEN_IDS), atol=1e-7
    )
    # Switching a head off is zeroing its share of the output projection's input.
    off = ones.copy()
    off[1, 0] = 0.0
    masked = np.asarray(classifier(TOKEN_IDS, head_mask=off))
    attention = classifier.encoder.blocks[1].self_attention
    kernel = attention.output_dense.kernel.numpy()
    attention.output_dense.kernel.assign(kernel * np.array([0.0, 1.0])[:, None, None])  # (N, H, D)
    np.testing.assert_allclose(masked, classifier(TOKEN_IDS), atol=1e-6)
    attention.output_dense.kernel.assign(kernel)
    assert np.abs(masked - np.asarray(classifier(TOKEN_IDS))).max() > 1e-4


def test_the_head_masks_gradient_is_a_heads_importance():
    # d loss / d mask_h = the loss's change per unit of head h's output: Michel et al.
    classifier = small_classifier(seed=2, dropout=0.0)
    mask = tf.Variable(np.ones((2, 2), "float32"))
    with tf.GradientTape() as tape:
        loss = -tf.reduce_sum(tf.math.log(classifier(TOKEN_IDS, head_mask=mask)[:, 0]))
    gradient = tape.gradient(loss, mask).numpy()
    epsilon = 1e-2
    for layer, head in [(0, 1), (1, 0)]:
        shifted = np.ones((2, 2), "float32")
        shifted[layer, head] += epsilon
        shifted_loss = -np.log(np.asarray(classifier(TOKEN_IDS, head_mask=shifted))[:, 0]).sum()
        assert gradient[layer, head] == pytest.approx(
            (shifted_loss - float(loss)) / epsilon, rel=0.05, abs=1e-4
        )


def test_a_per_example_head_mask_acts_on_its_example_only():
    classifier = small_classifier(seed=3, dropout=0.0)
    off = np.ones((2, 2), "float32")
    off[0, 1] = 0.0
    per_example = np.stack(
        [np.ones((2, 2), "float32"), off] + [np.ones((2, 2), "float32")] * (len(TOKEN_IDS) - 2)
    )  # (B, L, N)
    mixed = np.asarray(classifier(TOKEN_IDS, head_mask=per_example))
    np.testing.assert_allclose(mixed[0], np.asarray(classifier(TOKEN_IDS))[0], atol=1e-6)
    np.testing.assert_allclose(
        mixed[1], np.asarray(classifier(TOKEN_IDS, head_mask=off))[1], atol=1e-6
    )
    assert np.abs(mixed[1] - np.asarray(classifier(TOKEN_IDS))[1]).max() > 1e-5
