"""Models built from our layers: the classifier (one forward pass), the end-to-end model.

Importing this package also registers every layer (`import layers`), `TextEncoder`,
`TransformerClassifier`, the WordPiece tokenizer and the stop-word standardisation
(`import tokenization`), so a saved `model.keras` loads in safe mode after `import models`.
"""

import layers  # noqa: F401  (registers the layers the saved models are made of)
import tokenization  # noqa: F401  (registers the tokenizer and the stop-word standardisation)
from models.batch_prediction import predict_batches
from models.distribution import describe_replicas, input_worker, make_strategy
from models.end_to_end import (
    build_end_to_end_model,
    get_model_parts,
    load_end_to_end_model,
    predict_texts,
)
from models.masked_language_model import build_masked_language_model, copy_encoder_weights
from models.text_encoder import TextEncoder
from models.trainer import (
    HistoryLogger,
    RandomStateBackup,
    ResumableEarlyStopping,
    StopOnNonFiniteLoss,
    TrainingError,
    build_trainer,
    dtype_policy,
    freeze_lower_blocks,
    make_optimizer,
)
from models.training_dynamics import DynamicsLogger, TrainingDynamics, text_hashes
from models.transformer_classifier import (
    TransformerClassifier,
    build_classifier,
    build_encoder,
    token_embeddings,
    token_vectors,
)
from models.trim_padding import TrimPadding
from models.upgrade import OutdatedFileError

__all__ = [
    "DynamicsLogger",
    "HistoryLogger",
    "RandomStateBackup",
    "ResumableEarlyStopping",
    "StopOnNonFiniteLoss",
    "TextEncoder",
    "TrimPadding",
    "TrainingDynamics",
    "TrainingError",
    "TransformerClassifier",
    "build_classifier",
    "build_encoder",
    "build_end_to_end_model",
    "build_masked_language_model",
    "build_trainer",
    "freeze_lower_blocks",
    "copy_encoder_weights",
    "describe_replicas",
    "dtype_policy",
    "get_model_parts",
    "input_worker",
    "load_end_to_end_model",
    "OutdatedFileError",
    "make_optimizer",
    "make_strategy",
    "predict_batches",
    "predict_texts",
    "text_hashes",
    "token_embeddings",
    "token_vectors",
]
