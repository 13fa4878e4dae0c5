"""Models built from our layers: the classifier, its attention sibling, the end-to-end model.

Importing this package also registers every layer (`import layers`), `AttentionProbe` and
the stop-word standardisation (`text.stop_words`), so a saved `model.keras` loads in safe
mode after `import models`.
"""

import layers  # noqa: F401  (registers the layers the saved models are made of)
from models.attention_model import build_attention_model
from models.attention_probe import AttentionProbe
from models.batch_prediction import predict_batches
from models.distribution import describe_replicas, make_strategy
from models.end_to_end import (
    build_end_to_end_model,
    get_model_parts,
    load_end_to_end_model,
    predict_texts,
)
from models.masked_language_model import build_masked_language_model, copy_encoder_weights
from models.stop_words import lower_strip_punctuation_drop_stop_words
from models.trainer import (
    HistoryLogger,
    RandomStateBackup,
    ResumableEarlyStopping,
    StopOnNonFiniteLoss,
    TrainingError,
    build_trainer,
    dtype_policy,
    make_optimizer,
)
from models.transformer_classifier import build_classifier, token_embeddings
from models.trim_padding import TrimPadding

__all__ = [
    "AttentionProbe",
    "HistoryLogger",
    "RandomStateBackup",
    "ResumableEarlyStopping",
    "StopOnNonFiniteLoss",
    "TrimPadding",
    "TrainingError",
    "build_attention_model",
    "build_classifier",
    "build_end_to_end_model",
    "build_masked_language_model",
    "build_trainer",
    "copy_encoder_weights",
    "describe_replicas",
    "dtype_policy",
    "get_model_parts",
    "load_end_to_end_model",
    "lower_strip_punctuation_drop_stop_words",
    "make_optimizer",
    "make_strategy",
    "predict_batches",
    "predict_texts",
    "token_embeddings",
]
