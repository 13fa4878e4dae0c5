"""Rewrites run folders saved by earlier versions of this project in today's formats.

Usage:
    python upgrade_run.py runs/old_run [runs/other_run ...]

The loaders refuse such files in one line that names this command. It rewrites, each file
replaced in one step (a crash leaves the old file, never half a new one):

    config.yaml         model.freeze_pretrained, trainable_blocks, lora_rank and lora_targets
                        as the one model.fine_tune (false and null ones dropped)
    model.keras         a functional classifier of before 2026-12, or attention weights of
                        before the projections were sublayers: today's TransformerClassifier
                        end-to-end model, with the same predictions (models/upgrade.py)
    encoder.weights.h5  a pretrain.py run's encoder of those layouts, in today's
    attention/*/        exports of an older format version (inspection/attention_file/upgrade.py)

It prints what it rewrote in each run, or "already up to date"; running it twice is harmless.

Exit codes: 0 done, 2 a missing folder or a file that cannot be read or rewritten.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

from config import ModelConfig
from config.files import load_config
from engine import cli
from run_folder import runs

# Keras, models, inspection and the masked language model load TensorFlow, which takes seconds: the
# functions import them, so that `main` reports a bad argument at once, before that wait.


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="upgrade_run.py", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", metavar="RUN", help="a run folder to rewrite")
    return parser.parse_args(argv)


def upgraded_model_section(model):
    """The `model` section (a dict read from an old config.yaml) with the keys that
    model.fine_tune replaced written as it; None when it holds none of them.

    Example:
    >>> upgraded_model_section({"d_model": 16, "lora_rank": 4, "freeze_pretrained": False})
    {'d_model': 16, 'fine_tune': {'kind': 'lora', 'rank': 4}}
    >>> upgraded_model_section({"trainable_blocks": 2})
    {'fine_tune': {'kind': 'top_blocks', 'blocks': 2}}
    >>> upgraded_model_section({"freeze_pretrained": True, "trainable_blocks": None})
    {'fine_tune': 'head'}
    >>> upgraded_model_section({"trainable_blocks": 0})  # 0 trained the head only
    {'fine_tune': 'head'}
    >>> upgraded_model_section({"d_model": 16}) is None
    True
    """
    old = {key: model[key] for key in ModelConfig.replaced_keys if key in model}
    if not old:
        return None
    model = {key: value for key, value in model.items() if key not in old}
    if old.get("lora_rank"):
        fine_tune = {"kind": "lora", "rank": old["lora_rank"]}
        if old.get("lora_targets"):
            fine_tune["targets"] = list(old["lora_targets"])
    elif old.get("trainable_blocks"):
        fine_tune = {"kind": "top_blocks", "blocks": old["trainable_blocks"]}
    elif old.get("freeze_pretrained") or old.get("trainable_blocks") == 0:  # the head only
        fine_tune = "head"
    else:
        return model
    return {**model, "fine_tune": fine_tune}


def upgrade_config(run_dir):
    path = run_dir / runs.CONFIG_FILE
    values = yaml.safe_load(path.read_text()) or {}
    model = upgraded_model_section(values.get("model") or {})
    if model is None:
        return []
    values["model"] = model
    with runs.staged_file(path) as staged:
        staged.write_text(yaml.safe_dump(values, sort_keys=False))
        load_config(staged)  # today's loader reads it, or the old file stays
    return [f"{runs.CONFIG_FILE} (model.fine_tune)"]


def upgrade_model(run_dir):
    import keras

    from models import TrimPadding, build_end_to_end_model
    from models.upgrade import (
        is_old_functional_classifier,
        is_old_model_file,
        upgraded_classifier,
        upgraded_weights_copy,
    )

    path = run_dir / runs.MODEL_FILE
    if not path.is_file():
        return []
    with tempfile.TemporaryDirectory() as folder:
        moved = upgraded_weights_copy(path, folder) if is_old_model_file(path) else None
        model = keras.saving.load_model(moved or path, safe_mode=True)
    if is_old_functional_classifier(model):
        trim_padding = any(isinstance(layer, TrimPadding) for layer in model.layers)
        model = build_end_to_end_model(
            model.layers[1],
            upgraded_classifier(model.layers[-1]),
            name=model.name,
            trim_padding=trim_padding,
        )
    elif moved is None:
        return []
    with runs.staged_file(path) as staged:
        model.save(staged)
    return [runs.MODEL_FILE]


def upgrade_encoder(run_dir):
    from engine.training.masked_language_model import (
        build_masked_language_model,
        load_old_encoder_weights,
    )
    from models.upgrade import is_old_encoder_file, upgraded_weights_copy

    path = run_dir / runs.ENCODER_WEIGHTS
    if not path.is_file() or not is_old_encoder_file(path):
        return []
    config = load_config(run_dir / runs.CONFIG_FILE)
    vocabulary = json.loads((run_dir / runs.VOCABULARY_FILE).read_text())
    encoder = build_masked_language_model(
        config.model, len(vocabulary) + 1, config.text.sequence_length
    )
    with tempfile.TemporaryDirectory() as folder:
        weights = upgraded_weights_copy(path, folder) or path
        try:
            encoder.load_weights(weights)
        except ValueError:  # keyed by the functional graph of before the classifier class
            load_old_encoder_weights(encoder, weights)
    with runs.staged_file(path) as staged:
        encoder.save_weights(staged)
    return [runs.ENCODER_WEIGHTS]


def upgrade_exports(run_dir):
    from inspection.attention_file.format import MANIFEST_FILENAME, META_FILENAME
    from inspection.attention_file.upgrade import upgraded_export

    rewritten = []
    for meta_path in sorted((run_dir / runs.ATTENTION_DIR).glob(f"*/{META_FILENAME}")):
        meta = json.loads(meta_path.read_text())
        manifest_path = meta_path.parent / MANIFEST_FILENAME
        rows = [json.loads(line) for line in manifest_path.read_text().splitlines() if line]
        upgraded = upgraded_export(meta, rows)
        if upgraded is None:
            continue
        new_meta, new_rows = upgraded
        with runs.staged_file(manifest_path) as staged:
            staged.write_text("".join(json.dumps(row) + "\n" for row in new_rows))
        runs.write_json(meta_path, new_meta)  # last: until it is written, the export is old
        rewritten.append(
            f"{meta_path.parent.relative_to(run_dir)} (format_version {meta['format_version']})"
        )
    return rewritten


def upgrade_run(run_dir):
    """Rewrites what is old in `run_dir`; returns the names of what it rewrote."""
    # The config first: the encoder's is built from it.
    return (
        upgrade_config(run_dir)
        + upgrade_model(run_dir)
        + upgrade_encoder(run_dir)
        + upgrade_exports(run_dir)
    )


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("upgrade_run.py")
    run_dirs = [Path(run_dir) for run_dir in args.run_dirs]
    for run_dir in run_dirs:
        if not (run_dir / runs.CONFIG_FILE).is_file():
            what = "no config.yaml: not a run folder" if run_dir.is_dir() else "no such folder"
            return fail(f"{run_dir}: {what}")
    cli.start_tensorflow()
    for run_dir in run_dirs:
        try:
            rewritten = upgrade_run(run_dir)
        except (OSError, ValueError, KeyError) as error:
            reason = (str(error).strip().splitlines() or [""])[0][:200]
            return fail(f"{run_dir}: cannot be rewritten ({type(error).__name__}: {reason})")
        print(
            f"{run_dir}: rewrote {', '.join(rewritten)}"
            if rewritten
            else f"{run_dir}: already up to date"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
