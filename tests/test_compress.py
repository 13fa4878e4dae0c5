"""compress.py: a pruned copy of the tiny run, which the other commands take as any run."""

import json
import shutil

import numpy as np
import pytest

import compress
import evaluate
import predict
from engine.evaluation.compare import compare_file
from run_folder import runs, saved_run


@pytest.fixture
def run_dir(tiny_run_dir, tmp_path):
    return shutil.copytree(
        tiny_run_dir, tmp_path / "tiny", ignore=shutil.ignore_patterns("eval", "attention")
    )


def assert_compares(run_dir, target):
    """evaluate.py --compare takes the compressed run against its source."""
    assert evaluate.main([str(run_dir), "--compare", str(target), "--min-count", "2"]) == 0
    report = json.loads((run_dir / "eval" / "test" / compare_file(target)).read_text())
    assert 0.5 <= report["agreement"] <= 1.0 and report["median_spearman"] is not None
    assert set(report["changed_words"]) == {"negative", "positive"}


@pytest.mark.parametrize(
    "args",
    [["--prune-heads", "0.5"], ["--prune-heads", "1", "--order", "random", "--seed", "3"]],
    ids=["importance", "random"],
)
def test_the_pruned_run_predicts_as_the_masked_one_and_every_command_takes_it(run_dir, args):
    assert compress.main([str(run_dir), *args]) == 0
    target = run_dir.parent / "tiny_pruned"
    report = json.loads((target / runs.COMPRESS_FILE).read_text())
    assert report["heads_before"] == 2 and report["heads_after"] == 1
    [[layer, head]] = report["pruned_heads"]
    assert report["kept_heads"] == [[1 - head]]
    original, pruned = saved_run.load_run(run_dir), saved_run.load_run(target)
    assert pruned.parts[1].encoder.blocks[0].num_heads == 1
    texts = ["a good film", "dull, dull and far too long", "fine"]
    ids = np.asarray(original.parts[0](np.array(texts)))
    mask = np.ones((1, 2), "float32")
    mask[layer, head] = 0.0
    np.testing.assert_allclose(
        np.asarray(pruned.model(np.array(texts))),
        np.asarray(original.parts[1](ids, head_mask=mask)),
        atol=1e-5,
    )
    if "--order" not in args:  # measured on the validation split, as heads.json orders them
        assert (target / "model.keras").stat().st_size < (run_dir / "model.keras").stat().st_size
    assert evaluate.main([str(target), "--export-attention", "2"]) == 0
    assert predict.main([str(target), "a good film", "--explain"]) == 0
    assert_compares(run_dir, target)


@pytest.mark.parametrize(
    "args, name",
    [(["--int8"], "tiny_int8"), (["--prune-heads", "1", "--int8"], "tiny_pruned_int8")],
)
def test_the_int8_run_holds_int8_weights_and_every_command_takes_it(run_dir, args, name):
    assert compress.main([str(run_dir), *args]) == 0
    target = run_dir.parent / name
    report = json.loads((target / runs.COMPRESS_FILE).read_text())
    assert report["int8"] is True and ("pruned_heads" in report) == ("--prune-heads" in args)
    original, small = saved_run.load_run(run_dir), saved_run.load_run(target)
    attention = small.parts[1].encoder.blocks[0].self_attention
    assert attention.query_dense.quantization_mode == "int8"
    assert str(attention.query_dense._kernel.dtype) == "int8"
    texts = np.array(["a good film", "dull, dull and far too long", "fine"])
    if "--prune-heads" not in args:
        np.testing.assert_allclose(
            np.asarray(small.model(texts)), np.asarray(original.model(texts)), atol=0.02
        )
    assert evaluate.main([str(target), "--export-attention", "2"]) == 0
    assert predict.main([str(target), "a good film", "--explain"]) == 0
    assert_compares(run_dir, target)


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "nothing to do: pass --prune-heads FRACTION|COUNT, --int8, or both"),
        (["--int8", "--finetune-epochs", "1"], "more with --prune-heads"),
        (["--prune-heads", "0"], "--prune-heads 0: give a fraction in (0, 1) or a count of 1"),
        (["--prune-heads", "1.5"], "--prune-heads 1.5: give a fraction in (0, 1) or a count"),
        (["--prune-heads", "half"], "--prune-heads half: give a fraction in (0, 1)"),
        (["--prune-heads", "2"], "asks for 2 of the 2 heads; every block keeps one, so at most 1"),
        (["--prune-heads", "0.9"], "asks for 2 of the 2 heads"),
        (["--prune-heads", "1", "--finetune-epochs", "-1"], "--finetune-epochs -1: give 0"),
    ],
)
def test_bad_requests_are_one_line_errors(run_dir, capsys, args, message):
    assert compress.main([str(run_dir), *args]) == 2
    error = capsys.readouterr().err
    assert message in error and len(error.strip().splitlines()) == 1
    assert not (run_dir.parent / "tiny_pruned").exists()


def test_an_existing_folder_is_never_written_over(run_dir, capsys):
    (run_dir.parent / "tiny_pruned").mkdir()
    assert compress.main([str(run_dir), "--prune-heads", "1"]) == 2
    assert "tiny_pruned already exists: pass --name NAME" in capsys.readouterr().err
    assert compress.main([str(run_dir), "--prune-heads", "1", "--name", "other"]) == 0
    assert (run_dir.parent / "other" / "model.keras").is_file()


def test_heads_of_a_pruned_run_are_refused_in_one_line(tmp_path):
    from config import ModelConfig
    from engine.evaluation.heads import measure_run_heads
    from models import build_classifier
    from models.pruning import pruned_classifier

    classifier = build_classifier(
        ModelConfig(d_model=8, num_heads=2, num_layers=2, intermediate_dim=8), 20, 8, num_classes=2
    )
    pruned = pruned_classifier(classifier, [(0, 0)])

    class PrunedRun:
        run_dir = tmp_path
        parts = (None, pruned)

    with pytest.raises(runs.RunError, match=r"keep \[1, 2\] heads \(a pruned run\)"):
        measure_run_heads(PrunedRun(), ["a film"], [0], 1, "validation")


def test_finetune_trains_the_pruned_model_and_an_interrupted_one_resumes(
    run_dir, monkeypatch, capsys
):
    import keras

    from engine.training import fitting

    class Interrupt(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise KeyboardInterrupt

    make_callbacks = fitting.make_callbacks
    monkeypatch.setattr(
        fitting, "make_callbacks", lambda *args: make_callbacks(*args) + [Interrupt()]
    )
    args = [str(run_dir), "--prune-heads", "1", "--finetune-epochs", "2"]
    with pytest.raises(KeyboardInterrupt):
        compress.main(args)
    staging = runs.partial_dir(run_dir.parent / "tiny_pruned")
    assert len(runs.read_history(staging)) == 1
    monkeypatch.undo()
    assert compress.main(args) == 0
    assert "Resuming the interrupted fine-tune" in capsys.readouterr().out
    target = run_dir.parent / "tiny_pruned"
    assert not staging.exists() and len(runs.read_history(target)) == 2
    assert not (target / "checkpoints").exists()  # model.keras holds the best epoch
    report = json.loads((target / runs.COMPRESS_FILE).read_text())
    assert report["finetune_epochs"] == 2 and report["finetuned"]["epochs"] == 2
    # Trained on: no longer the masked original's probabilities.
    [[layer, head]] = report["pruned_heads"]
    original, pruned = saved_run.load_run(run_dir), saved_run.load_run(target)
    texts = ["a good film", "dull, dull and far too long", "fine"]
    mask = np.ones((1, 2), "float32")
    mask[layer, head] = 0.0
    masked = original.parts[1](np.asarray(original.parts[0](np.array(texts))), head_mask=mask)
    assert np.abs(np.asarray(pruned.model(np.array(texts))) - np.asarray(masked)).max() > 1e-4
    assert evaluate.main([str(target)]) == 0


def test_a_partial_folder_of_another_request_is_started_over(tmp_path):
    target = tmp_path / "run_pruned"
    staging = runs.partial_dir(target)
    staging.mkdir()
    runs.write_json(staging / runs.COMPRESS_FILE, {"pruned_heads": [[0, 1]]})
    (staging / "history.csv").write_text("epoch,val_accuracy\n0,0.5\n")
    assert compress.staging_folder(target, {"pruned_heads": [[0, 1]]}) == staging
    assert (staging / "history.csv").exists()
    assert compress.staging_folder(target, {"pruned_heads": [[0, 0]]}) == staging
    assert not (staging / "history.csv").exists()
