"""Pruned heads: sliced for real, equal to the head-masked model, saved and reloaded."""

import keras
import numpy as np
import pytest

from config import ModelConfig
from models import build_classifier
from models.pruning import pruned_classifier

TOKEN_IDS = np.array([[4, 7, 9, 3, 0], [3, 5, 0, 0, 0], [5, 6, 7, 8, 9]])


def classifier_of(**options):
    keras.utils.set_random_seed(0)
    config = ModelConfig(
        d_model=16, num_heads=4, num_layers=2, intermediate_dim=32, dropout=0.0, **options
    )
    return build_classifier(config, 50, sequence_length=8, num_classes=3)


@pytest.mark.parametrize(
    "options",
    [{}, {"pooling": "cls", "head_hidden_dim": 8}, {"attention_block_size": 2}],
    ids=["mean", "cls-hidden", "local"],
)
def test_the_pruned_model_equals_the_head_masked_one(tmp_path, options):
    classifier = classifier_of(**options)
    heads = [(0, 1), (0, 3), (1, 0)]
    mask = np.ones((2, 4), "float32")
    for layer, head in heads:
        mask[layer, head] = 0.0
    pruned = pruned_classifier(classifier, heads)
    assert pruned.encoder.head_counts == [2, 3]
    assert pruned.encoder.blocks[0].self_attention.query_dense.kernel.shape == (16, 2, 4)
    assert pruned.count_params() < classifier.count_params()
    np.testing.assert_allclose(pruned(TOKEN_IDS), classifier(TOKEN_IDS, head_mask=mask), atol=1e-5)
    pruned.save(tmp_path / "pruned.keras")
    loaded = keras.saving.load_model(tmp_path / "pruned.keras", safe_mode=True)
    np.testing.assert_array_equal(np.asarray(loaded(TOKEN_IDS)), np.asarray(pruned(TOKEN_IDS)))
    assert loaded.encoder.head_counts == [2, 3]


def test_every_head_of_a_block_or_a_head_not_there_is_refused():
    classifier = classifier_of()
    with pytest.raises(ValueError, match="pruning every head of block 1 leaves it no"):
        pruned_classifier(classifier, [(1, 0), (1, 1), (1, 2), (1, 3)])
    with pytest.raises(ValueError, match=r"head \(2, 0\) is not in the model"):
        pruned_classifier(classifier, [(2, 0)])
