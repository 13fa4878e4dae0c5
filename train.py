"""Trains the transformer text classifier described by a config file.

Usage:
    python train.py --config configs/default.yaml
    python train.py --config configs/reuters_r8.yaml --set model.num_layers=4 training.epochs=3
    python train.py --config configs/tiny.yaml --overwrite

Steps: config -> data -> model -> fit -> save. The run folder (`runs/<config name>/` unless
`output.name` says otherwise; its files: `runs.py`) receives the resolved config,
`model.keras` (raw strings in, class probabilities out), `history.csv`, `labels.json`,
TensorBoard logs and `metrics.json` (validation and test). Training happens in
`runs/<name>.partial/`; if it is interrupted (Ctrl-C, kill), running the same command again
resumes from the last finished epoch. A finished run is only replaced with `--overwrite`.

Exit codes: 0 done, 1 training failed (e.g. NaN loss), 2 bad config or data, 130 interrupted.
"""

import dataclasses
import shutil
import sys
import time
from pathlib import Path

import numpy as np

import cli
import runs
from config import Config, ConfigError
from config_files import commented_config, load_config
from fitting import RunResult, epoch_steps, evaluate, fit, make_callbacks

# Keras, TensorFlow and the modules built on them (data, models, inspection, reports) take
# seconds to import: each step imports them itself, so that `main` reports a bad config at
# once, before that wait.


def run_training(config: Config, *, overwrite=False, callbacks=(), verbose=None) -> RunResult:
    """Trains, evaluates and saves the run described by `config`.

    Args:
        config: a checked `Config`.
        overwrite: replace a finished run of the same name, or discard an interrupted one.
        callbacks: extra Keras callbacks, run after the built-in ones.
        verbose: Keras `fit` verbosity; None: progress bars on a terminal, one line per
            epoch in logs.

    Raises:
        ConfigError: a run folder is in the way (see `runs.prepare_run_dir`).
        DataError: the dataset cannot be loaded.
        models.TrainingError: the loss became NaN, or the saved model does not reproduce.
    """
    from models import describe_replicas, dtype_policy, input_worker, make_strategy
    from starting_weights import starting_weights

    start = time.perf_counter()
    runs.check_writable(config)
    # First: MultiWorkerMirroredStrategy must exist before TensorFlow runs any op.
    strategy = make_strategy(config.training)
    # The other workers of a multi-worker run train in a scratch folder, removed at the end.
    worker = None if strategy.extended.should_checkpoint else strategy.cluster_resolver.task_id
    weights = starting_weights(config)
    config = weights.config
    data, pipelines, steps_per_epoch = load_data(config, weights, input_worker(strategy))
    if config.model.frozen_encoder and (data.streaming or worker is not None
                                        or config.training.distribution != "none"):
        raise ConfigError(
            "model.trainable_blocks: computing the frozen blocks once needs the data in "
            "memory and one process; set dataset.streaming: false and training.distribution: "
            "none, or set model.trainable_blocks to null")
    if config.text.sequence_length == "auto":
        print(f"text.sequence_length: auto -> {data.sequence_length} (99% of the training "
              "texts have at most that many tokens; batches are padded to their longest)")
    # The run folder keeps the resolved config: the cap the model was built for, the rate,
    # the epochs and patience.
    config = dataclasses.replace(
        config, text=dataclasses.replace(config.text, sequence_length=data.sequence_length),
        training=config.training.resolved(pretrained=bool(config.model.pretrained),
                                          lora=bool(config.model.lora_rank)))
    final_dir, run_dir, resumed = runs.prepare_run_dir(config, overwrite, worker)
    with runs.cleaned_up_unless_started(run_dir):
        print(describe_replicas(strategy, config.training.distribution))
        with dtype_policy(config.training.mixed_precision):
            classifier, trainer = build_model(config, data, strategy, steps_per_epoch, weights)
            lora_start = lora_starting_kernels(classifier, config.model)
            fit_pipelines = (frozen_pipelines(config, data, classifier, run_dir)
                             if config.model.frozen_encoder else pipelines)
            if resumed:
                print(f"Resuming the interrupted run in {run_dir} from its last finished epoch"
                      + (" (the stream starts over: not the batches the interrupted run would "
                         "have had next)." if data.streaming else "."))
            with data.stream_errors_named():
                callbacks = (make_callbacks(config.training, data, run_dir, classifier)
                             + lora_backup(classifier, lora_start, run_dir) + list(callbacks))
                fit(trainer, fit_pipelines, steps_per_epoch, config.training, run_dir,
                    callbacks, verbose, replay=not data.streaming)
            shutil.rmtree(run_dir / runs.STATES_DIR, ignore_errors=True)
            with data.stream_errors_named():
                metrics = evaluate(classifier, pipelines, data.class_names, config.training,
                                   run_dir)
            save(classifier, data, config.model.mask_zero, run_dir)
            if lora_start:
                save_adapter(classifier, lora_start, config.model.lora_rank, run_dir)
    runs.write_json(run_dir / runs.LABELS_FILE, data.class_names)
    metrics["wall_time_s"] = round(time.perf_counter() - start, 1)
    runs.write_json(run_dir / runs.METRICS_FILE, metrics)
    if worker is None:
        runs.replace_folder(run_dir, final_dir)
    else:
        shutil.rmtree(run_dir)
    return RunResult(run_dir=final_dir, metrics=metrics, resumed=resumed, worker=worker)


def load_data(config: Config, weights=None, worker=(0, 1)):
    """Seeds everything, then (Datasets, {split: (ids, one-hot label) batches}, train steps).

    With `starting_weights.StartingWeights`, texts become token ids by its tokenizer or
    vocabulary.
    `worker` (index, count): the share of a streamed training split this worker reads."""
    import keras

    from data import build_datasets, one_hot_labels

    # First: the training batches' order depends on TensorFlow's global seed as well as on
    # the pipeline's own, so the same config gives the same batches in any process.
    keras.utils.set_random_seed(config.training.seed)

    # A model that does not mask padding must see every text padded to the cap.
    data = build_datasets(config.dataset, config.text, config.training.batch_size,
                          seed=config.training.seed, pad_to_cap=not config.model.mask_zero,
                          vocabulary=weights.vocabulary if weights else None,
                          tokenizer=weights.tokenizer if weights else None, worker=worker)
    print(data.description)
    pipelines = one_hot_labels(data.pipelines, len(data.class_names))
    return data, pipelines, epoch_steps(pipelines, config.training, data.train_steps)


def build_model(config: Config, data, strategy, steps_per_epoch, weights=None):
    """(classifier, trainer): the classifier to save, and the compiled model that trains it.

    The two share every layer; only the trainer holds the optimizer (`models.build_trainer`).
    `weights` (`starting_weights.StartingWeights`) shapes the encoder and sets its starting weights.
    """
    from models import build_classifier, build_trainer, freeze_lower_blocks
    from models.lora import enable_lora
    from starting_weights import starting_weights

    weights = weights or starting_weights(config)
    vocabulary = data.vectorizer.get_vocabulary()
    with strategy.scope():
        classifier = build_classifier(
            config.model,
            vocabulary_size=len(vocabulary) + weights.extra_token_ids,
            sequence_length=config.text.sequence_length,
            num_classes=len(data.class_names),
            checkpoint=weights.checkpoint,
        )
        weights.load_into(classifier, vocabulary, seed=config.training.seed)
        start_block = (freeze_lower_blocks(classifier, config.model.trained_blocks)
                       if config.model.frozen_encoder else None)
        if config.model.lora_rank:
            enable_lora(classifier, config.model.lora_rank, config.model.lora_targets)
        return classifier, build_trainer(classifier, config.training, steps_per_epoch,
                                         start_block)


def frozen_pipelines(config: Config, data, classifier, run_dir: Path) -> dict:
    """Train and validation batches of ((token ids, the frozen blocks' states), one-hot
    label): the states computed once, as the first epoch reads them (`data.lower_states`),
    kept in memory or past `training.states_memory_mb` in the run folder."""
    import tensorflow as tf

    from data import LowerStates, make_pipelines, one_hot_labels

    start_block = len(classifier.encoder.blocks) - config.model.trained_blocks
    compute = tf.function(lambda token_ids: classifier.encoder.lower_states(
        token_ids, start_block), reduce_retracing=True)
    pipelines = make_pipelines(
        data.splits, data.vectorizer, config.training.batch_size, seed=config.training.seed,
        pad_to_cap=not config.model.mask_zero, lower_states=LowerStates(
            compute, run_dir / runs.STATES_DIR, config.training.states_memory_mb))
    pipelines = one_hot_labels({split: pipelines[split] for split in ("train", "validation")},
                               len(data.class_names))
    epoch_steps(pipelines, config.training)  # A capped epoch: the train split repeats.
    return pipelines


def lora_starting_kernels(classifier, model_config) -> dict:
    """With model.lora_rank, the adapted kernels as loaded (what the adapter file measures
    the training's change from; a resumed run reloads them from the checkpoint too)."""
    from models.lora import starting_kernels

    if not model_config.lora_rank:
        return {}
    return starting_kernels(classifier, model_config.lora_targets)


def lora_backup(classifier, start, run_dir: Path) -> list:
    """[`models.lora.LoraBackup`] for a LoRA run (its factors survive a resume), else []."""
    from models.lora import LoraBackup

    return [LoraBackup(run_dir / runs.BACKUP_DIR / "lora_factors.npz", classifier, start)
            ] if start else []


def save_adapter(classifier, start, rank, run_dir: Path) -> None:
    """adapter.weights.h5: the LoRA factors and the head, to put on the checkpoint."""
    from models.lora import save_adapter as write_adapter

    with runs.staged_file(run_dir / runs.ADAPTER_FILE) as temporary:
        write_adapter(classifier, start, rank, temporary)


def save(classifier, data, trim_padding, run_dir: Path) -> None:
    """Saves the end-to-end model, after checking that it reloads and predicts the same."""
    import tensorflow as tf

    from models import TrainingError, build_end_to_end_model, load_end_to_end_model

    model = build_end_to_end_model(data.vectorizer, classifier, trim_padding=trim_padding)
    texts = tf.constant(data.first_texts("validation", 64).astype(str))
    with runs.staged_file(run_dir / runs.MODEL_FILE) as temporary:
        model.save(temporary)
        expected = np.asarray(model(texts, training=False))
        actual = np.asarray(load_end_to_end_model(temporary)(texts, training=False))
        if not np.allclose(expected, actual, atol=1e-6):
            raise TrainingError(
                f"{temporary}: the reloaded model predicts differently from the trained one "
                f"(max difference {np.abs(expected - actual).max():.2e})"
            )


def main(argv=None):
    args = cli.config_command_parser(
        "train.py", "Train the transformer text classifier described by a YAML config.",
        "Example: python train.py --config configs/default.yaml --set training.epochs=3",
    ).parse_args(argv)
    try:
        config = load_config(args.config, args.overrides)
    except ConfigError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(commented_config(config), end="")
        return 0
    cli.start_tensorflow(find_devices=config.training.distribution != "multi_worker")
    from data import DataError
    from models import TrainingError

    try:
        result = run_training(config, overwrite=args.overwrite)
    except (ConfigError, DataError) as error:
        kept = runs.resumable(config) if isinstance(error, DataError) else None
        resume = (f" (finished epochs kept in {kept}: fix the data and the same command "
                  "resumes)") if kept else ""
        print(f"train.py: error: {error}{resume}", file=sys.stderr)
        return 2
    except TrainingError as error:
        kept = runs.resumable(config)
        resume = f" (finished epochs kept in {kept}: the same command resumes)" if kept else ""
        print(f"train.py: training failed: {error}{resume}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        kept = runs.resumable(config)
        print("\ntrain.py: interrupted; " + (
            f"the finished epochs are kept in {kept}: the same command resumes from the last."
            if kept else "no epoch had finished, nothing was kept."), file=sys.stderr)
        return 130
    if result.worker is not None:
        print(f"worker {result.worker} done; the chief wrote the run folder {result.run_dir}")
        return 0
    from reports import format_run_summary

    print(format_run_summary(result.metrics, result.run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
