"""Attention layers for Keras 3, written with `keras.ops` (TensorFlow, JAX, PyTorch)."""

from keras_attention_lab.layers.feed_forward import FeedForward
from keras_attention_lab.layers.multi_head_attention import MultiHeadAttention
from keras_attention_lab.layers.position_embedding import PositionEmbedding
from keras_attention_lab.layers.scaled_dot_product_attention import ScaledDotProductAttention
from keras_attention_lab.layers.sinusoidal_positional_encoding import SinusoidalPositionalEncoding
from keras_attention_lab.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention_lab.layers.transformer_encoder_block import TransformerEncoderBlock

__all__ = [
    "FeedForward",
    "MultiHeadAttention",
    "PositionEmbedding",
    "ScaledDotProductAttention",
    "SinusoidalPositionalEncoding",
    "TokenAndPositionEmbedding",
    "TransformerEncoderBlock",
]
