"""upgrade_run.py: run folders of earlier versions refused in one line by the loaders, then
rewritten in place; the results load and predict as before, and a second run changes
nothing."""

import json
import shutil

import h5py
import numpy as np
import pytest
import tensorflow as tf
import yaml

import train
import upgrade_run
from config import ConfigError
from config.files import load_config
from engine.training.starting_weights import starting_weights
from inspection.attention_file.reader import OutdatedExportError, load_attention, save_attention
from inspection.attention_file.record import AttentionRecord
from run_folder import runs, saved_run
from tests.helpers import ROOT, TINY
from tests.review_fixture import write_reviews_fixture

FIXTURES = ROOT / "tests" / "fixtures"
OLD_MODEL = FIXTURES / "saved_before_move"
OLD_PRETRAINING = FIXTURES / "pretrained_before_one_class"


def command(run_dir):
    return f"rewrite the run with: python upgrade_run.py {run_dir}"


@pytest.fixture
def old_run(tmp_path):
    """A classifier run of before 2026-12: the old model.keras, a config.yaml with a key
    model.fine_tune replaced, labels, and an attention export of format version 1."""
    run_dir = tmp_path / "old"
    shutil.copytree(OLD_MODEL, run_dir)
    values = yaml.safe_load((OLD_PRETRAINING / "config.yaml").read_text())
    values["model"].update(freeze_pretrained=False, trainable_blocks=None)  # the old defaults
    (run_dir / "config.yaml").write_text(yaml.safe_dump(values, sort_keys=False))
    (run_dir / "labels.json").write_text(json.dumps(["negative", "positive"]))
    export = run_dir / "attention" / "validation"
    record = AttentionRecord(
        example_id="0",
        text="good film",
        tokens=["[CLS]", "good", "film"],
        attention_scores=np.full((2, 3, 3, 3), 1 / 3, "float32"),
        probabilities=np.array([0.3, 0.7], "float32"),
        predicted_label_index=1,
        true_label_index=1,
        word_index=[None, 0, 1],
    )
    save_attention(export, [record], ["negative", "positive"], pooling="cls")
    # As version 1 wrote it: no words, no attribution methods, no kept heads.
    [row] = [json.loads(line) for line in (export / "manifest.jsonl").read_text().splitlines()]
    dropped = (
        "word_index",
        "special",
        "words",
        "word_importance",
        "attributions",
        "word_attributions",
        "attribution_methods",
        "attribution_seconds_per_example",
        "faithfulness",
        "kept_heads",
    )
    (export / "manifest.jsonl").write_text(
        json.dumps({key: value for key, value in row.items() if key not in dropped}) + "\n"
    )
    meta = json.loads((export / "meta.json").read_text())
    (export / "meta.json").write_text(
        json.dumps(
            {
                **{key: value for key, value in meta.items() if key not in dropped},
                "format_version": 1,
            }
        )
    )
    return run_dir


def test_an_old_classifier_run_is_refused_then_rewritten_once(old_run, capsys):
    with pytest.raises(runs.RunError) as error:
        saved_run.load_run(old_run)
    assert str(error.value) == (
        f"{old_run / 'config.yaml'} was saved by an earlier version of this project "
        f"(model.freeze_pretrained: replaced by model.fine_tune: head); {command(old_run)}"
    )
    with pytest.raises(OutdatedExportError, match=f"format_version=1\\); {command(old_run)}"):
        load_attention(old_run / "attention" / "validation")

    assert upgrade_run.main([str(old_run)]) == 0
    assert capsys.readouterr().out == (
        f"{old_run}: rewrote config.yaml (model.fine_tune), model.keras, "
        "attention/validation (format_version 1)\n"
    )
    config = load_config(old_run / "config.yaml")
    assert config.model.fine_tune.kind == "full"
    assert config.model.d_model == 16  # the other keys as they were
    run = saved_run.load_run(old_run)
    expected = json.loads((OLD_MODEL / "expected.json").read_text())
    np.testing.assert_allclose(
        np.asarray(run.model(np.array(expected["texts"]), training=False)),
        expected["probabilities"],
        atol=1e-5,
    )
    with load_attention(old_run / "attention" / "validation") as export:
        assert export.format_version == 4 and export.attribution_methods == ["rollout"]
        assert export.record("0").words == ["good", "film"]
        assert export.kept_heads == [[0, 1, 2], [0, 1, 2]]

    files = {path: path.read_bytes() for path in old_run.rglob("*") if path.is_file()}
    assert upgrade_run.main([str(old_run)]) == 0
    assert capsys.readouterr().out == f"{old_run}: already up to date\n"
    assert {path: path.read_bytes() for path in old_run.rglob("*") if path.is_file()} == files


def test_the_old_model_alone_is_refused_in_one_line(old_run):
    from models import OutdatedFileError, load_end_to_end_model

    path = old_run / "model.keras"
    with pytest.raises(OutdatedFileError) as error:
        load_end_to_end_model(path)
    assert str(error.value) == (
        f"{path} was saved by an earlier version of this project; {command(old_run)}"
    )


def test_an_old_pretraining_run_starts_a_classifier_once_rewritten(tmp_path, capsys):
    old_run = tmp_path / "pretrained"
    shutil.copytree(OLD_PRETRAINING, old_run)
    data_file = write_reviews_fixture(tmp_path / "reviews.csv")
    overrides = [
        "dataset.name=null",
        f"dataset.train_file={data_file}",
        f"output.root={tmp_path}",
        f"model.init_from={old_run}",
        "model.num_layers=2",
    ]
    config = load_config(TINY, overrides)
    with pytest.raises(ConfigError) as error:
        starting_weights(config)
    assert str(error.value) == (
        f"model.init_from: {old_run / 'config.yaml'} was saved by an earlier version of this "
        "project (model.freeze_pretrained: replaced by model.fine_tune: head); "
        f"{command(old_run)}"
    )
    values = yaml.safe_load((old_run / "config.yaml").read_text())
    del values["model"]["freeze_pretrained"]  # the config alone rewritten: the weights next
    (old_run / "config.yaml").write_text(yaml.safe_dump(values, sort_keys=False))
    weights = starting_weights(config)
    data, _, steps = train.load_data(config, weights)
    with pytest.raises(ConfigError) as error:
        train.build_model(config, data, tf.distribute.get_strategy(), steps, weights)
    assert str(error.value) == (
        f"model.init_from: {old_run / 'encoder.weights.h5'} was saved by an earlier version "
        f"of this project; {command(old_run)}"
    )

    shutil.copy(OLD_PRETRAINING / "config.yaml", old_run / "config.yaml")
    capsys.readouterr()
    assert upgrade_run.main([str(old_run)]) == 0
    assert capsys.readouterr().out == (
        f"{old_run}: rewrote config.yaml (model.fine_tune), encoder.weights.h5\n"
    )
    assert "freeze_pretrained" not in (old_run / "config.yaml").read_text()
    weights = starting_weights(config)
    data, _, steps = train.load_data(config, weights)
    classifier, _ = train.build_model(config, data, tf.distribute.get_strategy(), steps, weights)
    encoder = classifier.encoder
    # Keras keyed the old file by the functional graph's layers, and each attention layer
    # held its 8 weights itself: the same values now start the classifier's encoder.
    with h5py.File(OLD_PRETRAINING / "encoder.weights.h5") as saved:
        layers = saved["layers"]
        pairs = [
            (
                encoder.embedding.token_embedding.embeddings,
                layers["token_and_position_embedding/token_embedding/vars/0"],
            ),
            (
                encoder.blocks[0].self_attention.query_dense.kernel,
                layers["transformer_encoder_block/self_attention/vars/0"],
            ),
            (
                encoder.blocks[1].feed_forward.output_dense.kernel,
                layers["transformer_encoder_block_1/feed_forward/output_dense/vars/0"],
            ),
            (encoder.final_norm.gamma, layers["layer_normalization/vars/0"]),
        ]
        for variable, value in pairs:
            np.testing.assert_array_equal(np.asarray(variable), value[()])
    capsys.readouterr()
    assert upgrade_run.main([str(old_run)]) == 0
    assert capsys.readouterr().out == f"{old_run}: already up to date\n"


@pytest.mark.parametrize(
    "old, new",
    [
        ({"freeze_pretrained": True}, "head"),
        ({"trainable_blocks": 0, "freeze_pretrained": False}, "head"),  # 0: the head only
        ({"trainable_blocks": 2, "freeze_pretrained": False}, {"kind": "top_blocks", "blocks": 2}),
        (
            {"lora_rank": 4, "lora_targets": ["query", "key"], "trainable_blocks": None},
            {"kind": "lora", "rank": 4, "targets": ["query", "key"]},
        ),
    ],
)
def test_each_replaced_key_is_written_as_fine_tune(old, new):
    assert upgrade_run.upgraded_model_section({"d_model": 16, **old}) == {
        "d_model": 16,
        "fine_tune": new,
    }


def test_a_missing_folder_is_one_line(tmp_path, capsys):
    assert upgrade_run.main([str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == (
        f"upgrade_run.py: error: {tmp_path / 'nothing'}: no such folder\n"
    )
    assert upgrade_run.main([str(tmp_path)]) == 2
    assert "no config.yaml: not a run folder" in capsys.readouterr().err
