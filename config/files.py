"""Config files: YAML over the schema's defaults (`config/schema.py`), `section.field=value`
overrides, the resolved config written back as YAML, and the schema's reference page.

Example:

>>> from config import ConfigError
>>> config = load_config(None, ["dataset.name=bbc_news", "model.num_layers=4", "training.epochs=3"])
>>> config.model.num_layers, config.training.epochs
(4, 3)
>>> try:
...     load_config(None, ["dataset.name=bbc_news", "model.num_heds=4"])
... except ConfigError as error:
...     print(str(error).split(" (")[0])
model.num_heds: unknown key
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml

from config import (
    AUTO_CHECKPOINT,
    AUTO_CHECKPOINT_LAYERS,
    DATASET_SOURCES,
    SECTIONS,
    Config,
    auto_pretrained,
    typed,
    yaml_and_overrides,
)

__all__ = ["commented_config", "dump_config", "field_reference", "load_config", "parse_overrides"]


def parse_overrides(overrides: list[str] | tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Parses ['model.num_layers=4', ...] into {'model': {'num_layers': 4}} with typed values."""
    return yaml_and_overrides.parse_overrides(SECTIONS, overrides)


def load_config(
    path: str | Path | None,
    overrides: list[str] | tuple[str, ...] = (),
    notes: dict[str, str] | None = None,
) -> Config:
    """Loads a YAML config over the defaults, applies `section.field=value` overrides, checks.

    Args:
        path: a YAML file holding only what differs from the defaults, or None.
        overrides: `section.field=value` strings; values are parsed as the field's type.
        notes: if given, receives {key: the line train.py prints} for each `auto` resolved
            here.

    Returns:
        A frozen `Config`. When `output.name` is unset it becomes the file's stem.
        `model.pretrained: auto` is resolved by what the files and overrides name
        (`config.auto_pretrained`): the Config holds a checkpoint or None.

    Raises:
        ConfigError: one line naming the offending key.
    """
    values = yaml_and_overrides.read_yaml(SECTIONS, path) if path is not None else {}
    parsed = parse_overrides(list(overrides))
    if set(parsed.get("dataset", {})) & set(DATASET_SOURCES):
        # An override naming a dataset source replaces the file's source, not adds to it.
        for key in DATASET_SOURCES:
            values.get("dataset", {}).pop(key, None)
    for section, fields in parsed.items():
        values[section] = yaml_and_overrides.merged(values.get(section, {}), fields)
    model = values.setdefault("model", {})
    if model.get("pretrained", "auto") == "auto":
        model["pretrained"], why = auto_pretrained(values)
        if model["pretrained"] == AUTO_CHECKPOINT and "pretrained_layers" not in model:
            model["pretrained_layers"] = AUTO_CHECKPOINT_LAYERS
        if notes is not None:
            notes["model.pretrained"] = pretrained_note(
                model["pretrained"], why, model.get("pretrained_layers")
            )
    sections = {
        section: cls.from_mapping(values.get(section, {})) for section, cls in SECTIONS.items()
    }
    training = sections["training"]
    if sections["dataset"].is_multi_label and training.monitor == "val_accuracy":
        # Multi-label data: the accuracy of a whole label set is too strict a guide.
        sections["training"] = dataclasses.replace(training, monitor="val_micro_f1")
    config = Config(**sections)
    if config.output.name is None:
        name = Path(path).stem if path is not None else "run"
        config = dataclasses.replace(config, output=dataclasses.replace(config.output, name=name))
    return config


def pretrained_note(value: str | None, why: str, layers: int | None = None) -> str:
    """The line train.py prints for `model.pretrained: auto`: what it chose and how to
    choose otherwise (`config.auto_pretrained`'s `why` says it for null)."""
    if value is None:
        return f"model.pretrained: auto -> null: {why}"
    blocks = f"its first {layers} blocks (model.pretrained_layers)" if layers else "every block"
    return (
        f"model.pretrained: auto -> {value} ({why}): fine-tuning {blocks}; "
        "model.pretrained: null trains from scratch instead"
    )


def dump_config(config: Config) -> str:
    """The resolved config as YAML that `load_config` reads back to an equal Config."""
    return yaml.safe_dump(config.to_dict(), sort_keys=False)


def commented_config(config: Config) -> str:
    """The resolved config as YAML with each field's comment from the schema above it
    (`train.py --print-config`); `load_config` reads it back to an equal Config."""
    return yaml_and_overrides.commented_yaml(SECTIONS, config)


def field_reference() -> str:
    """docs/config.md: every field of the schema with its type, default and comment."""
    return _reference(
        SECTIONS,
        intro=(
            "Generated from `config/schema.py` by `python -m config.files > docs/config.md` "
            "(a test checks "
            "that it is current). A config file holds only what differs from these defaults "
            "(`base: OTHER.yaml` starts from another file); `--set section.field=value` "
            "overrides a field; `train.py --config FILE --print-config` prints the resolved "
            "config with these comments."
        ),
    )


def _reference(sections: dict[str, type[typed.Section]], intro: str) -> str:
    """A Markdown reference of `sections`: per field its type, default and comment; a
    field that is itself a section (a choice) gets its own table after its section's."""
    lines = ["# Config reference", "", intro, ""]
    pending = list(sections.items())
    while pending:
        name, section = pending.pop(0)
        comments, starts, first = section.field_comments(), section.comment_starts(), None
        lines += [f"## `{name}`", "", "| field | type | default | meaning |", "|---|---|---|---|"]
        for item in dataclasses.fields(section):
            default = (
                item.default
                if item.default is not dataclasses.MISSING
                else (
                    item.default_factory()
                    if item.default_factory is not dataclasses.MISSING
                    else None
                )
            )
            default = dataclasses.asdict(default) if dataclasses.is_dataclass(default) else default
            annotation = section.field_type(item.name)
            if typed.is_section(annotation):
                pending.insert(0, (annotation.section, annotation))
            if item.name in starts:
                first, meaning = item.name, comments[item.name].replace("|", "\\|")
            else:
                meaning = f"see `{first}`" if comments.get(item.name) else ""
            lines.append(
                f"| `{item.name}` | {typed.expected_type(annotation)} | "
                f"`{json.dumps(default)}` | {meaning} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(field_reference(), end="")
