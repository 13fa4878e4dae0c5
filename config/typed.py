"""The machinery under `config/schema.py`'s schema: typed, self-checking sections from YAML
and `--set`.

A section is a frozen dataclass deriving from `Section`; a field declared with `option`
carries its check or its choices, and every check runs when the section is built, whoever
builds it (a config file, an override, the data layer from a plain mapping). Values are
typed strictly: `epochs: true` is not 1, `d_model: '64'` is not 64. No TensorFlow here.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, ClassVar

import yaml

# What `--set key=null` may also be spelled as, for fields that can be null.
NULL_WORDS = ("null", "none", "~")
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
               list[str]: "a list of strings"}

# Value checks a field can carry: (test, what the message says). None always passes.
POSITIVE = (lambda value: value > 0 and math.isfinite(value), "must be positive")
NOT_NEGATIVE = (lambda value: value >= 0, "must not be negative")
RATE = (lambda value: 0.0 <= value < 1.0, "must be in [0, 1)")
FRACTION = (lambda value: 0.0 < value < 1.0, "must be in (0, 1)")


class ConfigError(ValueError):
    """A user error in a config file, override or section; one line that names the key."""


class ReplacedKeyError(ConfigError):
    """A key of an earlier version (`Section.replaced_keys`): `upgrade_run.py` rewrites a run
    folder's config.yaml that holds one."""


def earlier_version_message(path, run_dir, detail: object = "") -> str:
    """The one line for a file of an earlier version of this project: the command that
    rewrites its run folder (upgrade_run.py).

    Example:
    >>> print(earlier_version_message("runs/x/model.keras", "runs/x"))  # doctest: +ELLIPSIS
    runs/x/model.keras was saved by an earlier version ...: python upgrade_run.py runs/x
    """
    detail = f" ({detail})" if detail else ""
    return (f"{path} was saved by an earlier version of this project{detail}; rewrite the "
            f"run with: python upgrade_run.py {run_dir}")


def fail(key: str, message: str, value: Any):
    raise ConfigError(f"{key}: {message}, got {value!r}")


def option(default, check=None, choices=None):
    """A field with its default and, in its metadata, the check or choices it must pass."""
    return dataclasses.field(default=default, metadata={"check": check, "choices": choices})


class Section:
    """A config section: each field checks itself when built, then `check_together` runs.

    A field may itself be a Section (an either/or choice held as one field, such as
    `model.fine_tune: {kind: lora, rank: 8}`): it is written as a mapping, or as a bare
    string that stands for `{kind: string}`.
    """

    section: ClassVar[str]
    # Keys of earlier versions: {old key: the message that names what replaced it}.
    replaced_keys: ClassVar[dict[str, str]] = {}

    def __post_init__(self):
        for item in dataclasses.fields(self):
            key, value = f"{self.section}.{item.name}", getattr(self, item.name)
            annotation = self.field_type(item.name) if isinstance(value, str | dict) else None
            if is_section(annotation):
                # A choice given as its kind or a mapping (`ModelConfig(fine_tune="head")`).
                value = _check_type(key, value, annotation)
                object.__setattr__(self, item.name, value)
            choices, value_check = item.metadata.get("choices"), item.metadata.get("check")
            if value is not None and choices and value not in choices:
                fail(key, f"must be one of {', '.join(choices)}", value)
            if value is not None and value_check and not value_check[0](value):
                fail(key, value_check[1], value)
        self.check_together()

    def check_together(self) -> None:
        """Checks that involve several fields."""

    @classmethod
    def field_type(cls, name: str) -> Any:
        """The annotation of field `name`; an unknown name is a ConfigError naming the key."""
        known = [item.name for item in dataclasses.fields(cls)]
        if name in cls.replaced_keys:
            raise ReplacedKeyError(f"{cls.section}.{name}: {cls.replaced_keys[name]}")
        if name not in known:
            raise ConfigError(f"{cls.section}.{name}: unknown key (known: {', '.join(known)})")
        return typing.get_type_hints(cls)[name]

    @classmethod
    def field_comments(cls) -> dict[str, str]:
        """{field: the comment written above it in the class}, the schema's documentation.

        A comment covers the fields under it up to the next comment; `comment_starts`
        tells which field each comment is written above.
        """
        comments, pending, current = {}, [], ""
        for line in inspect.getsource(cls).splitlines()[1:]:
            stripped = line.strip()
            if stripped.startswith("#"):
                pending.append(stripped.lstrip("#").strip())
                continue
            name = stripped.split(":", 1)[0]
            if name.isidentifier() and ":" in stripped and not stripped.startswith("def "):
                if pending:
                    current, pending = " ".join(pending), []
                comments[name] = current
        known = {item.name for item in dataclasses.fields(cls)}
        return {name: text for name, text in comments.items() if name in known}

    @classmethod
    def comment_starts(cls) -> set[str]:
        """The fields a comment is written above (the first of those it covers)."""
        comments, previous, starts = cls.field_comments(), None, set()
        for item in dataclasses.fields(cls):
            if comments.get(item.name) and comments[item.name] != previous:
                starts.add(item.name)
            previous = comments.get(item.name)
        return starts

    @classmethod
    def of(cls, values):
        """`values` itself if it is this section, else the section from that mapping."""
        return values if isinstance(values, cls) else cls.from_mapping(values)

    @classmethod
    def from_mapping(cls, values: dict[str, Any]):
        """The section from {'field': value}; unknown keys and wrong types are ConfigErrors."""
        return cls(**{
            name: _check_type(f"{cls.section}.{name}", value, cls.field_type(name))
            for name, value in values.items()
        })  # fmt: skip


def is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Section)


def _types(annotation: Any) -> tuple[tuple[type, ...], bool]:
    """(the field's types, in the order a `--set` value is tried; whether it may be null)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        arguments = typing.get_args(annotation)
        return tuple(a for a in arguments if a is not type(None)), type(None) in arguments
    return (annotation,), False


def expected_type(annotation: Any) -> str:
    if is_section(annotation):
        return "a mapping or a kind"
    bases, optional = _types(annotation)
    return " or ".join([_TYPE_WORDS[base] for base in bases] + ["null"] * optional)


def _choice_mapping(key: str, value: Any, written: Any = None) -> dict:
    """A choice (a Section field) written as its kind or as a mapping, as a mapping."""
    if isinstance(value, str):
        return {"kind": value}
    if not isinstance(value, dict):
        shown = value if written is None else written
        raise ConfigError(f"{key}: expected a mapping such as {{kind: ...}}, got {shown!r}")
    return value


def _check_type(key: str, value: Any, annotation: Any) -> Any:
    """`value` as the field's type (an int is a fine float), or a ConfigError naming `key`."""
    if is_section(annotation):
        return value if isinstance(value, annotation) else annotation.from_mapping(
            _choice_mapping(key, value))
    bases, optional = _types(annotation)
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{key}: must not be null (expected {expected_type(annotation)})")
    if float in bases and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if list[str] in bases and isinstance(value, list | tuple):
        # YAML reads `[0, 1]` as numbers; as labels or names they mean the strings.
        if all(isinstance(item, str | int) and not isinstance(item, bool) for item in value):
            return [str(item) for item in value]
        raise ConfigError(f"{key}: expected {expected_type(annotation)}, got {value!r}")
    # bool is a subclass of int: `epochs: true` must not pass as 1.
    if not any(isinstance(value, base) and isinstance(value, bool) == (base is bool)
               for base in bases if base != list[str]):
        raise ConfigError(f"{key}: expected {expected_type(annotation)}, got {value!r} "
                          f"({type(value).__name__})")
    return value


def _parse_value(key: str, raw: str, annotation: Any) -> Any:
    """The text after `=` in `--set key=value`, parsed as the field's type."""
    if is_section(annotation):  # `--set "model.fine_tune={kind: lora, rank: 4}"`
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = None
        # As a mapping, checked once the config is whole: a later
        # `--set model.fine_tune.rank=4` may add to it.
        return _choice_mapping(key, value, written=raw)
    bases, optional = _types(annotation)
    text = raw.strip()
    if optional and text.lower() in NULL_WORDS:
        return None
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    for base in bases:
        if base == list[str]:
            # `--set dataset.labels=[neg, pos]` is written as YAML's flow list.
            try:
                return _check_type(key, yaml.safe_load(text), annotation)
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


def parse_overrides(sections: dict[str, type[Section]],
                    overrides: list[str] | tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Parses ['model.num_layers=4', ...] into {'model': {'num_layers': 4}}, typed."""
    parsed: dict[str, dict[str, Any]] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"{key}: overrides look like section.field=value, got {item!r}")
        parts = key.split(".")
        if len(parts) not in (2, 3) or not all(parts):
            raise ConfigError(f"{key}: keys look like section.field (sections: "
                              f"{', '.join(sections)})")
        annotation = _section(sections, parts[0]).field_type(parts[1])
        if len(parts) == 3:  # `--set model.fine_tune.rank=4`: one field of a nested choice
            if not is_section(annotation):
                raise ConfigError(f"{key}: {parts[0]}.{parts[1]} has no fields; set "
                                  f"{parts[0]}.{parts[1]}=VALUE")
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
            value = {**_choice_mapping(name, earlier), **value}
        result[name] = value
    return result


BASE_KEY = "base"


def read_yaml(sections: dict[str, type[Section]], path: str | Path,
              _seen: tuple[Path, ...] = ()) -> dict[str, dict[str, Any]]:
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
        raise ConfigError(f"{path}:{f' line {where.line + 1}' if where else ''} is not valid "
                          "YAML") from None
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
                lines += textwrap.wrap(comments[key], 88, initial_indent="  # ",
                                       subsequent_indent="  # ")
            if dataclasses.is_dataclass(value):  # A choice: its kind and the fields it set.
                value = {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
            if isinstance(value, list | dict):  # Flow style: a block one would lose its indent.
                value = yaml.safe_dump(value, width=1000, default_flow_style=True,
                                       sort_keys=False).strip()
                lines.append(f"  {key}: {value}")
            else:
                lines.append("  " + yaml.safe_dump({key: value}, width=1000).strip())
    return "\n".join(lines) + "\n"
