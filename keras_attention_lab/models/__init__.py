"""Models built from our layers: the classifier, its attention sibling, the end-to-end model."""

from keras_attention_lab.models.attention_model import build_attention_model
from keras_attention_lab.models.attention_probe import AttentionProbe
from keras_attention_lab.models.class_token import ClassToken
from keras_attention_lab.models.end_to_end import (
    build_end_to_end_model,
    get_model_parts,
    load_end_to_end_model,
)
from keras_attention_lab.models.sequence_pooling import SequencePooling
from keras_attention_lab.models.transformer_classifier import build_classifier

__all__ = [
    "AttentionProbe",
    "ClassToken",
    "SequencePooling",
    "build_attention_model",
    "build_classifier",
    "build_end_to_end_model",
    "get_model_parts",
    "load_end_to_end_model",
]
