"""Config files and overrides (config/files.py): typed values merged over the defaults, the
resolved config written and read back, bases, every file in configs/, docs/config.md, and
the errors of a file or an override, each naming the key."""

import dataclasses
from pathlib import Path

import pytest

from config.files import (
    commented_config,
    dump_config,
    field_reference,
    load_config,
    parse_overrides,
)
from tests.config.config_text import error_of, write

CONFIGS = sorted(Path(__file__).resolve().parents[2].joinpath("configs").glob("*.yaml"))
BASE = ["dataset.name=bbc_news"]


def test_file_and_overrides_are_typed_and_merged(tmp_path):
    path = write(tmp_path, "dataset:\n  name: reuters_r8\nmodel:\n  num_layers: 3\n")
    config = load_config(
        path,
        [
            "model.num_layers=4",
            "training.learning_rate=1e-3",
            "training.mixed_precision=true",
            "model.key_dim=null",
            "model.key_dim=8",
        ],
    )
    assert config.dataset.name == "reuters_r8"
    assert config.model.num_layers == 4
    assert config.training.learning_rate == pytest.approx(1e-3)
    assert config.training.mixed_precision is True
    assert config.model.key_dim == 8
    assert config.output.name == "config"  # The file's stem.
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model.num_layers = 1


def test_resolved_config_round_trips(tmp_path):
    config = load_config(None, BASE + ["model.pooling=cls", "training.clipnorm=null"])
    path = write(tmp_path, dump_config(config))
    assert load_config(path) == config


def test_integers_are_accepted_for_floats(tmp_path):
    path = write(tmp_path, "dataset:\n  name: bbc_news\ntraining:\n  learning_rate: 1\n")
    assert load_config(path).training.learning_rate == 1.0


def test_parse_overrides_types():
    assert parse_overrides(["model.norm_first=no", "training.epochs=3"]) == {
        "model": {"norm_first": False},
        "training": {"epochs": 3},
    }


@pytest.mark.parametrize(
    "text, key",
    [
        ("modle:\n  d_model: 8\n", "modle: unknown section"),
        ("model:\n  num_heds: 2\n", "model.num_heds: unknown key"),
        ("model:\n  d_model: '64'\n", "model.d_model: expected an integer"),
        ("training:\n  epochs: true\n", "training.epochs: expected an integer"),
        ("training:\n  mixed_precision: 1\n", "training.mixed_precision: expected true or false"),
        ("model:\n  dropout: null\n", "model.dropout: must not be null"),
        ("model: [1, 2]\n", "model: expected a mapping"),
        ("model:\n  d_model: [\n", "is not valid YAML"),
    ],
)
def test_file_errors_name_the_key(tmp_path, text, key):
    assert key in error_of(write(tmp_path, "dataset:\n  name: bbc_news\n" + text))


@pytest.mark.parametrize(
    "override, key",
    [
        ("model.num_heds=2", "model.num_heds: unknown key"),
        ("modle.d_model=2", "modle: unknown section"),
        ("model=2", "model: keys look like section.field"),
        ("model.d_model", "model.d_model: overrides look like section.field=value"),
        ("model.d_model=6.5", "model.d_model: expected an integer"),
        ("model.d_model=null", "model.d_model: expected an integer"),
        ("training.learning_rate=fast", "training.learning_rate: must be a positive num"),
        ("model.norm_first=maybe", "model.norm_first: expected true or false"),
    ],
)
def test_override_errors_name_the_key(override, key):
    assert key in error_of(overrides=BASE + [override])


def test_missing_file_is_an_error(tmp_path):
    assert "cannot read config file" in error_of(tmp_path / "nope.yaml")


@pytest.mark.parametrize("path", CONFIGS, ids=[path.name for path in CONFIGS])
def test_every_config_file_loads_and_says_how_to_run_it(path):
    config = load_config(path)
    assert config.output.name == path.stem
    header = path.read_text().split("\n\n")[0]
    command = "pretrain.py" if "\npretraining:" in path.read_text() else "train.py"
    assert f"python {command} --config configs/{path.name}" in header
    assert "Expect" in header


def test_a_config_with_a_base_holds_only_what_differs(tmp_path):
    write(tmp_path, "dataset:\n  name: bbc_news\nmodel:\n  d_model: 32\n  num_heads: 2\n")
    variant = tmp_path / "variant.yaml"
    variant.write_text("base: config.yaml\nmodel:\n  num_heads: 4\n")
    config = load_config(variant)
    assert (config.dataset.name, config.model.d_model, config.model.num_heads) == (
        "bbc_news",
        32,
        4,
    )
    assert config.output.name == "variant"
    # The default recipe is written once: configs/default.yaml is the MiniLM recipe cut to
    # 3 blocks and one epoch, everything else as rotten_tomatoes_minilm.yaml says.
    default, recipe = (
        load_config(Path(CONFIGS[0]).parent / f"{name}.yaml")
        for name in ("default", "rotten_tomatoes_minilm")
    )
    assert (default.model.pretrained_layers, default.training.epochs) == (3, 1)
    assert (
        dataclasses.replace(
            default,
            output=recipe.output,
            model=dataclasses.replace(default.model, pretrained_layers=None),
            training=dataclasses.replace(default.training, epochs=recipe.training.epochs),
        )
        == recipe
    )


def test_a_base_that_includes_itself_is_an_error(tmp_path):
    loop = tmp_path / "loop.yaml"
    loop.write_text("base: loop.yaml\n")
    assert "includes itself" in error_of(loop)


def test_a_dataset_source_override_replaces_the_files_source(tmp_path):
    path = write(tmp_path, "dataset:\n  name: bbc_news\n  text_column: body\n")
    config = load_config(path, ["dataset.tfds_name=imdb_reviews"])
    assert (config.dataset.name, config.dataset.tfds_name) == (None, "imdb_reviews")
    assert config.dataset.text_column == "body"  # only the source is replaced
    config = load_config(path, ["dataset.train_file=mine.csv"])
    assert (config.dataset.name, config.dataset.train_file) == (None, "mine.csv")


def test_a_list_field_reads_from_yaml_and_overrides_and_round_trips(tmp_path):
    path = write(tmp_path, "dataset:\n  train_file: x.csv\n  labels: [0, pos]\n")
    config = load_config(path, ["dataset.streaming=true"])
    # YAML's numbers are the label strings they spell.
    assert config.dataset.labels == ["0", "pos"] and config.dataset.streaming is True
    assert load_config(
        None, ["dataset.train_file=x.csv", "dataset.labels=[neg, pos]"]
    ).dataset.labels == ["neg", "pos"]
    for text in (dump_config(config), commented_config(config)):
        assert load_config(write(tmp_path, text)) == config


def test_docs_config_md_is_the_current_field_reference():
    docs = Path(__file__).resolve().parents[2] / "docs" / "config.md"
    assert docs.read_text() == field_reference(), (
        "regenerate: python -m config.files > docs/config.md"
    )
    assert '| `learning_rate` | a number or a string | `"auto"` |' in docs.read_text()
