"""train.py with `model.fine_tune: lora`: a tiny BERT checkpoint fine-tuned with LoRA, its merged
`model.keras`, and its adapter file put back on the checkpoint (also after a resume)."""

import numpy as np
import pytest

import train
from config.files import load_config
from engine.training.starting_weights import classifier_from_adapter
from engine.training.starting_weights.checkpoints import read_tensors
from models import get_model_parts, load_end_to_end_model
from run_folder import runs
from tests.helpers import TINY, InterruptAfterEpoch, pretrained_args

TOKEN_IDS = np.array(
    [[101, 2023, 2143, 2001, 2204, 102, 0, 0], [101, 2919, 2919, 5436, 102, 0, 0, 0]]
)


def lora_args(root, data_file, checkpoint, *overrides):
    return pretrained_args(
        root, data_file, checkpoint, "model.fine_tune={kind: lora, rank: 2}", *overrides
    )


def resumable_args(root, data_file, checkpoint):
    """Three epochs, no early stop: the run the resume test interrupts, and the whole one."""
    return lora_args(
        root, data_file, checkpoint, "training.epochs=3", "training.early_stopping_patience=0"
    )


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory, data_file, tiny_checkpoint):
    """One LoRA run, trained once: checked as it is, and the whole run a resume equals."""
    root = tmp_path_factory.mktemp("lora")
    assert train.main(resumable_args(root, data_file, tiny_checkpoint)) == 0
    return root / "tiny"


def assert_adapter_gives_the_model(run_dir):
    _, classifier = get_model_parts(load_end_to_end_model(run_dir / runs.MODEL_FILE))
    ids = np.minimum(TOKEN_IDS, classifier.encoder.embedding.token_embedding.input_dim - 1)
    rebuilt = classifier_from_adapter(run_dir)
    np.testing.assert_allclose(np.asarray(rebuilt(ids)), np.asarray(classifier(ids)), atol=1e-5)
    return classifier


def test_a_lora_run_changes_only_its_targets_and_its_adapter_rebuilds_it(lora_run, tiny_checkpoint):
    run_dir = lora_run
    saved = load_config(run_dir / runs.CONFIG_FILE)
    assert saved.model.fine_tune.targets == ["query", "value"]  # the default, written out
    assert not (run_dir / "checkpoints").exists()  # model.keras holds the best epoch
    assert saved.training.learning_rate == pytest.approx(3e-3)  # auto, for LoRA
    classifier = assert_adapter_gives_the_model(run_dir)
    tensors = read_tensors(tiny_checkpoint)
    attention = classifier.encoder.blocks[0].self_attention
    prefix = "encoder.layer.0.attention"
    # Frozen: the key, the biases, the feed-forward network stay as the checkpoint has them.
    key = tensors[f"{prefix}.self.key.weight"].T.reshape(attention.key_dense.kernel.shape)
    np.testing.assert_allclose(attention.key_dense.kernel.numpy(), key, atol=1e-7)
    np.testing.assert_allclose(
        attention.query_dense.bias.numpy().ravel(), tensors[f"{prefix}.self.query.bias"], atol=1e-7
    )
    np.testing.assert_allclose(
        classifier.encoder.blocks[0].feed_forward.output_dense.kernel,
        tensors["encoder.layer.0.output.dense.weight"].T,
        atol=1e-7,
    )
    # Trained: the query's kernel moved from the checkpoint's by a change of rank <= 2.
    query = tensors[f"{prefix}.self.query.weight"].T.reshape(attention.query_dense.kernel.shape)
    change = (attention.query_dense.kernel.numpy() - query).reshape(-1, query.shape[-1])
    singular = np.linalg.svd(change, compute_uv=False)
    assert singular[0] > 1e-3 and singular[2] < 1e-4 * singular[0]


def test_an_interrupted_lora_run_resumes_as_if_never_stopped(
    lora_run, tmp_path, data_file, tiny_checkpoint
):
    # BackupAndRestore alone would zero both factors on resume (Keras loads the merged
    # kernel): the epochs after it would then train the head only.
    args = resumable_args(tmp_path / "cut", data_file, tiny_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        train.run_training(load_config(TINY, args[3:]), callbacks=[InterruptAfterEpoch(0)])
    assert train.main(args) == 0
    whole, cut = runs.read_history(lora_run), runs.read_history(tmp_path / "cut" / "tiny")
    assert len(cut) == 3
    for row, again in zip(whole, cut):
        assert float(row["val_loss"]) == pytest.approx(float(again["val_loss"]), abs=1e-5)
    assert_adapter_gives_the_model(tmp_path / "cut" / "tiny")


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ["model.pretrained=null", "model.fine_tune=lora"],
            "model.fine_tune: lora adapts a pretrained encoder",
        ),
        (["model.fine_tune=lora", "model.fine_tune.blocks=1"], "model.fine_tune.blocks: kind lora"),
        (["model.fine_tune={kind: lora, targets: [query, gate]}"], "model.fine_tune.targets: must"),
        (
            ["model.fine_tune={kind: lora, targets: [query, query]}"],
            "model.fine_tune.targets: must",
        ),
        (["model.fine_tune={kind: lora, rank: 0}"], "model.fine_tune.rank: must be"),
        (
            ["model.lora_rank=2"],
            "model.lora_rank: replaced by model.fine_tune: {kind: lora, rank: R}",
        ),
    ],
)
def test_lora_settings_that_cannot_work_are_one_line_errors(
    tmp_path, data_file, tiny_checkpoint, capsys, overrides, message
):
    assert train.main(pretrained_args(tmp_path, data_file, tiny_checkpoint, *overrides)) == 2
    assert message in capsys.readouterr().err
