"""Models built from our layers: the classifier (one forward pass), the end-to-end model.

Importing this package also registers every layer (`import layers`), `TextEncoder`,
`TransformerClassifier`, the checkpoint tokenizers and the stop-word standardisation (their
modules in `tokenization`), so a saved `model.keras` loads in safe mode after
`import models`.
"""

import layers  # noqa: F401  (registers the layers the saved models are made of)
import tokenization.byte_level_bpe_tokenizer  # noqa: F401  (registers the BPE tokenizer)
import tokenization.sentence_piece_tokenizer  # noqa: F401  (registers XLM-R's tokenizer)
import tokenization.stop_words  # noqa: F401  (registers the stop-word standardisation)
import tokenization.word_piece_tokenizer  # noqa: F401  (registers the WordPiece tokenizer)
from models.batch_prediction import predict_batches
from models.end_to_end import (
    build_end_to_end_model,
    get_model_parts,
    load_end_to_end_model,
    predict_texts,
    saved_and_reloaded,
)
from models.text_encoder import TextEncoder
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
    "TextEncoder",
    "TrimPadding",
    "TransformerClassifier",
    "build_classifier",
    "build_encoder",
    "build_end_to_end_model",
    "get_model_parts",
    "load_end_to_end_model",
    "OutdatedFileError",
    "predict_batches",
    "predict_texts",
    "saved_and_reloaded",
    "token_embeddings",
    "token_vectors",
]
