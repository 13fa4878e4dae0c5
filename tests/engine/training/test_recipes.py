"""engine/training/recipes.py: one recipe per `model.fine_tune` kind, each with its own
checks, what it trains, the trainer it builds and what it leaves in the run folder. (train.py
runs each recipe end to end: tests/test_train_pretrained.py, tests/test_train_lora.py.)"""

import numpy as np
import pytest

from config import ConfigError, ModelConfig, TrainingConfig
from engine.training.recipes import FullFineTune, Lora, TopBlocks, fit_recipe
from models import build_classifier
from models.lora import LoraBackup
from run_folder import runs

SMALL = dict(d_model=16, num_heads=2, num_layers=3, intermediate_dim=32, dropout=0.0)
TOKEN_IDS = np.array([[3, 4, 5, 0], [6, 7, 0, 0]])


def recipe_and_classifier(fine_tune):
    model = ModelConfig(**SMALL, pretrained="a checkpoint", fine_tune=fine_tune)
    return fit_recipe(model), build_classifier(model, 20, sequence_length=8, num_classes=2)


@pytest.mark.parametrize(
    "fine_tune, kind",
    [
        ("full", FullFineTune),
        ("head", TopBlocks),
        ({"kind": "top_blocks", "blocks": 1}, TopBlocks),
        ("lora", Lora),
    ],
)
def test_each_kind_has_its_recipe(fine_tune, kind):
    assert type(recipe_and_classifier(fine_tune)[0]) is kind


def test_a_run_from_scratch_trains_everything():
    recipe = fit_recipe(ModelConfig(**SMALL))
    classifier = build_classifier(ModelConfig(**SMALL), 20, sequence_length=8, num_classes=2)
    recipe.prepare(classifier)
    assert type(recipe) is FullFineTune and recipe.callbacks(classifier, None) == []
    assert len(classifier.trainable_weights) == len(classifier.weights)
    pipelines = {"train": "batches"}
    assert recipe.pipelines(None, None, classifier, pipelines, None) is pipelines


@pytest.mark.parametrize(
    "fine_tune, trained",
    [({"kind": "top_blocks", "blocks": 1}, [False, False, True]), ("head", [False, False, False])],
)
def test_top_blocks_freeze_the_rest_and_train_from_the_states(fine_tune, trained):
    recipe, classifier = recipe_and_classifier(fine_tune)
    recipe.prepare(classifier)
    assert [block.trainable for block in classifier.encoder.blocks] == trained
    assert not classifier.encoder.embedding.trainable
    trainer = recipe.build_trainer(classifier, TrainingConfig(), steps_per_epoch=4)
    assert [tensor.name for tensor in trainer.inputs] == ["token_ids", "hidden_states"]


@pytest.mark.parametrize(
    "fine_tune, streaming, distributed, message",
    [
        (
            {"kind": "top_blocks", "blocks": 4},
            False,
            False,
            "model.fine_tune.blocks: 4 is more than the encoder's 3 blocks",
        ),
        ("head", True, False, "model.fine_tune: head computes the frozen blocks once"),
        ("head", False, True, "training.distribution: none"),
    ],
)
def test_top_blocks_refuse_what_they_cannot_follow(fine_tune, streaming, distributed, message):
    recipe, _ = recipe_and_classifier(fine_tune)
    with pytest.raises(ConfigError, match=message):
        recipe.check(3, streaming=streaming, distributed=distributed)
    fit_recipe(ModelConfig(**SMALL)).check(3, streaming=True, distributed=True)  # full: any


def test_lora_trains_its_factors_keeps_them_for_a_resume_and_writes_the_adapter(tmp_path):
    recipe, classifier = recipe_and_classifier({"kind": "lora", "rank": 2, "targets": ["key"]})
    recipe.prepare(classifier)
    trained = [variable.path for variable in classifier.trainable_weights]
    assert [path for path in trained if "lora" in path] == [
        f"encoder_block_{block}/self_attention/key/lora_kernel_{ab}"
        for block in range(3)
        for ab in "ab"
    ]
    assert {(block, "key") for block in range(3)} == set(recipe.start)
    (callback,) = recipe.callbacks(classifier, tmp_path)
    assert isinstance(callback, LoraBackup)
    recipe.finish(classifier, tmp_path)
    assert (tmp_path / runs.ADAPTER_FILE).is_file()
    assert not list(tmp_path.glob("tmp-*"))  # written through runs.staged_file
