"""`model.pretrained: auto`: what the config names decides it, the note that says so, the
recipes that say null or their own schedule, and the errors it keeps."""

from pathlib import Path

import pytest

from config import ConfigError, ModelConfig
from config.files import dump_config, load_config


@pytest.mark.parametrize(
    "overrides, expected, named",
    [
        (["dataset.train_file=mine.csv"], "all_minilm_l6_v2", "names no other starting weights"),
        (["dataset.train_file=mine.csv", "model.num_layers=1"], None, "model.num_layers"),
        (
            ["dataset.train_file=mine.csv", "model.attention_block_size=8"],
            None,
            "model.attention_block_size",
        ),
        (["dataset.train_file=mine.csv", "text.stop_words=english"], None, "text.stop_words"),
        (
            ["dataset.train_file=mine.csv", "text.vocabulary_size=5000"],
            None,
            "text.vocabulary_size",
        ),
        (["dataset.train_file=mine.csv", "model.init_from=runs/p"], None, "model.init_from"),
        (
            ["dataset.train_file=mine.csv", "model.pretrained_embeddings=glove_6b_50d"],
            None,
            "model.pretrained_embeddings",
        ),
        (["dataset.train_file=mine.csv", "dataset.streaming=true"], None, "dataset.streaming"),
        # What the checkpoint leaves to us does not turn it off.
        (
            [
                "dataset.train_file=mine.csv",
                "model.dropout=0.2",
                "model.pooling=cls",
                "text.sequence_length=64",
                "model.fine_tune=head",
                "model.pretrained_layers=3",
            ],
            "all_minilm_l6_v2",
            "names no other starting weights",
        ),
        (
            [
                "dataset.train_file=mine.csv",
                "model.pretrained=auto",
                "model.pretrained_embeddings=null",
            ],
            "all_minilm_l6_v2",
            "names no other starting weights",
        ),
        # The value a checkpoint needs is no sign of our own vectorizer.
        (
            ["dataset.train_file=mine.csv", "text.stop_words=none"],
            "all_minilm_l6_v2",
            "names no other starting weights",
        ),
    ],
)
def test_pretrained_auto_resolves_by_what_the_config_names(overrides, expected, named, tmp_path):
    notes = {}
    config = load_config(None, overrides, notes)
    assert config.model.pretrained == expected
    [note] = notes.values()
    assert note.startswith(f"model.pretrained: auto -> {expected or 'null'}") and named in note
    # How to choose the other way, in the same line.
    other = "model.pretrained: null" if expected else "model.pretrained: all_minilm_l6_v2"
    assert other in note and "\n" not in note
    # The run folder keeps the resolved value: its config.yaml reloads to the same Config.
    saved = tmp_path / "config.yaml"
    saved.write_text(dump_config(config))
    assert load_config(saved) == config


@pytest.mark.parametrize("written", ["null", "all_minilm_l6_v2", "/some/folder"])
def test_a_pretrained_value_the_config_gives_is_kept_and_not_noted(written):
    notes = {}
    config = load_config(
        None,
        ["dataset.train_file=mine.csv", "model.num_layers=2", f"model.pretrained={written}"],
        notes,
    )
    assert config.model.pretrained == (None if written == "null" else written) and not notes


def test_builtin_recipes_say_null_or_their_schedule_and_base_fields_count(tmp_path):
    configs = Path(__file__).resolve().parents[2] / "configs"
    for path in configs.glob("*.yaml"):
        text = path.read_text()
        config = load_config(path)
        if "minilm" not in path.stem and path.stem != "default":
            assert "\n  pretrained: null" in text, path.name
            assert config.model.pretrained is None
        else:  # A checkpoint recipe sets what `auto` would choose: its results stay put.
            training = config.training
            assert "auto" not in (
                training.epochs,
                training.learning_rate,
                training.early_stopping_patience,
            ), path.name
            assert config.model.pretrained == "all_minilm_l6_v2", path.name
    # A file whose base names the encoder inherits that: auto -> null.
    child = tmp_path / "child.yaml"
    child.write_text(f"base: {configs / 'tiny.yaml'}\nmodel:\n  pretrained: auto\n")
    notes = {}
    assert load_config(child, (), notes).model.pretrained is None
    assert "model.d_model" in notes["model.pretrained"]


def test_clashes_under_auto_name_the_field_the_user_set():
    # The checkpoint only a frozen encoder needs is off when the encoder is named.
    with pytest.raises(ConfigError, match=r"^model\.fine_tune: head freezes"):
        load_config(
            None, ["dataset.train_file=mine.csv", "model.fine_tune=head", "model.d_model=32"]
        )
    with pytest.raises(ConfigError, match=r"^model\.pretrained_layers: only with"):
        load_config(
            None,
            ["dataset.train_file=mine.csv", "model.pretrained_layers=3", "model.init_from=runs/p"],
        )


def test_auto_keeps_five_blocks_unless_pretrained_layers_is_written_even_as_null():
    def layers(*overrides):
        config = load_config(None, ["dataset.train_file=mine.csv", *overrides])
        return config.model.pretrained_layers

    assert (
        layers(),
        layers("model.pretrained_layers=2"),
        layers("model.pretrained_layers=null"),
    ) == (5, 2, None)
    # Written by hand, the checkpoint keeps every block unless told otherwise.
    assert layers("model.pretrained=all_minilm_l6_v2") is None


def test_a_model_config_built_in_code_treats_auto_as_no_checkpoint_yet():
    assert ModelConfig(init_from="runs/p").init_from == "runs/p"
    with pytest.raises(ConfigError, match=r"^model\.fine_tune: head freezes"):
        ModelConfig(fine_tune="head")
