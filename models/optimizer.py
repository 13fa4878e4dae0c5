"""The one builder that maps the `training` config section to a Keras optimizer."""

import keras


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
    total_steps = max(1, training.epochs * steps_per_epoch)
    warmup_steps = int(training.warmup_fraction * total_steps)
    # CosineDecay ramps linearly from initial_learning_rate to warmup_target, then decays
    # to alpha * peak; alpha=1 keeps the rate constant after warmup.
    learning_rate = keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0 if warmup_steps else training.learning_rate,
        decay_steps=max(1, total_steps - warmup_steps),
        alpha=0.0 if training.schedule == "cosine" else 1.0,
        warmup_target=training.learning_rate if warmup_steps else None,
        warmup_steps=warmup_steps,
    )
    if training.optimizer == "adamw":
        optimizer = keras.optimizers.AdamW(
            learning_rate=learning_rate,
            weight_decay=training.weight_decay,
            clipnorm=training.clipnorm,
        )
        # Decaying biases and LayerNorm scales only shrinks them toward 0 for no benefit.
        optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
        return optimizer
    if training.optimizer == "adam":
        return keras.optimizers.Adam(learning_rate=learning_rate, clipnorm=training.clipnorm)
    return keras.optimizers.SGD(
        learning_rate=learning_rate, momentum=0.9, clipnorm=training.clipnorm
    )
