"""Pretrains the classifier's encoder as a masked language model on unlabelled text.

Usage:
    python pretrain.py --config configs/pretrain_rotten_tomatoes.yaml
    python train.py --config configs/rotten_tomatoes.yaml \
        --set model.init_from=runs/pretrain_rotten_tomatoes model.pretrained_embeddings=null

The encoder (token and position embedding and the blocks, built by the same code and with
the same layer names as the classifier's) learns to predict hidden tokens, BERT-style:
`pretraining.mask_fraction` of each text's known tokens are replaced by a mask token (at
least one per text). The corpus is `pretraining.corpus`: the dataset's training texts, the
training texts of every built-in dataset, or a text file. The run folder
(`run_folder/runs.py`) holds the resolved config, `encoder.weights.h5`, `vocabulary.json`,
`history.csv` and `metrics.json`; interrupted runs resume like training's. `train.py` with
`model.init_from: runs/NAME` starts its classifier from this encoder, with its vocabulary.

Exit codes: 0 done, 1 training failed, 2 bad config or data, 130 interrupted.
"""

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

from config import BUILTIN_DATASETS, Config, ConfigError, DatasetConfig
from config.files import commented_config, load_config
from data import DataError, TextSplits, read_texts_file
from engine import cli
from engine.training import fitting
from run_folder import runs

# Keras, TensorFlow, data's pipelines, tokenization and the masked language model load TensorFlow,
# which takes seconds: the functions import them, so that `main` reports a bad config at once,
# before that wait.


def corpus_texts(config: Config) -> np.ndarray:
    """The unlabelled texts `pretraining.corpus` names (an object array of str)."""
    from data import load_text_splits

    corpus = config.pretraining.corpus
    if corpus == "train":
        return load_text_splits(config.dataset).train[0]
    if corpus == "builtin":
        return np.concatenate([
            load_text_splits(DatasetConfig(name=name, data_dir=config.dataset.data_dir)).train[0]
            for name in BUILTIN_DATASETS
        ])  # fmt: skip
    return np.array(read_texts_file(corpus), dtype=object)


def mask_tokens(token_ids, mask_id, fraction, seed):
    """((masked ids (B, T), flat masked positions (M,)), hidden ids (M,)) of one batch.

    Known tokens (ids above 1: not padding, not out-of-vocabulary) are hidden with
    probability `fraction`, and each text hides at least one (its lowest draw). `seed` is
    a stateless seed pair: the same batch gets the same masks.
    """
    import tensorflow as tf

    known = token_ids > 1
    draws = tf.where(known, tf.random.stateless_uniform(tf.shape(token_ids), seed), 2.0)
    lowest = draws == tf.reduce_min(draws, axis=1, keepdims=True)
    hidden = known & ((draws < fraction) | lowest)
    positions = tf.where(tf.reshape(hidden, [-1]))[:, 0]  # b * T + t
    masked = tf.where(hidden, tf.constant(mask_id, token_ids.dtype), token_ids)
    return (masked, positions), tf.gather(tf.reshape(token_ids, [-1]), positions)


def load_data(config: Config):
    """(vectorizer, {train, validation: masked batches}, steps per epoch)."""
    import keras
    import tensorflow as tf

    from data import make_pipelines
    from data.splitting.stratified import stratified_split
    from tokenization import make_vectorizer

    keras.utils.set_random_seed(config.training.seed)
    texts = corpus_texts(config)
    zeros = np.zeros(len(texts), dtype=np.int64)
    rest, held = stratified_split(
        zeros, [config.pretraining.validation_fraction], config.dataset.split_seed, groups=texts
    )
    vectorizer = make_vectorizer(config.text, texts[rest])
    mask_id = vectorizer.vocabulary_size()  # one id past the vectoriser's: the mask token
    splits = TextSplits(
        train=(texts[rest], zeros[rest]),
        validation=(texts[held], zeros[held]),
        test=(texts[held][:1], zeros[held][:1]),
        class_names=["text"],
    )
    # Validation in the corpus' order: the masked-token loss is a mean per batch, and
    # length buckets would give a batch of short texts (few masked tokens) the weight of
    # a batch of long ones.
    pipelines = make_pipelines(
        splits,
        vectorizer,
        config.training.batch_size,
        config.training.seed,
        evaluation_buckets=False,
    )

    def masked(split, offset):
        def mask(index, batch):
            seed = tf.stack([tf.constant(config.training.seed + offset, tf.int64), index])
            return mask_tokens(batch[0], mask_id, config.pretraining.mask_fraction, seed)

        return pipelines[split].enumerate().map(mask, num_parallel_calls=tf.data.AUTOTUNE)

    batches = {"train": masked("train", 0), "validation": masked("validation", 1)}
    return vectorizer, batches, fitting.epoch_steps(batches, config.training)


def run_pretraining(config: Config, *, overwrite=False, verbose=None) -> fitting.RunResult:
    """Trains, and saves into the run folder, the masked language model of `config`."""
    import keras

    from engine.training.masked_language_model import build_masked_language_model
    from engine.training.trainer import make_optimizer
    from tokenization import sequence_cap

    start = time.perf_counter()
    runs.check_writable(config)
    vectorizer, batches, steps = load_data(config)
    sequence_length = int(sequence_cap(vectorizer))
    if config.text.sequence_length == "auto":
        print(f"text.sequence_length: auto -> {sequence_length}")
    config = dataclasses.replace(
        config,
        text=dataclasses.replace(config.text, sequence_length=sequence_length),
        training=config.training.resolved(),
    )
    final_dir, run_dir, resumed = runs.prepare_run_dir(config, overwrite)
    with runs.cleaned_up_unless_started(run_dir):
        model = build_masked_language_model(
            config.model, vectorizer.vocabulary_size() + 1, sequence_length
        )
        model.compile(
            optimizer=make_optimizer(config.training, steps),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        )
        if resumed:
            print(f"Resuming the interrupted run in {run_dir} from its last finished epoch.")
        # The best epoch is the one with the lowest masked-token loss on held-out text.
        training = dataclasses.replace(config.training, attention_images=0, monitor="val_loss")
        fitting.fit(
            model,
            batches,
            steps,
            training,
            run_dir,
            fitting.make_callbacks(training, None, run_dir),
            verbose,
        )
        model.save_weights(run_dir / runs.ENCODER_WEIGHTS)
    runs.write_json(run_dir / runs.VOCABULARY_FILE, vectorizer.get_vocabulary())
    history = runs.read_history(run_dir)
    best = min(history, key=lambda row: float(row["val_loss"]))
    metrics = {
        "validation": {
            "masked_token_accuracy": float(best["val_accuracy"]),
            "masked_token_loss": float(best["val_loss"]),
        },
        "epochs": len(history),
        "best_epoch": int(best["epoch"]),
        "vocabulary_size": vectorizer.vocabulary_size(),
        "wall_time_s": round(time.perf_counter() - start, 1),
    }
    runs.write_json(run_dir / runs.METRICS_FILE, metrics)
    fitting.finish_run(run_dir, final_dir, config.output.keep_checkpoints)
    return fitting.RunResult(run_dir=final_dir, metrics=metrics, resumed=resumed)


def main(argv=None):
    args = cli.config_command_parser(
        "pretrain.py",
        __doc__.splitlines()[0],
        "Then: python train.py --config CONFIG --set model.init_from=runs/NAME",
    ).parse_args(argv)
    notes = {}
    try:
        config = load_config(args.config, args.overrides, notes)
    except ConfigError as error:
        print(f"pretrain.py: error: {error}", file=sys.stderr)
        return 2
    if notes:  # Pretraining builds its own encoder: model.pretrained: auto means none here.
        config = config.without_checkpoint()
    if args.print_config:
        print(commented_config(config), end="")
        return 0
    cli.start_tensorflow()
    try:
        result = run_pretraining(config, overwrite=args.overwrite)
    except (ConfigError, DataError) as error:
        print(f"pretrain.py: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "\npretrain.py: interrupted; the same command resumes from the last finished "
            "epoch, if one finished.",
            file=sys.stderr,
        )
        return 130
    validation = result.metrics["validation"]
    print(
        f"{Path(result.run_dir)}: masked-token accuracy "
        f"{validation['masked_token_accuracy']:.2%} (loss {validation['masked_token_loss']:.3f})"
        f" on held-out text after {result.metrics['epochs']} epochs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
