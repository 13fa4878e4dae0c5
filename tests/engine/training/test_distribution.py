"""engine.training.distribution: the strategy of `training.distribution` and how training names it.

Training under each strategy, against a single process, is tests/test_train_distributed.py.
"""

from engine.training.distribution import describe_replicas


def test_training_says_how_many_replicas_on_which_devices():
    import tensorflow as tf

    # One process on a CPU machine: TensorFlow lists all cores as one device.
    assert describe_replicas(tf.distribute.get_strategy(), "none") == (
        "Training on 1 replica: CPU:0"
    )
