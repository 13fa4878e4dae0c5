"""One training run: config -> data -> model -> fit -> save, into a run folder.

The run trains in `<root>/<name>.partial/` and the folder is renamed to `<root>/<name>/`
only once every final file is written, so a crash or Ctrl-C never leaves a half-written
finished run. Running the same command again resumes an interrupted run from its last
finished epoch (`keras.callbacks.BackupAndRestore`). A finished run is never replaced
unless `overwrite=True`.

Example:

>>> # from config import load_config
>>> # result = run_training(load_config("configs/tiny.yaml"))
>>> # result.run_dir, result.metrics["test"]["accuracy"]
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from config import Config, ConfigError, dump_config, load_config
from reports import classification_metrics

MODEL_FILE = "model.keras"
CONFIG_FILE = "config.yaml"
HISTORY_FILE = "history.csv"
LABELS_FILE = "labels.json"
METRICS_FILE = "metrics.json"
LOGS_DIR = "logs"
BACKUP_DIR = "backup"
BEST_WEIGHTS = "checkpoints/best.weights.h5"
PARTIAL_SUFFIX = ".partial"


class TrainingError(RuntimeError):
    """Training failed in a way the user can act on; the message is one line."""


@dataclasses.dataclass
class RunResult:
    run_dir: Path
    metrics: dict
    resumed: bool


def data_specs(config: Config):
    """The data package's specs for this config's `dataset` and `text` sections."""
    from data import DatasetSpec, TextSpec

    d, t = config.dataset, config.text
    dataset_spec = DatasetSpec(
        name=d.name if d.name is not None else d.tfds_name,
        data_dir=d.data_dir,
        train_file=d.train_file,
        validation_file=d.validation_file,
        test_file=d.test_file,
        text_column=d.text_column,
        label_column=d.label_column,
        train_split=d.train_split,
        validation_split=d.validation_split,
        test_split=d.test_split,
        validation_fraction=d.validation_fraction,
        test_fraction=d.test_fraction,
        seed=d.split_seed,
    )
    text_spec = TextSpec(
        vocabulary_size=t.vocabulary_size,
        sequence_length=t.sequence_length,
        standardize=None if t.standardize == "none" else t.standardize,
    )
    return dataset_spec, text_spec


def make_strategy(distribution: str) -> tf.distribute.Strategy:
    """The tf.distribute strategy for `training.distribution`."""
    if distribution == "mirrored":
        if tf.config.list_logical_devices("GPU"):
            return tf.distribute.MirroredStrategy()
        # MirroredStrategy() alone would use a single CPU; spread over all logical CPUs.
        devices = [device.name for device in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(devices=devices)
    if distribution == "multi_worker":
        # Reads the cluster and this worker's role from the TF_CONFIG environment variable.
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()


def make_optimizer(training, steps_per_epoch: int) -> keras.optimizers.Optimizer:
    """Optimizer with linear warmup then cosine decay (or constant) over all planned steps."""
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


@contextlib.contextmanager
def dtype_policy(mixed_precision: bool):
    """Sets mixed_float16 for the duration of a run and restores the previous policy."""
    previous = keras.config.dtype_policy()
    if mixed_precision:
        keras.config.set_dtype_policy("mixed_float16")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def write_json(path: Path, data) -> None:
    _write_atomic(path, json.dumps(data, indent=2) + "\n")


def _read_history(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def prepare_run_dir(config: Config, overwrite: bool) -> tuple[Path, Path, bool]:
    """Returns (final_dir, partial_dir, resumed) after checking what is already there.

    Raises:
        ConfigError: the run folder holds a finished run and `overwrite` is False, or an
            interrupted run with a different config.
    """
    root = Path(config.output.root)
    final_dir = root / config.run_name()
    partial_dir = root / (config.run_name() + PARTIAL_SUFFIX)
    resolved = dump_config(config)
    if final_dir.exists() and not overwrite:
        raise ConfigError(
            f"output.name: {final_dir} already holds a finished run; pass --overwrite to "
            "replace it or choose another name with --set output.name=NAME"
        )
    resumed = False
    if partial_dir.exists():
        saved = partial_dir / CONFIG_FILE
        same = saved.exists() and saved.read_text() == resolved
        if overwrite:
            shutil.rmtree(partial_dir)
        elif same:
            resumed = True
        else:
            raise ConfigError(
                f"output.name: {partial_dir} holds an interrupted run with a different config; "
                "run its original command to resume it, or pass --overwrite to start over"
            )
    partial_dir.mkdir(parents=True, exist_ok=True)
    _write_atomic(partial_dir / CONFIG_FILE, resolved)
    return final_dir, partial_dir, resumed


def _finalize(partial_dir: Path, final_dir: Path) -> None:
    """Moves the finished run into place; an old run (overwrite) is replaced, never merged."""
    if final_dir.exists():
        old = final_dir.with_name(final_dir.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(final_dir, old)
        os.replace(partial_dir, final_dir)
        shutil.rmtree(old)
    else:
        os.replace(partial_dir, final_dir)


class _StopOnNaN(keras.callbacks.TerminateOnNaN):
    """Keras' TerminateOnNaN, raising an error that says where it happened and what to try."""

    def __init__(self):
        super().__init__(raise_error=True)
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            # Raising (rather than stop_training) skips BackupAndRestore.on_train_end, so
            # the last good epoch's backup survives.
            raise TrainingError(
                f"training loss became {float(loss)} at epoch {self._epoch + 1}, batch "
                f"{batch + 1}: lower training.learning_rate, keep training.clipnorm set, "
                "or turn off training.mixed_precision"
            )


def _predict(model, dataset) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities (N, C), labels (N,)) of a `(token_ids, label)` dataset."""
    probabilities = model.predict(dataset.map(lambda token_ids, label: token_ids), verbose=0)
    labels = np.concatenate([label for _, label in dataset.as_numpy_iterator()])
    return np.asarray(probabilities, dtype=np.float32), labels


def run_training(
    config: Config,
    *,
    overwrite: bool = False,
    callbacks: list[keras.callbacks.Callback] | tuple = (),
    verbose: int | None = None,
) -> RunResult:
    """Trains, evaluates and saves one run described by `config`.

    Args:
        config: a validated `Config`.
        overwrite: replace a finished run of the same name, or discard an interrupted one.
        callbacks: extra Keras callbacks, run after the built-in ones.
        verbose: Keras `fit` verbosity; None: progress bars on a terminal, one line per
            epoch in logs.

    Returns:
        A `RunResult` with the final run folder and the metrics written to `metrics.json`.

    Raises:
        ConfigError: an existing run folder is in the way (see `prepare_run_dir`).
        DataError: the dataset cannot be loaded.
        TrainingError: the loss became NaN, or the saved model does not reproduce.
    """
    start = time.perf_counter()
    training = config.training
    final_dir, run_dir, resumed = prepare_run_dir(config, overwrite)

    keras.utils.set_random_seed(training.seed)
    tf.config.experimental.enable_op_determinism()
    strategy = make_strategy(training.distribution)
    if strategy.num_replicas_in_sync > 1:
        print(f"Training on {strategy.num_replicas_in_sync} replicas ({training.distribution}).")

    # Data.
    from data import build_datasets

    dataset_spec, text_spec = data_specs(config)
    data = build_datasets(dataset_spec, text_spec, training.batch_size, seed=training.seed)
    class_names = list(data.class_names)
    num_classes = len(class_names)

    def one_hot(token_ids, label):
        # Categorical targets: the only Keras cross-entropy that takes label_smoothing.
        return token_ids, tf.one_hot(label, num_classes)

    sizes = data.splits.sizes()
    pipelines = {
        # Keras needs the number of batches, or it warns that the input "ran out of data"
        # after every pass; state it rather than rely on tf.data inferring it.
        split: dataset.apply(
            tf.data.experimental.assert_cardinality(math.ceil(sizes[split] / training.batch_size))
        )
        for split, dataset in data.pipelines.items()
    }
    train = pipelines["train"].map(one_hot)
    validation = pipelines["validation"].map(one_hot)
    batches_per_epoch = math.ceil(sizes["train"] / training.batch_size)
    steps_per_epoch = training.steps_per_epoch
    if steps_per_epoch is not None:
        # A capped epoch must not exhaust the split: repeat, and keep the order seeded.
        train = train.repeat()
    else:
        steps_per_epoch = batches_per_epoch

    with dtype_policy(training.mixed_precision):
        # Model.
        with strategy.scope():
            from models import build_classifier

            classifier = build_classifier(
                config.model,
                vocabulary_size=data.vectorizer.vocabulary_size(),
                sequence_length=config.text.sequence_length,
                num_classes=num_classes,
            )
            classifier.compile(
                optimizer=make_optimizer(training, steps_per_epoch),
                loss=keras.losses.CategoricalCrossentropy(
                    label_smoothing=training.label_smoothing
                ),
                metrics=[
                    keras.metrics.CategoricalAccuracy(name="accuracy"),
                    keras.metrics.F1Score(average="macro", name="macro_f1"),
                ],
                jit_compile=training.jit_compile,
            )

        # Fit.
        history_path = run_dir / HISTORY_FILE
        best_path = run_dir / BEST_WEIGHTS
        best_path.parent.mkdir(exist_ok=True)
        monitor, mode = training.monitor, "min" if training.monitor == "val_loss" else "max"
        best_of = min if mode == "min" else max
        earlier = [float(row[monitor]) for row in _read_history(history_path)]
        checkpoint = keras.callbacks.ModelCheckpoint(
            best_path,
            monitor=monitor,
            mode=mode,
            save_best_only=True,
            save_weights_only=True,
            # A resumed run must only replace the best checkpoint with a better one.
            initial_value_threshold=best_of(earlier) if earlier else None,
        )
        all_callbacks = [
            # First, so an epoch counts as done only once its backup is on disk.
            keras.callbacks.BackupAndRestore(str(run_dir / BACKUP_DIR)),
            _StopOnNaN(),
            checkpoint,
            keras.callbacks.CSVLogger(str(history_path), append=True),
        ]
        if _tensorboard_installed():
            all_callbacks.append(
                keras.callbacks.TensorBoard(str(run_dir / LOGS_DIR), write_graph=False)
            )
        else:
            print("TensorBoard logs skipped: the tensorboard package is not installed.")
        if training.attention_images:
            all_callbacks.append(
                _attention_images_callback(data, training.attention_images, run_dir / LOGS_DIR)
            )
        if training.early_stopping_patience:
            all_callbacks.append(
                keras.callbacks.EarlyStopping(
                    monitor=monitor,
                    mode=mode,
                    patience=training.early_stopping_patience,
                    restore_best_weights=True,
                )
            )
        all_callbacks.extend(callbacks)
        if resumed:
            print(f"Resuming the interrupted run in {run_dir} from its last finished epoch.")
        if verbose is None:
            verbose = 1 if sys.stdout.isatty() else 2
        classifier.fit(
            train,
            validation_data=validation,
            epochs=training.epochs,
            steps_per_epoch=steps_per_epoch,
            callbacks=all_callbacks,
            verbose=verbose,
            shuffle=False,  # The train pipeline shuffles, seeded.
        )
        if best_path.exists():
            # The best epoch by `monitor`, also across an interruption.
            classifier.load_weights(best_path)

        # Evaluate.
        metrics = {}
        for split in ("validation", "test"):
            probabilities, labels = _predict(classifier, pipelines[split])
            metrics[split] = classification_metrics(labels, probabilities, num_classes)
        history = _read_history(history_path)
        monitored = [float(row[monitor]) for row in history]
        metrics["epochs"] = len(history)
        best_index = np.argmin if mode == "min" else np.argmax
        metrics["best_epoch"] = int(best_index(monitored)) + 1 if monitored else 0
        metrics["num_parameters"] = int(classifier.count_params())
        metrics["class_names"] = class_names

        # Save.
        from models import build_classifier, build_end_to_end_model

        # Save an uncompiled copy: the compiled classifier would drag its optimizer state
        # (twice the weights for Adam) into model.keras, useless for inference.
        export = build_classifier(
            config.model,
            vocabulary_size=data.vectorizer.vocabulary_size(),
            sequence_length=config.text.sequence_length,
            num_classes=num_classes,
        )
        export.set_weights(classifier.get_weights())
        end_to_end = build_end_to_end_model(data.vectorizer, export)
        model_path = run_dir / MODEL_FILE
        temporary = run_dir / ("tmp-" + MODEL_FILE)
        end_to_end.save(temporary)
        _check_reload(end_to_end, temporary, data.splits.validation[0][:64])
        os.replace(temporary, model_path)

    write_json(run_dir / LABELS_FILE, class_names)
    metrics["wall_time_s"] = round(time.perf_counter() - start, 1)
    write_json(run_dir / METRICS_FILE, metrics)
    _finalize(run_dir, final_dir)
    return RunResult(run_dir=final_dir, metrics=metrics, resumed=resumed)


def _attention_images_callback(data, num_examples: int, logs_dir: Path):
    """Heatmaps of the first `num_examples` validation texts, in `logs_dir/attention`."""
    from inspection import AttentionImagesCallback
    from models import build_attention_model

    texts = np.asarray(data.splits.validation[0][:num_examples], dtype=object).astype(str)
    token_ids = np.asarray(data.vectorizer(tf.constant(texts)))  # (N, L)
    return AttentionImagesCallback(
        str(logs_dir / "attention"),
        token_ids,
        attention_model_builder=build_attention_model,
        vocabulary=data.vectorizer.get_vocabulary(),
    )


def _tensorboard_installed() -> bool:
    # tensorflow no longer pulls in tensorboard; Keras' callback needs it to write scalars.
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def _check_reload(model, path: Path, texts: np.ndarray) -> None:
    """The saved file must load in safe mode and predict what the trained model predicts."""
    from models import load_end_to_end_model

    reloaded = load_end_to_end_model(path)
    texts = tf.constant(np.asarray(texts, dtype=object).astype(str))
    expected = np.asarray(model(texts, training=False))
    actual = np.asarray(reloaded(texts, training=False))
    if not np.allclose(expected, actual, atol=1e-6):
        raise TrainingError(
            f"{path}: the reloaded model predicts differently from the trained one "
            f"(max difference {np.abs(expected - actual).max():.2e})"
        )


def format_summary(result: RunResult) -> str:
    """The short table printed at the end of `train.py`."""
    metrics = result.metrics
    rows = [("", "validation", "test")]
    for key in ("accuracy", "macro_f1", "loss"):
        rows.append(
            (key, f"{metrics['validation'][key]:.4f}", f"{metrics['test'][key]:.4f}")
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    run_dir = result.run_dir
    lines += [
        f"epochs: {metrics['epochs']} (best {metrics['best_epoch']})   "
        f"wall time: {metrics['wall_time_s']:.1f} s   parameters: {metrics['num_parameters']:,}",
        f"run folder:   {run_dir}/",
        f"model:        {run_dir / MODEL_FILE}  (raw strings in, probabilities out)",
        f"metrics:      {run_dir / METRICS_FILE}",
        f"history:      {run_dir / HISTORY_FILE}",
        f"tensorboard:  tensorboard --logdir {run_dir / LOGS_DIR}",
        f"evaluate:     python evaluate.py {run_dir}",
    ]
    return "\n".join(lines)


def load_run_config(run_dir: str | Path) -> Config:
    """The resolved config saved in a run folder."""
    return load_config(Path(run_dir) / CONFIG_FILE)
