"""Heads across a dataset: the statistics by hand, importance against a finite difference,
and a planted head ranked first by importance and by ablation."""

import keras
import numpy as np
import pytest
from scipy.stats import spearmanr

from config import ModelConfig
from inspection.methods.heads import (
    STATISTICS,
    attention_statistics,
    head_ablation,
    head_importance,
    map_statistics,
)
from inspection.token_schemes import BYTE_LEVEL_BPE, WORD_PIECE
from models import build_classifier

TOKEN_IDS = np.array([[4, 7, 9, 3, 0], [3, 5, 0, 0, 0], [5, 6, 7, 8, 9], [9, 8, 7, 0, 0]])
LABELS = np.array([0, 1, 1, 0])


def test_the_statistics_of_a_map_worked_by_hand():
    # One head over "[CLS] film , [SEP]": rows are queries, columns keys.
    maps = np.array(
        [
            [
                [
                    [1.0, 0.0, 0.0, 0.0],
                    [0.5, 0.5, 0.0, 0.0],
                    [0.0, 0.25, 0.25, 0.5],
                    [0.0, 0.0, 1.0, 0.0],
                ]
            ]
        ]
    )
    stats = map_statistics(maps, ["[CLS]", "film", ",", "[SEP]"], WORD_PIECE)
    assert set(stats) == set(STATISTICS)
    expected = {
        "to_cls": (1.0 + 0.5) / 4,
        "to_sep": 0.5 / 4,
        "to_punctuation": (0.25 + 1.0) / 4,
        "to_self": (1.0 + 0.5 + 0.25 + 0.0) / 4,
        "to_previous": (0.5 + 0.25 + 1.0) / 4,
        "to_next": (0.0 + 0.0 + 0.5) / 4,
        "mean_distance": (0 + 0.5 + (0.25 + 0.5) + 1.0) / 4,
        "entropy": (0 + np.log(2) + (2 * 0.25 * np.log(4) + 0.5 * np.log(2)) + 0) / np.log(4) / 4,
    }
    for name, value in expected.items():
        assert stats[name][0, 0] == pytest.approx(value), name
    # The same map over RoBERTa's "<s> Ġfilm Ġ, </s>": its own class token and separator,
    # and a space-marked comma is punctuation.
    roberta = map_statistics(maps, ["<s>", "Ġfilm", "Ġ,", "</s>"], BYTE_LEVEL_BPE)
    for name in ("to_cls", "to_sep", "to_punctuation"):
        assert roberta[name][0, 0] == pytest.approx(expected[name]), name
    assert map_statistics(maps, ["<s>", "film", ",", "</s>"], WORD_PIECE)["to_cls"][0, 0] == 0


def small_classifier(seed=0):
    keras.utils.set_random_seed(seed)
    config = ModelConfig(
        d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0, norm_first=False
    )
    return build_classifier(config, 50, sequence_length=8, num_classes=2)


def test_dataset_statistics_average_the_examples_and_rows_sum_to_one():
    classifier = small_classifier()
    stats = attention_statistics(
        classifier, TOKEN_IDS, [str(i) for i in range(50)], class_token=False, batch_size=3
    )
    assert all(stats[name].shape == (2, 2) for name in STATISTICS)
    assert np.all(stats["to_cls"] == 0) and np.all(stats["to_sep"] == 0)  # none in the text
    assert np.all((stats["entropy"] > 0) & (stats["entropy"] <= 1))
    assert np.all(stats["to_self"] + stats["to_previous"] + stats["to_next"] <= 1 + 1e-6)


def test_importance_is_the_mean_absolute_gradient_of_the_head_mask():
    classifier = small_classifier(seed=3)
    importance = head_importance(classifier, TOKEN_IDS, LABELS, batch_size=2)
    epsilon = 1e-2

    def batch_loss(ids, labels, mask):
        probabilities = np.asarray(classifier(ids, head_mask=mask), np.float64)
        return -np.log(probabilities[np.arange(len(labels)), labels]).sum()

    for layer, head in [(0, 1), (1, 0)]:
        shifted = np.ones((2, 2), "float32")
        shifted[layer, head] += epsilon
        # Each example's own |finite difference|, not its batch's: signs do not net out.
        expected = sum(
            abs(
                batch_loss(TOKEN_IDS[i : i + 1], LABELS[i : i + 1], shifted)
                - batch_loss(TOKEN_IDS[i : i + 1], LABELS[i : i + 1], np.ones((2, 2), "float32"))
            )
            / epsilon
            for i in range(len(TOKEN_IDS))
        ) / len(TOKEN_IDS)
        assert importance[layer, head] == pytest.approx(expected, rel=0.05, abs=1e-5)


def test_a_planted_head_ranks_first_by_importance_and_by_ablation():
    # Every head's share of the output projection is made tiny but that of block 1's head 0,
    # which is made large: it alone moves the logits much.
    classifier = small_classifier(seed=5)
    for index, block in enumerate(classifier.encoder.blocks):
        kernel = block.self_attention.output_dense.kernel
        scale = np.full((2, 1, 1), 0.01)
        if index == 1:
            scale[0] = 8.0
        kernel.assign(kernel.numpy() * scale)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 50, size=(32, 6))
    labels = np.asarray(classifier(ids)).argmax(axis=-1)  # what the planted head decides
    importance = head_importance(classifier, ids, labels)
    drops, rises, changes = head_ablation(classifier, ids, labels)
    assert np.unravel_index(importance.argmax(), importance.shape) == (1, 0)
    assert np.unravel_index(rises.argmax(), rises.shape) == (1, 0)
    assert drops[1, 0] > 0 and drops[1, 0] == drops.max()
    # Importance is the first-order size of masking a head, whichever way the loss moves.
    assert spearmanr(importance.ravel(), changes.ravel()).statistic == pytest.approx(1.0)
    assert np.all(changes >= np.abs(rises) - 1e-12)  # a mean of |changes| >= |mean change|


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_the_ablation_from_the_lower_blocks_states_equals_masking_the_whole_model(pooling):
    keras.utils.set_random_seed(5)
    classifier = build_classifier(
        ModelConfig(d_model=16, num_heads=2, num_layers=3, intermediate_dim=32, pooling=pooling),
        50,
        sequence_length=8,
        num_classes=2,
    )
    drops, rises, changes = head_ablation(classifier, TOKEN_IDS, LABELS, batch_size=3)

    def losses(mask):
        predicted = np.asarray(classifier(TOKEN_IDS, head_mask=mask), np.float64)
        return predicted, -np.log(predicted[np.arange(len(LABELS)), LABELS])

    full, full_losses = losses(np.ones((3, 2), "float32"))
    for layer, head in [(0, 1), (1, 0), (2, 1)]:
        mask = np.ones((3, 2), "float32")
        mask[layer, head] = 0.0
        predicted, masked_losses = losses(mask)
        assert rises[layer, head] == pytest.approx((masked_losses - full_losses).mean(), abs=1e-5)
        assert changes[layer, head] == pytest.approx(
            np.abs(masked_losses - full_losses).mean(), abs=1e-5
        )
        assert drops[layer, head] == pytest.approx(
            (full.argmax(-1) == LABELS).mean() - (predicted.argmax(-1) == LABELS).mean()
        )
    assert changes.min() > 1e-4  # every head moved some loss: the check can fail
