"""What the config tests share: a config file written from text, and the one-line error of
loading a config."""

import pytest

from config import ConfigError
from config.files import load_config


def write(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def error_of(path=None, overrides=()):
    with pytest.raises(ConfigError) as info:
        load_config(path, list(overrides))
    message = str(info.value)
    assert "\n" not in message
    return message
