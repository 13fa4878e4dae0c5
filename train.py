"""Trains the transformer text classifier described by a config file.

Usage:
    python train.py --config configs/default.yaml
    python train.py --config configs/reuters_r8.yaml --set model.num_layers=4 training.epochs=3
    python train.py --config configs/tiny.yaml --overwrite

Steps: config -> data -> model -> fit -> save. The run folder (`runs/<config name>/` unless
`output.name` says otherwise; its files: `run_folder/runs.py`) receives the resolved config,
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

from config import AUTO_CHECKPOINT, AUTO_CHECKPOINT_LAYERS, Config, ConfigError
from config.files import commented_config, load_config, pretrained_note
from engine import cli
from engine.training.fitting import (
    RunResult,
    epoch_steps,
    evaluate,
    finish_run,
    fit,
    make_callbacks,
)
from run_folder import runs

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
        TrainingError: the loss became NaN, or the saved model does not reproduce.
    """
    from engine.training.distribution import describe_replicas, input_worker, make_strategy
    from engine.training.recipes import fit_recipe
    from engine.training.starting_weights import starting_weights
    from engine.training.trainer import dtype_policy

    start = time.perf_counter()
    runs.check_writable(config)
    # First: MultiWorkerMirroredStrategy must exist before TensorFlow runs any op.
    strategy = make_strategy(config.training)
    # The other workers of a multi-worker run train in a scratch folder, removed at the end.
    worker = None if strategy.extended.should_checkpoint else strategy.cluster_resolver.task_id
    weights = starting_weights(config)
    recipe = fit_recipe(weights.config.model)
    data, pipelines, steps_per_epoch = load_data(weights.config, weights, input_worker(strategy))
    recipe.check(
        weights.num_blocks,
        data.streaming,
        distributed=worker is not None or config.training.distribution != "none",
    )
    config = resolved_config(weights.config, data, recipe)
    final_dir, run_dir, resumed = runs.prepare_run_dir(config, overwrite, worker)
    with runs.cleaned_up_unless_started(run_dir):
        print(describe_replicas(strategy, config.training.distribution))
        with dtype_policy(config.training.mixed_precision):
            classifier, trainer = build_model(
                config, data, strategy, steps_per_epoch, weights, recipe
            )
            fit_pipelines = recipe.pipelines(config, data, classifier, pipelines, run_dir)
            if resumed:
                print(resume_note(run_dir, data.streaming))
            with data.stream_errors_named():
                callbacks = (
                    dynamics_callbacks(config, data, trainer, run_dir)
                    + make_callbacks(config.training, data, run_dir, classifier)
                    + recipe.callbacks(classifier, run_dir)
                    + list(callbacks)
                )
                fit(
                    trainer,
                    fit_pipelines,
                    steps_per_epoch,
                    config.training,
                    run_dir,
                    callbacks,
                    verbose,
                    replay=not data.streaming,
                )
                metrics = evaluate(
                    classifier, pipelines, data.class_names, config.training, run_dir
                )
            save(classifier, data, config.model.mask_zero, run_dir)
            recipe.finish(classifier, run_dir)
    runs.write_json(run_dir / runs.LABELS_FILE, data.class_names)
    metrics["wall_time_s"] = round(time.perf_counter() - start, 1)
    runs.write_json(run_dir / runs.METRICS_FILE, metrics)
    if worker is None:
        finish_run(run_dir, final_dir, config.output.keep_checkpoints)
    else:
        shutil.rmtree(run_dir)
    return RunResult(run_dir=final_dir, metrics=metrics, resumed=resumed, worker=worker)


def resume_note(run_dir, streaming):
    """What a resumed run prints: a streamed dataset starts over, not where it stopped."""
    return f"Resuming the interrupted run in {run_dir} from its last finished epoch" + (
        " (the stream starts over: not the batches the interrupted run would have had next)."
        if streaming
        else "."
    )


def resolved_config(config: Config, data, recipe) -> Config:
    """The config the run folder keeps: the cap the model was built for, and the numbers
    behind every `auto` (the rate, the epochs, the patience)."""
    if config.text.sequence_length == "auto":
        print(
            f"text.sequence_length: auto -> {data.sequence_length} (99% of the training "
            "texts have at most that many tokens; batches are padded to their longest)"
        )
    training = config.training.resolved(pretrained=bool(config.model.pretrained), lora=recipe.lora)
    dynamics = config.training.records_dynamics(data.streaming)
    if training.dynamics == "auto":
        print(
            f"training.dynamics: auto -> {str(dynamics).lower()} ("
            + (
                "each training example's probability, margin and correctness per epoch go "
                "to dynamics.parquet, for evaluate.py --suspects)"
                if dynamics
                else "the training split is streamed, or several processes train)"
            )
        )
    return dataclasses.replace(
        config,
        text=dataclasses.replace(config.text, sequence_length=data.sequence_length),
        training=dataclasses.replace(training, dynamics=dynamics),
    )


def dynamics_callbacks(config: Config, data, trainer, run_dir: Path) -> list:
    """With `training.dynamics`, the callback that writes them: first, so that an epoch's
    rows are on disk before its backup (`dynamics.DynamicsLogger`)."""
    if not config.training.dynamics:
        return []
    from engine.training.dynamics import DynamicsLogger, TrainingDynamics
    from inspection.methods.data_map import text_hashes

    texts = data.splits.train[0]
    label_sets = len(data.class_names) if config.dataset.is_multi_label else None
    dynamics = TrainingDynamics(len(texts), num_labels=label_sets)
    trainer.record_dynamics(dynamics)
    return [DynamicsLogger(dynamics, run_dir / runs.DYNAMICS_FILE, text_hashes(texts))]


def load_data(config: Config, weights, worker=(0, 1)):
    """Seeds everything, then (Datasets, {split: (ids, one-hot label) batches}, train steps).

    Texts become token ids by the tokenizer or vocabulary of `weights`
    (`starting_weights.StartingWeights`), else by a vectorizer adapted on train.
    `worker` (index, count): the share of a streamed training split this worker reads."""
    import keras

    from data import build_datasets, one_hot_labels

    # First: the training batches' order depends on TensorFlow's global seed as well as on
    # the pipeline's own, so the same config gives the same batches in any process.
    keras.utils.set_random_seed(config.training.seed)

    # A model that does not mask padding must see every text padded to the cap.
    data = build_datasets(
        config.dataset,
        config.text,
        config.training.batch_size,
        seed=config.training.seed,
        pad_to_cap=not config.model.mask_zero,
        vocabulary=weights.vocabulary,
        tokenizer=weights.tokenizer,
        worker=worker,
        positions=config.training.records_dynamics(),
    )
    print(data.description)
    pipelines = data.pipelines  # Multi-hot label sets are the targets as they are.
    if not config.dataset.is_multi_label:
        pipelines = one_hot_labels(pipelines, len(data.class_names))
    return data, pipelines, epoch_steps(pipelines, config.training, data.train_steps)


def build_model(config: Config, data, strategy, steps_per_epoch, weights, recipe=None):
    """(classifier, trainer): the classifier to save, and the compiled model that trains it.

    The two share every layer; only the trainer holds the optimizer (`trainer.build_trainer`).
    `weights` (`starting_weights.StartingWeights`) shapes the encoder and sets its starting
    weights; `recipe` (`fine_tuning`, by default the config's) freezes or adapts them.
    """
    from engine.training.recipes import fit_recipe
    from models import build_classifier

    recipe = recipe or fit_recipe(config.model)
    vocabulary = data.vectorizer.get_vocabulary()
    with strategy.scope():
        classifier = build_classifier(
            config.model,
            vocabulary_size=len(vocabulary) + weights.extra_token_ids,
            sequence_length=config.text.sequence_length,
            num_classes=len(data.class_names),
            checkpoint=weights.checkpoint,
            separator_id=weights.separator_id(vocabulary),
            multi_label=config.dataset.is_multi_label,
        )
        weights.load_into(classifier, vocabulary, seed=config.training.seed)
        recipe.prepare(classifier)
        return classifier, recipe.build_trainer(classifier, config.training, steps_per_epoch)


def save(classifier, data, trim_padding, run_dir: Path) -> None:
    """Saves the end-to-end model, after checking that it reloads and predicts the same."""
    from engine.training.trainer import TrainingError
    from models import build_end_to_end_model, saved_and_reloaded

    model = build_end_to_end_model(data.vectorizer, classifier, trim_padding=trim_padding)
    texts = data.first_texts("validation", 64)
    with runs.staged_file(run_dir / runs.MODEL_FILE) as temporary:
        expected, actual = saved_and_reloaded(model, temporary, texts)
        if not np.allclose(expected, actual, atol=1e-6):
            raise TrainingError(
                f"{temporary}: the reloaded model predicts differently from the trained one "
                f"(max difference {np.abs(expected - actual).max():.2e})"
            )


def scratch_when_streamed(config: Config, notes: dict[str, str]) -> Config:
    """`model.pretrained: auto` trains from scratch on data streamed for its size: the
    pretrained encoder would cost hours per epoch there on a CPU (docs/training.md). Not
    when the config asks for a checkpoint's own way of training (`model.fine_tune`) or
    depth (`model.pretrained_layers`, other than auto's): it gets the checkpoint it named."""
    from data import streamed_size

    model = config.model
    if model.fine_tune.kind != "full" or model.pretrained_layers != AUTO_CHECKPOINT_LAYERS:
        return config
    size = streamed_size(config.dataset)
    if size is None:
        return config
    notes["model.pretrained"] = pretrained_note(
        None,
        (
            f"the training data is streamed, {size} on disk, over dataset.streaming: auto's "
            "limit: training from scratch, as the pretrained encoder would take hours per epoch "
            f"on it; model.pretrained: {AUTO_CHECKPOINT} fine-tunes it anyway"
        ),
    )
    return config.without_checkpoint()


def main(argv=None):
    args = cli.config_command_parser(
        "train.py",
        "Train the transformer text classifier described by a YAML config.",
        "Example: python train.py --config configs/default.yaml --set training.epochs=3",
    ).parse_args(argv)
    notes = {}
    try:
        config = load_config(args.config, args.overrides, notes)
    except ConfigError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(commented_config(config), end="")
        return 0
    cli.start_tensorflow(find_devices=config.training.distribution != "multi_worker")
    from data import DataError
    from engine.training.trainer import TrainingError

    try:
        if "model.pretrained" in notes and config.model.pretrained:
            config = scratch_when_streamed(config, notes)
        for note in notes.values():
            print(note)
        result = run_training(config, overwrite=args.overwrite)
    except (ConfigError, DataError) as error:
        kept = runs.resumable(config) if isinstance(error, DataError) else None
        resume = (
            (f" (finished epochs kept in {kept}: fix the data and the same command resumes)")
            if kept
            else ""
        )
        print(f"train.py: error: {error}{resume}", file=sys.stderr)
        return 2
    except TrainingError as error:
        kept = runs.resumable(config)
        resume = f" (finished epochs kept in {kept}: the same command resumes)" if kept else ""
        print(f"train.py: training failed: {error}{resume}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        kept = runs.resumable(config)
        print(
            "\ntrain.py: interrupted; "
            + (
                f"the finished epochs are kept in {kept}: the same command resumes from the last."
                if kept
                else "no epoch had finished, nothing was kept."
            ),
            file=sys.stderr,
        )
        return 130
    if result.worker is not None:
        print(f"worker {result.worker} done; the chief wrote the run folder {result.run_dir}")
        return 0
    from engine.reports import format_run_summary

    print(format_run_summary(result.metrics, result.run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
