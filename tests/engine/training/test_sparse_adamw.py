import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ModelConfig, TrainingConfig
from engine.training.sparse_adamw import SparseAdamW
from engine.training.trainer import build_trainer, make_optimizer
from models import build_classifier

ROWS = [[0, 2, 2, 1, 3], [3, 3, 1, 0, 2], [1, 0, 2, 3, 3]]  # Every row, some twice, per step.


def run(optimizer_class, dense, rows=ROWS, **kwargs):
    """(table, bias) after one step per entry of `rows`, from fixed starts and gradients."""
    rng = np.random.default_rng(0)
    table = keras.Variable(rng.normal(size=(4, 3)).astype("float32"), name="embeddings")
    bias = keras.Variable(rng.normal(size=(3,)).astype("float32"), name="bias")
    optimizer = optimizer_class(learning_rate=0.05, weight_decay=0.1, clipnorm=1.0, **kwargs)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    for step_rows in rows:
        values = rng.normal(size=(len(step_rows), 3)).astype("float32")
        grad = tf.IndexedSlices(tf.constant(values), tf.constant(step_rows), (4, 3))
        optimizer.apply(
            [
                tf.convert_to_tensor(grad) if dense else grad,
                tf.constant(rng.normal(size=(3,)).astype("float32")),
            ],
            [table, bias],
        )
    return table.numpy(), bias.numpy(), optimizer


def test_equals_adamw_when_every_row_is_used_every_step():
    # Repeated rows are summed before clipping, so the clipped norm is the dense one's.
    table, bias, _ = run(SparseAdamW, dense=False)
    expected_table, expected_bias, _ = run(keras.optimizers.AdamW, dense=True)
    np.testing.assert_allclose(table, expected_table, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias, expected_bias, rtol=1e-5, atol=1e-6)
    # Dense gradients take Keras' AdamW path unchanged.
    dense_table, _, _ = run(SparseAdamW, dense=True)
    np.testing.assert_allclose(dense_table, expected_table, rtol=1e-6, atol=1e-7)


def test_rows_not_looked_up_keep_their_values_and_moments():
    start, _, _ = run(SparseAdamW, dense=False, rows=[])
    table, _, optimizer = run(SparseAdamW, dense=False, rows=[[1, 1], [1, 3]])
    # Row 1 and 3 moved; rows 0 and 2 were never looked up: no update, no weight decay.
    np.testing.assert_array_equal(table[[0, 2]], start[[0, 2]])
    assert np.all(table[[1, 3]] != start[[1, 3]])
    momentum = optimizer._momentums[0].numpy()
    assert np.all(momentum[[0, 2]] == 0) and np.all(momentum[[1, 3]] != 0)
    # AdamW moves every row every step: its weight decay shrinks the unused ones too.
    dense_table, _, _ = run(keras.optimizers.AdamW, dense=True, rows=[[1, 1], [1, 3]])
    assert np.all(np.abs(dense_table[[0, 2]]) < np.abs(start[[0, 2]]))


@pytest.mark.parametrize(
    "name, expected", [("sparse_adamw", SparseAdamW), ("adamw", keras.optimizers.AdamW)]
)
def test_config_picks_the_optimizer(name, expected):
    optimizer = make_optimizer(TrainingConfig(optimizer=name), steps_per_epoch=10)
    assert type(optimizer) is expected


def test_a_train_step_leaves_the_embeddings_of_words_not_in_the_batch_alone():
    classifier = build_classifier(
        ModelConfig(d_model=8, num_heads=2, intermediate_dim=8), 50, 16, num_classes=2
    )
    # No warmup: the first step's learning rate is the peak, not 0.
    training = TrainingConfig(optimizer="sparse_adamw", warmup_fraction=0)
    trainer = build_trainer(classifier, training, steps_per_epoch=10)
    embeddings = next(w for w in classifier.weights if "token_embedding" in w.path)
    before = embeddings.numpy()
    token_ids = np.array([[5, 6, 7, 0], [7, 8, 0, 0]])
    trainer.train_on_batch(token_ids, np.eye(2)[[0, 1]])
    changed = np.flatnonzero(np.any(embeddings.numpy() != before, axis=1))
    # Padding (0) is looked up too: a zero gradient, but its row is decayed.
    assert changed.tolist() == [0, 5, 6, 7, 8]
