"""Config values as text: `--set section.field=value` overrides parsed as each field's
type, YAML config files read (with `base:`) and the resolved config written back as YAML
under each field's comment. The sections and their type checks are `config/typed.py`'s;
`config/files.py` applies both to the schema.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import yaml

from config.typed import (
    ConfigError,
    Section,
    check_type,
    choice_mapping,
    expected_type,
    field_types,
    is_section,
)

# What `--set key=null` may also be spelled as, for fields that can be null.
NULL_WORDS = ("null", "none", "~")


def _parse_value(key: str, raw: str, annotation: Any) -> Any:
    """The text after `=` in `--set key=value`, parsed as the field's type."""
    if is_section(annotation):  # `--set "model.fine_tune={kind: lora, rank: 4}"`
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = None
        # As a mapping, checked once the config is whole: a later
        # `--set model.fine_tune.rank=4` may add to it.
        return choice_mapping(key, value, written=raw)
    bases, optional = field_types(annotation)
    text = raw.strip()
    if optional and text.lower() in NULL_WORDS:
        return None
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    if text.startswith("[") and list[str] in bases:  # A list before a string that reads "[".
        bases = (list[str], *(base for base in bases if base != list[str]))
    for base in bases:
        if base == list[str]:
            # `--set dataset.labels=[neg, pos]` is written as YAML's flow list.
            try:
                return check_type(key, yaml.safe_load(text), annotation)
            except yaml.YAMLError:
                continue
        try:
            return words[text.lower()] if base is bool else base(text)
        except (KeyError, ValueError):
            continue
    raise ConfigError(f"{key}: expected {expected_type(annotation)}, got {raw!r}")


def _section(sections: dict[str, type[Section]], name: str) -> type[Section]:
    if name not in sections:
        raise ConfigError(f"{name}: unknown section (known: {', '.join(sections)})")
    return sections[name]


def parse_overrides(
    sections: dict[str, type[Section]], overrides: list[str] | tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Parses ['model.num_layers=4', ...] into {'model': {'num_layers': 4}}, typed."""
    parsed: dict[str, dict[str, Any]] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"{key}: overrides look like section.field=value, got {item!r}")
        parts = key.split(".")
        if len(parts) not in (2, 3) or not all(parts):
            raise ConfigError(
                f"{key}: keys look like section.field (sections: {', '.join(sections)})"
            )
        annotation = _section(sections, parts[0]).field_type(parts[1])
        if len(parts) == 3:  # `--set model.fine_tune.rank=4`: one field of a nested choice
            if not is_section(annotation):
                raise ConfigError(
                    f"{key}: {parts[0]}.{parts[1]} has no fields; set {parts[0]}.{parts[1]}=VALUE"
                )
            inner = parsed.setdefault(parts[0], {}).setdefault(parts[1], {})  # always a dict
            inner[parts[2]] = _parse_value(key, raw, annotation.field_type(parts[2]))
            continue
        parsed.setdefault(parts[0], {})[parts[1]] = _parse_value(key, raw, annotation)
    return parsed


def merged(values: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """`values` with `fields` replacing its fields one by one; a nested choice given as
    a mapping of some of its fields (`--set model.fine_tune.rank=4`) keeps the others.

    Example:
    >>> merged({"fine_tune": {"kind": "lora", "rank": 8}, "d_model": 64},
    ...        {"fine_tune": {"rank": 4}})
    {'fine_tune': {'kind': 'lora', 'rank': 4}, 'd_model': 64}
    """
    result = dict(values)
    for name, value in fields.items():
        earlier = result.get(name)
        if isinstance(value, dict) and isinstance(earlier, str | dict) and "kind" not in value:
            value = {**choice_mapping(name, earlier), **value}
        result[name] = value
    return result


BASE_KEY = "base"


def read_yaml(
    sections: dict[str, type[Section]], path: str | Path, _seen: tuple[Path, ...] = ()
) -> dict[str, dict[str, Any]]:
    """{'section': {'field': value}} from a YAML file; unknown sections or keys are errors.

    A top-level `base: OTHER.yaml` (relative to the file) reads that file first; this
    file's fields then replace its fields one by one, so a recipe is written once and a
    variant holds only what differs.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config file ({error.strerror})") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        raise ConfigError(
            f"{path}:{f' line {where.line + 1}' if where else ''} is not valid YAML"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections ({', '.join(sections)})")
    values: dict[str, dict[str, Any]] = {}
    if BASE_KEY in data:
        base = path.parent / str(data.pop(BASE_KEY))
        if base.resolve() in _seen + (path.resolve(),):
            raise ConfigError(f"{path}: base: {base} includes itself")
        values = read_yaml(sections, base, _seen + (path.resolve(),))
    for name, fields in data.items():
        section = _section(sections, name)
        if fields is not None and not isinstance(fields, dict):
            raise ConfigError(f"{name}: expected a mapping of fields, got {fields!r}")
        for field_name in fields or {}:
            section.field_type(field_name)
        values[name] = merged(values.get(name, {}), fields or {})
    return values


def commented_yaml(sections: dict[str, type[Section]], config: Any) -> str:
    """`config` (an object with one attribute per section) as YAML, each field under the
    comment its schema has above it."""
    lines = []
    for name, section in sections.items():
        comments, starts = section.field_comments(), section.comment_starts()
        lines.append(f"{name}:")
        for key, value in getattr(config, name).__dict__.items():
            if key in starts:
                lines += textwrap.wrap(
                    comments[key], 88, initial_indent="  # ", subsequent_indent="  # "
                )
            if dataclasses.is_dataclass(value):  # A choice: its kind and the fields it set.
                value = {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
            if isinstance(value, list | dict):  # Flow style: a block one would lose its indent.
                value = yaml.safe_dump(
                    value, width=1000, default_flow_style=True, sort_keys=False
                ).strip()
                lines.append(f"  {key}: {value}")
            else:
                lines.append("  " + yaml.safe_dump({key: value}, width=1000).strip())
    return "\n".join(lines) + "\n"
