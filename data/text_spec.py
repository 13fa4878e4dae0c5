"""How text becomes token ids."""

import dataclasses
from collections.abc import Mapping
from typing import Any

from data.errors import DataError, spec_from_mapping

STANDARDIZE_CHOICES = ("lower_and_strip_punctuation", "lower", "strip_punctuation", None)


@dataclasses.dataclass(frozen=True)
class TextSpec:
    """Settings of the `keras.layers.TextVectorization` adapted on the train split.

    Example:
    >>> TextSpec(vocabulary_size=1000).sequence_length
    256
    """

    # Most frequent train tokens kept, counting the padding (0) and out-of-vocabulary (1) ids.
    vocabulary_size: int = 20000
    # Token ids per text: longer texts keep their first tokens, shorter ones are padded with 0.
    sequence_length: int = 256
    # A TextVectorization `standardize` string, or None (also spelled "none", for YAML
    # configs) to keep the text as it is.
    standardize: str | None = "lower_and_strip_punctuation"

    def __post_init__(self):
        if self.standardize == "none":
            object.__setattr__(self, "standardize", None)  # Frozen: set once, here.
        if self.standardize not in STANDARDIZE_CHOICES:
            raise DataError(
                f"text spec 'standardize' must be one of {STANDARDIZE_CHOICES}; "
                f"Received: standardize={self.standardize!r}"
            )
        if self.vocabulary_size < 3:
            raise DataError(
                f"text spec 'vocabulary_size' must be at least 3; "
                f"Received: vocabulary_size={self.vocabulary_size}"
            )
        if self.sequence_length < 1:
            raise DataError(
                f"text spec 'sequence_length' must be positive; "
                f"Received: sequence_length={self.sequence_length}"
            )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "TextSpec":
        """Builds a spec from a config mapping; unknown keys are errors that name the key."""
        return spec_from_mapping(cls, values, "text spec")
