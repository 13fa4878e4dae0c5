"""Attention layers for Keras 3, written with `keras.ops` (TensorFlow, JAX, PyTorch).

Importing this package registers every layer with Keras' serialization, under the names
that saved models carry (`keras_attention_lab>MultiHeadAttention`, ...), so
`keras.saving.load_model(path)` needs no `custom_objects`.

Shape comments and docstrings here and in `models/` use one legend: B batch, T query
(sequence) length, S key length, N heads, H head size, D model size, and L only for a
number of layers. `argument_checks`, `attention_masks`, `initializers` and `local_blocks`
are private helpers of these layers.
"""

from layers.class_token import ClassToken
from layers.feed_forward import FeedForward
from layers.multi_head_attention import MultiHeadAttention
from layers.position_embedding import PositionEmbedding
from layers.scaled_dot_product_attention import ScaledDotProductAttention
from layers.sequence_pooling import SequencePooling
from layers.sinusoidal_positional_encoding import SinusoidalPositionalEncoding
from layers.token_and_position_embedding import TokenAndPositionEmbedding
from layers.token_dropout import TokenDropout
from layers.transformer_encoder_block import TransformerEncoderBlock

__all__ = [
    "ClassToken",
    "FeedForward",
    "MultiHeadAttention",
    "PositionEmbedding",
    "ScaledDotProductAttention",
    "SequencePooling",
    "SinusoidalPositionalEncoding",
    "TokenAndPositionEmbedding",
    "TokenDropout",
    "TransformerEncoderBlock",
]
