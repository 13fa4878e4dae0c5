"""pretrain.py: the masking, a tiny pretraining run, and train.py starting from it."""

import json

import numpy as np
import pytest
import tensorflow as tf

import pretrain
import train
from config.files import load_config
from engine.training.starting_weights import starting_weights
from run_folder import runs
from tests.helpers import ROOT, TINY
from tests.review_fixture import write_reviews_fixture


def test_masking_hides_known_tokens_only_at_least_one_per_text():
    token_ids = tf.constant(
        [[5, 6, 7, 8, 9, 1, 0, 0], [2, 1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]], tf.int64
    )
    (masked, positions), hidden = pretrain.mask_tokens(
        token_ids, 99, 0.4, tf.constant([0, 7], tf.int64)
    )
    masked, positions, hidden = masked.numpy(), positions.numpy(), hidden.numpy()
    flat = token_ids.numpy().reshape(-1)
    np.testing.assert_array_equal(hidden, flat[positions])  # the targets are the hidden ids
    assert (masked.reshape(-1)[positions] == 99).all()
    assert np.count_nonzero(masked == 99) == len(positions)
    assert (flat[positions] > 1).all()  # never padding or out-of-vocabulary
    rows = positions // 8
    assert set(rows) == {0, 1}  # text 2 has no known token; texts 0 and 1 hide one at least
    # Unmasked positions keep their ids.
    keep = np.ones(flat.shape, bool)
    keep[positions] = False
    np.testing.assert_array_equal(masked.reshape(-1)[keep], flat[keep])
    # Over many draws, about `fraction` of the known tokens are hidden.
    many = tf.constant(np.random.default_rng(0).integers(2, 50, (64, 32)), tf.int64)
    share = np.mean(
        [
            len(pretrain.mask_tokens(many, 99, 0.15, tf.constant([seed, 0], tf.int64))[1])
            / many.shape.num_elements()
            for seed in range(5)
        ]
    )
    assert 0.14 < share < 0.19  # 15%, plus the texts whose draw was lowest anyway


@pytest.fixture(scope="module")
def pretrained_run(tmp_path_factory):
    data_file = write_reviews_fixture(tmp_path_factory.mktemp("data") / "reviews.csv")
    root = tmp_path_factory.mktemp("runs")
    args = [
        "--config",
        TINY,
        "--set",
        "dataset.name=null",
        f"dataset.train_file={data_file}",
        f"output.root={root}",
        "output.name=encoder",
        "training.epochs=3",
        "training.steps_per_epoch=null",
        "training.learning_rate=5e-3",
    ]
    assert pretrain.main(args) == 0
    return root / "encoder", data_file


def test_pretraining_learns_to_fill_in_words(pretrained_run):
    run_dir, _ = pretrained_run
    assert {
        "config.yaml",
        "encoder.weights.h5",
        "vocabulary.json",
        "history.csv",
        "metrics.json",
    } <= {path.name for path in run_dir.iterdir()}
    metrics = json.loads((run_dir / "metrics.json").read_text())
    vocabulary = json.loads((run_dir / "vocabulary.json").read_text())
    assert vocabulary[:2] == ["", "[UNK]"] and metrics["vocabulary_size"] == len(vocabulary)
    # Uniform guessing gets 1 in 31; the fixture's words have learnable frequencies.
    assert metrics["validation"]["masked_token_accuracy"] > 2 / len(vocabulary)
    losses = [float(row["loss"]) for row in runs.read_history(run_dir)]
    assert losses[-1] < losses[0]


def test_train_starts_from_the_pretrained_encoder(pretrained_run, tmp_path):
    run_dir, data_file = pretrained_run
    config = load_config(
        TINY,
        [
            "dataset.name=null",
            f"dataset.train_file={data_file}",
            f"output.root={tmp_path}",
            f"model.init_from={run_dir}",
        ],
    )
    weights = starting_weights(config)
    config, pretrained = weights.config, weights.pretraining_run
    assert pretrained.run_dir == run_dir
    data, _, steps = train.load_data(config, weights)
    assert data.vectorizer.get_vocabulary() == pretrained.vocabulary
    classifier, _ = train.build_model(config, data, tf.distribute.get_strategy(), steps, weights)
    from engine.training.masked_language_model import build_masked_language_model, text_encoder

    encoder = build_masked_language_model(
        pretrained.config.model, len(pretrained.vocabulary) + 1, config.text.sequence_length
    )
    encoder.load_weights(pretrained.encoder_weights)
    ours_encoder, theirs_encoder = classifier.encoder, text_encoder(encoder)
    for layer in ("embedding", "final_norm"):
        for ours, theirs in zip(
            getattr(ours_encoder, layer).weights,
            getattr(theirs_encoder, layer).weights,
            strict=True,
        ):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    for ours_block, theirs_block in zip(ours_encoder.blocks, theirs_encoder.blocks, strict=True):
        for ours, theirs in zip(ours_block.weights, theirs_block.weights, strict=True):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # And the whole command trains from it.
    assert (
        train.main(
            [
                "--config",
                TINY,
                "--set",
                "dataset.name=null",
                f"dataset.train_file={data_file}",
                f"output.root={tmp_path}",
                f"model.init_from={run_dir}",
            ]
        )
        == 0
    )


def test_an_encoder_of_another_shape_is_refused_in_one_line(pretrained_run, tmp_path, capsys):
    run_dir, data_file = pretrained_run
    assert (
        train.main(
            [
                "--config",
                TINY,
                "--set",
                "dataset.name=null",
                f"dataset.train_file={data_file}",
                f"output.root={tmp_path}",
                f"model.init_from={run_dir}",
                "model.d_model=32",
            ]
        )
        == 2
    )
    error = capsys.readouterr().err.strip()
    assert error == (
        f"train.py: error: model.d_model: 32 does not fit the pretrained encoder "
        f"in {run_dir} (16); set model.d_model=16 or pretrain again"
    )
    assert (
        train.main(
            [
                "--config",
                TINY,
                "--set",
                f"model.init_from={tmp_path / 'nothing'}",
                f"output.root={tmp_path}",
            ]
        )
        == 2
    )
    assert "model.init_from:" in capsys.readouterr().err


def test_pretraining_builds_its_own_encoder_whatever_auto_would_choose(capsys):
    # A config naming no encoder field: train.py would fine-tune MiniLM, pretrain.py not.
    assert (
        pretrain.main(
            [
                "--config",
                str(ROOT / "configs" / "example_csv.yaml"),
                "--set",
                "model.pretrained=auto",
                "--print-config",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "\n  pretrained: null\n" in printed and "\n  pretrained_layers: null\n" in printed
