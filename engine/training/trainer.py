"""The `training` config section mapped to Keras: the compiled trainer and its optimizer
(the callbacks it trains with are `engine/training/callbacks.py`'s).

The trainer is a functional model around the classifier (the same layers) that carries the loss,
the metrics and the optimizer, so the classifier itself stays uncompiled: saved inside
`model.keras`, it takes no optimizer state (twice the weights for Adam) with it.
"""

import contextlib

import keras
import tensorflow as tf

from engine.training.sparse_adamw import SparseAdamW


class TrainingError(RuntimeError):
    """Training failed in a way the user can act on; the message is one line."""


def make_optimizer(training, steps_per_epoch):
    """Optimizer with linear warmup, then cosine decay (or constant) over all planned steps.

    Args:
        training: a `config.TrainingConfig`.
        steps_per_epoch: training steps in one epoch.

    Example:
    >>> from config import TrainingConfig
    >>> optimizer = make_optimizer(TrainingConfig(epochs=2, warmup_fraction=0.5), 10)
    >>> type(optimizer).__name__, float(optimizer.learning_rate)  # Step 0: warmup starts at 0.
    ('AdamW', 0.0)
    """
    training = training.resolved()  # train.py resolved auto already, for its model
    total_steps = max(1, training.epochs * steps_per_epoch)
    peak = training.learning_rate
    warmup_steps = int(training.warmup_fraction * total_steps)
    # CosineDecay ramps linearly from initial_learning_rate to warmup_target, then decays
    # to alpha * peak; alpha=1 keeps the rate constant after warmup.
    learning_rate = keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0 if warmup_steps else peak,
        decay_steps=max(1, total_steps - warmup_steps),
        alpha=0.0 if training.schedule == "cosine" else 1.0,
        warmup_target=peak if warmup_steps else None,
        warmup_steps=warmup_steps,
    )
    if training.optimizer in ("adamw", "sparse_adamw"):
        adamw = SparseAdamW if training.optimizer == "sparse_adamw" else keras.optimizers.AdamW
        optimizer = _replica_safe(adamw)(
            learning_rate=learning_rate,
            weight_decay=training.weight_decay,
            clipnorm=training.clipnorm,
        )
        # Decaying biases and LayerNorm scales only shrinks them toward 0 for no benefit.
        optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
        return optimizer
    if training.optimizer == "adam":
        return _replica_safe(keras.optimizers.Adam)(
            learning_rate=learning_rate, clipnorm=training.clipnorm
        )
    return _replica_safe(keras.optimizers.SGD)(
        learning_rate=learning_rate, momentum=0.9, clipnorm=training.clipnorm
    )


def _replica_safe(optimizer_class):
    """`optimizer_class`, clipping the gradients after they are summed over replicas.

    Keras clips each replica's gradient and only then sums them across replicas, so with
    `clipnorm` a step of two replicas could move up to twice as far as one process's
    step on the same batch. Under a TensorFlow strategy of several replicas the subclass
    clips the summed gradients instead; elsewhere the class is returned as it is.
    """
    if not tf.distribute.has_strategy() or tf.distribute.get_strategy().num_replicas_in_sync < 2:
        return optimizer_class

    class ClipAfterAllReduce(optimizer_class):
        def _clip_gradients(self, grads):
            return grads  # Clipped in _backend_update_step, once summed.

        def _backend_update_step(self, grads, trainable_variables, learning_rate):
            # Keras' TensorFlow _backend_update_step, with the clipping moved after its sum.
            variables = [
                v.value if isinstance(v, keras.Variable) else v for v in trainable_variables
            ]
            summed = self._all_reduce_sum_gradients(list(zip(grads, variables)))
            clipped = optimizer_class._clip_gradients(self, [grad for grad, _ in summed])
            tf.__internal__.distribute.interim.maybe_merge_call(
                self._distributed_tf_update_step,
                self._distribution_strategy,
                list(zip(clipped, variables)),
                learning_rate,
            )

    ClipAfterAllReduce.__name__ = optimizer_class.__name__
    return ClipAfterAllReduce


class Trainer(keras.Model):
    """The functional trainer: optimizer and metrics built before the first step, and
    two fixes for TensorFlow's distribution strategies.

    Outside a strategy, Keras' TensorFlow trainer builds the optimizer and the metrics
    while tracing the first step, and a `tf.function` whose first trace creates variables
    traces again: every fit traced its train step twice (about 2 s of an R52 run). Under
    a strategy, it takes one batch from the distributed dataset and averages it across
    replicas, only to learn the input shapes for building them. Across workers that
    collective fails ("Attempt to convert a value (PerReplica...) to a Tensor": the
    batches differ in length), and the batch comes from an extra iterator, which draws
    another seeded shuffle order than one process's first epoch. Both cases build from
    the dataset's element spec instead. Then, after each step, Keras averages the logs
    across workers with `reduce("MEAN", value, axis=0)`, which fails on scalars ("Invalid
    reduction dimension 0"): in multi-worker mode each log value gets an axis. (The
    optimizer's part of making replicas train like one process is in `make_optimizer`.)
    """

    dynamics = None  # a TrainingDynamics, once `record_dynamics` is called

    def record_dynamics(self, dynamics):
        """Hands each training step's predictions to `dynamics` (`TrainingDynamics`): the
        train batches must then carry each text's position third (`make_pipelines`)."""
        self.dynamics = dynamics

    def train_step(self, data):
        if self.dynamics is None:
            return self._with_worker_axis(super().train_step(data))
        # Keras would take a third element for sample weights: it is the texts' positions,
        # which `compute_metrics` of this same step records with the step's predictions.
        x, y, self.dynamics.pending_positions = data
        try:
            return self._with_worker_axis(super().train_step((x, y)))
        finally:
            self.dynamics.pending_positions = None

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self.dynamics is not None and self.dynamics.pending_positions is not None:
            self.dynamics.record(self.dynamics.pending_positions, y, y_pred)
        return super().compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        return self._with_worker_axis(super().test_step(data))

    def _with_worker_axis(self, logs):
        strategy = self._distribute_strategy
        if strategy is None or not strategy.extended._in_multi_worker_mode():
            return logs
        return {
            name: keras.ops.reshape(value, (1,)) if len(value.shape) == 0 else value
            for name, value in logs.items()
        }

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if iterator is None or data_batch is not None:
            return super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)
        # The shapes come from the dataset's element spec. Outside a strategy Keras would
        # build inside the first trace (which then traces again); under one it takes a
        # batch, which makes (and drops) an extra iterator of the train dataset: that draws
        # a new seeded shuffle order, so a distributed run would see other batches than one
        # process (and resumes would replay the wrong orders).
        spec = iterator.data_adapter.get_tf_dataset().element_spec
        spec = keras.tree.map_structure(
            lambda value: getattr(value, "_value_specs", (value,))[0], spec
        )
        if self.dynamics is not None:
            spec = spec[:2]  # (inputs, labels): the positions are no sample weights
        with self.distribute_strategy.scope():
            self._symbolic_build(data_batch=spec)


def build_trainer(classifier, training, steps_per_epoch, start_block=None):
    """The compiled model that trains `classifier` (shared layers; categorical targets, or
    multi-hot ones for a multi-label classifier).

    With `start_block`, it takes `[token ids, hidden states]`: the states after the
    encoder's first `start_block` blocks (`TextEncoder.lower_states`), computed once per
    text, and runs only the blocks from there on (`freeze_lower_blocks`).

    Example:
    >>> from config import ModelConfig, TrainingConfig
    >>> from models import build_classifier
    >>> classifier = build_classifier(
    ...     ModelConfig(d_model=8, num_heads=2, intermediate_dim=8), 20, 4, num_classes=2)
    >>> trainer = build_trainer(classifier, TrainingConfig(), steps_per_epoch=10)
    >>> trainer.weights == classifier.weights, hasattr(classifier, "optimizer")  # Not compiled.
    (True, False)
    """
    token_ids = keras.Input(shape=(None,), dtype="int64", name="token_ids")
    if start_block is None:
        trainer = Trainer(token_ids, classifier(token_ids), name="trainer")
    else:
        states = keras.Input(shape=(None, classifier.encoder.d_model), name="hidden_states")
        trainer = Trainer(
            [token_ids, states],
            classifier(token_ids, hidden_states=states, start_block=start_block),
            name="trainer",
        )
    if classifier.multi_label:  # Multi-hot targets, a sigmoid per label.
        loss = keras.losses.BinaryCrossentropy(label_smoothing=training.label_smoothing)
        metrics = [
            keras.metrics.F1Score(average="micro", threshold=0.5, name="micro_f1"),
            keras.metrics.F1Score(average="macro", threshold=0.5, name="macro_f1"),
        ]
    else:
        # Categorical (one-hot) targets: the only Keras cross-entropy with label_smoothing.
        loss = keras.losses.CategoricalCrossentropy(label_smoothing=training.label_smoothing)
        metrics = [
            keras.metrics.CategoricalAccuracy(name="accuracy"),
            keras.metrics.F1Score(average="macro", name="macro_f1"),
        ]
    trainer.compile(
        optimizer=make_optimizer(training, steps_per_epoch),
        loss=loss,
        metrics=metrics,
        jit_compile=training.jit_compile,
    )
    return trainer


def freeze_lower_blocks(classifier, trainable_blocks):
    """Freezes the embedding, the class token and every block below the top
    `trainable_blocks` (0: the whole encoder); returns the first trained block's index.

    Example:
    >>> from config import ModelConfig
    >>> from models import build_classifier
    >>> classifier = build_classifier(
    ...     ModelConfig(d_model=8, num_heads=2, num_layers=3, intermediate_dim=8), 20, 4, 2)
    >>> freeze_lower_blocks(classifier, 1), [b.trainable for b in classifier.encoder.blocks]
    (2, [False, False, True])
    """
    encoder = classifier.encoder
    start_block = len(encoder.blocks) - trainable_blocks
    frozen = [encoder.embedding, encoder.class_token, *encoder.blocks[:start_block]]
    for layer in frozen:
        if layer is not None:
            layer.trainable = False
    return start_block


@contextlib.contextmanager
def dtype_policy(mixed_precision):
    """Sets mixed_float16 while building and training, then restores the previous policy."""
    previous = keras.config.dtype_policy()
    if mixed_precision:
        keras.config.set_dtype_policy("mixed_float16")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)
