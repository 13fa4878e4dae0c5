"""The machinery under `config/schema.py`'s schema: typed, self-checking sections. Reading
them from YAML and `--set`, and writing them back, is `config/yaml_and_overrides.py`'s.

A section is a frozen dataclass deriving from `Section`; a field declared with `option`
carries its check or its choices, and every check runs when the section is built, whoever
builds it (a config file, an override, the data layer from a plain mapping). Values are
typed strictly: `epochs: true` is not 1, `d_model: '64'` is not 64. No TensorFlow here.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import types
import typing
from typing import Any, ClassVar

_TYPE_WORDS = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    list[str]: "a list of strings",
}

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
    return (
        f"{path} was saved by an earlier version of this project{detail}; rewrite the "
        f"run with: python upgrade_run.py {run_dir}"
    )


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
                value = check_type(key, value, annotation)
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
            name: check_type(f"{cls.section}.{name}", value, cls.field_type(name))
            for name, value in values.items()
        })  # fmt: skip


def is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Section)


def field_types(annotation: Any) -> tuple[tuple[type, ...], bool]:
    """(the field's types, in the order a `--set` value is tried; whether it may be null)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        arguments = typing.get_args(annotation)
        return tuple(a for a in arguments if a is not type(None)), type(None) in arguments
    return (annotation,), False


def expected_type(annotation: Any) -> str:
    if is_section(annotation):
        return "a mapping or a kind"
    bases, optional = field_types(annotation)
    return " or ".join([_TYPE_WORDS[base] for base in bases] + ["null"] * optional)


def choice_mapping(key: str, value: Any, written: Any = None) -> dict:
    """A choice (a Section field) written as its kind or as a mapping, as a mapping."""
    if isinstance(value, str):
        return {"kind": value}
    if not isinstance(value, dict):
        shown = value if written is None else written
        raise ConfigError(f"{key}: expected a mapping such as {{kind: ...}}, got {shown!r}")
    return value


def check_type(key: str, value: Any, annotation: Any) -> Any:
    """`value` as the field's type (an int is a fine float), or a ConfigError naming `key`."""
    if is_section(annotation):
        return (
            value
            if isinstance(value, annotation)
            else annotation.from_mapping(choice_mapping(key, value))
        )
    bases, optional = field_types(annotation)
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
    if not any(
        isinstance(value, base) and isinstance(value, bool) == (base is bool)
        for base in bases
        if base != list[str]
    ):
        raise ConfigError(
            f"{key}: expected {expected_type(annotation)}, got {value!r} ({type(value).__name__})"
        )
    return value
