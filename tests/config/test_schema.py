"""Config schema (config/schema.py and its sections): the defaults, a comment per field,
and one test per validation error, each naming the key."""

import dataclasses

import pytest

from config import SECTIONS, ModelConfig
from config.files import commented_config, dump_config, load_config
from tests.config.config_text import error_of, write

BASE = ["dataset.name=bbc_news"]


@pytest.mark.parametrize(
    "overrides, key",
    [
        (["model.num_heads=3"], "model.num_heads: d_model must be divisible by num_heads"),
        (["model.d_model=-8"], "model.d_model: must be positive"),
        (["model.num_layers=0"], "model.num_layers: must be positive"),
        (["model.intermediate_dim=-1"], "model.intermediate_dim: must be positive"),
        (["model.key_dim=0"], "model.key_dim: must be positive"),
        (["text.sequence_length=0"], "text.sequence_length: must be a positive integer or auto"),
        (["text.sequence_length=longest"], "text.sequence_length: must be a positive integer"),
        (["text.sequence_length=1.5"], "text.sequence_length: must be a positive integer"),
        (["text.vocabulary_size=2"], "text.vocabulary_size: must be at least 3"),
        (["training.batch_size=0"], "training.batch_size: must be positive"),
        (["training.epochs=-1"], "training.epochs: must be a positive integer or auto"),
        (["training.epochs=many"], "training.epochs: must be a positive integer or auto"),
        (
            ["training.early_stopping_patience=-1"],
            "training.early_stopping_patience: must be a non-negative integer or auto",
        ),
        (["training.learning_rate=0"], "training.learning_rate: must be a positive number"),
        (["training.steps_per_epoch=0"], "training.steps_per_epoch: must be positive"),
        (["training.weight_decay=-0.1"], "training.weight_decay: must not be negative"),
        (["training.early_stopping_patience=-1"], "training.early_stopping_patience"),
        (["training.attention_images=-2"], "training.attention_images: must not be negative"),
        (["model.dropout=1.0"], "model.dropout: must be in [0, 1)"),
        (["model.token_dropout=1.0"], "model.token_dropout: must be in [0, 1)"),
        (["training.label_smoothing=-0.1"], "training.label_smoothing: must be in [0, 1)"),
        (["dataset.validation_fraction=0"], "dataset.validation_fraction: must be in (0, 1)"),
        (["dataset.validation_fraction=0.5", "dataset.test_fraction=0.5"], "dataset.test_fraction"),
        (["model.pooling=sum"], "model.pooling: must be one of mean, max, cls"),
        (["model.attention_block_size=0"], "model.attention_block_size: must be positive"),
        (
            ["model.attention_block_size=64", "model.pooling=cls"],
            "model.attention_block_size: the class token would attend to the first block only",
        ),
        (
            ["model.token_dropout=0.1", "model.mask_zero=false"],
            "model.token_dropout: dropped words become padding, which only model.mask_zero",
        ),
        (["training.distribution=tpu"], "training.distribution: must be one of"),
        (["training.monitor=accuracy"], "training.monitor: must be one of val_loss, val_accuracy"),
        (["dataset.name=mnist"], "dataset.name: must be one of"),
        (["dataset.train_file=train.csv"], "dataset.train_file: give one of dataset.name"),
        (["dataset.tfds_name=imdb_reviews"], "dataset.tfds_name: give one of dataset.name"),
        (["output.name=a/b"], "output.name: must be a plain folder name"),
    ],
)
def test_impossible_values_name_the_key(overrides, key):
    assert key in error_of(overrides=BASE + overrides)


def test_missing_dataset_is_an_error():
    assert error_of().startswith("dataset.name: no dataset given")


def test_model_config_is_the_default_section_with_auto_resolved():
    assert ModelConfig().pretrained == "auto"
    assert load_config(None, BASE).model == ModelConfig(
        pretrained="all_minilm_l6_v2", pretrained_layers=5
    )


def test_tfds_catalog_dataset_and_split_names_reach_the_dataset_section():
    config = load_config(
        None,
        [
            "dataset.tfds_name=imdb_reviews",
            "dataset.validation_split=train[:10%]",
            "dataset.train_split=train[10%:]",
            "dataset.text_column=review",
        ],
    )
    dataset = config.dataset
    assert dataset.tfds_builder_name == "imdb_reviews"
    assert (dataset.train_split, dataset.validation_split, dataset.test_split) == (
        "train[10%:]",
        "train[:10%]",
        "test",
    )
    assert dataset.text_column == "review"


def test_every_field_has_a_comment_in_the_schema():
    for name, section in SECTIONS.items():
        comments = section.field_comments()
        missing = [item.name for item in dataclasses.fields(section) if not comments.get(item.name)]
        assert not missing, f"{name}: fields without a comment: {missing}"


@pytest.mark.parametrize(
    "override, message",
    [
        ("dataset.labels=neg", "dataset.labels: expected a list of strings or null, got 'neg'"),
        ("dataset.labels=[a, a]", "dataset.labels: must name two labels or more, each once"),
        ("dataset.streaming=maybe", "dataset.streaming: must be true, false or auto"),
        ("text.adapt_sample=0", "text.adapt_sample: must be positive"),
    ],
)
def test_streaming_fields_are_checked(override, message):
    assert error_of(overrides=["dataset.train_file=x.csv", override]).startswith(message)


def test_a_stratified_split_cannot_stream():
    assert error_of(
        overrides=[
            "dataset.train_file=x.csv",
            "dataset.streaming=true",
            "dataset.split_method=stratified",
        ]
    ).startswith("dataset.split_method: stratified needs every row in memory")


def test_auto_training_fields_depend_on_a_checkpoint_and_numbers_stay():
    config = load_config(None, BASE + ["training.epochs=7"])
    scratch, pretrained = config.training.resolved(), config.training.resolved(pretrained=True)
    assert (scratch.learning_rate, scratch.epochs, scratch.early_stopping_patience) == (2e-3, 7, 3)
    assert (pretrained.learning_rate, pretrained.epochs, pretrained.early_stopping_patience) == (
        1e-4,
        7,
        2,
    )
    assert config.training.resolved(pretrained=True).resolved() == pretrained
    lora = config.training.resolved(pretrained=True, lora=True)
    assert (lora.learning_rate, lora.epochs, lora.early_stopping_patience) == (3e-3, 7, 2)


def test_fine_tune_is_one_choice_written_whole_by_kind_or_field_by_field(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text(
        "dataset: {name: bbc_news}\nmodel:\n  pretrained: all_minilm_l6_v2\n"
        "  fine_tune: {kind: lora, targets: [query, key]}\n"
    )
    variant = tmp_path / "variant.yaml"
    variant.write_text("base: base.yaml\nmodel:\n  fine_tune: {rank: 4}\n")
    # A file's mapping without a kind, and `--set section.field.key`, add to the choice.
    fine_tune = load_config(variant).model.fine_tune
    assert (fine_tune.kind, fine_tune.rank, fine_tune.targets) == ("lora", 4, ["query", "key"])
    fine_tune = load_config(variant, ["model.fine_tune.rank=2"]).model.fine_tune
    assert (fine_tune.rank, fine_tune.targets) == (2, ["query", "key"])
    # A kind replaces the choice whole; lora's defaults are written out.
    config = load_config(variant, ["model.fine_tune=lora"])
    assert (config.model.fine_tune.rank, config.model.fine_tune.targets) == (8, ["query", "value"])
    assert (
        "  fine_tune: {kind: lora, rank: 8, targets: [query, value]}"
        in commented_config(config).splitlines()
    )
    assert load_config(write(tmp_path, dump_config(config))).model == config.model
    assert ModelConfig(pretrained="x", fine_tune="head").fine_tune.kind == "head"  # directly
    assert error_of(variant, ["model.lora_rank=4"]) == (
        "model.lora_rank: replaced by model.fine_tune: {kind: lora, rank: R}"
    )
    assert error_of(variant, ["model.fine_tune=[lora]"]).startswith(
        "model.fine_tune: expected a mapping such as {kind: ...}"
    )
    assert error_of(variant, ["model.num_heads.rank=2"]) == (
        "model.num_heads.rank: model.num_heads has no fields; set model.num_heads=VALUE"
    )
