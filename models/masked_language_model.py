"""The encoder trained as a masked language model (pretrain.py), and its hand-over.

Shapes: B batch, T tokens, D model size, V vocabulary (the mask token included), M masked
positions in the whole batch.
"""

import keras
from keras import ops

from models.trainer import Trainer
from models.transformer_classifier import FINAL_NORM, TOKEN_IDS, encode, encoder_layer_names

MASKED_POSITIONS = "masked_positions"


class TakePositions(keras.layers.Layer):
    """(B, T, D) states and M flat positions b * T + t -> the (M, D) states there."""

    def call(self, states, positions, mask=None):
        # The padding mask has done its work in the blocks; masked positions are real tokens.
        flat = ops.reshape(states, (-1, ops.shape(states)[-1]))  # (B * T, D)
        return ops.take(flat, positions, axis=0)

    def compute_mask(self, states, positions=None, mask=None):
        return None

    def compute_output_shape(self, states_shape, positions_shape):
        return (positions_shape[0], states_shape[-1])


def build_masked_language_model(model_config, vocabulary_size, sequence_length):
    """token ids with masks (B, T) and the masked positions (M,) -> logits (M, V).

    The encoder is the classifier's (`transformer_classifier.encode`, same layer names),
    without the class token; the output layer predicts the hidden token at each masked
    position only, so a 30,000-word vocabulary costs M x V logits, not B x T x V. It is a
    `Trainer`, like the classifier's, so its fit traces the train step once.

    Example:
    >>> from config import ModelConfig
    >>> model = build_masked_language_model(
    ...     ModelConfig(d_model=8, num_heads=2, intermediate_dim=8), 20, sequence_length=6)
    >>> import numpy as np
    >>> model([np.array([[3, 19, 5, 0]]), np.array([1])]).shape
    TensorShape([1, 20])
    """
    token_ids = keras.Input(shape=(None,), dtype="int64", name=TOKEN_IDS)
    positions = keras.Input(shape=(), batch_size=None, dtype="int64", name=MASKED_POSITIONS)
    x = encode(model_config, token_ids, vocabulary_size, sequence_length)
    if model_config.norm_first:
        x = keras.layers.LayerNormalization(
            epsilon=model_config.layer_norm_epsilon, name=FINAL_NORM)(x)
    x = TakePositions(name="take_masked")(x, positions)  # (M, D)
    logits = keras.layers.Dense(vocabulary_size, dtype="float32", name="mlm_logits")(x)
    return Trainer([token_ids, positions], logits, name="masked_language_model")


def copy_encoder_weights(source, target, model_config):
    """Copies the encoder layers' weights (`encoder_layer_names`) from `source` to `target`.

    Raises:
        ValueError: a layer's weights differ in shape (the two encoders are not alike).
    """
    for name in encoder_layer_names(model_config):
        weights = source.get_layer(name).get_weights()
        layer = target.get_layer(name)
        shapes = [tuple(variable.shape) for variable in layer.weights]
        if shapes != [weight.shape for weight in weights]:
            raise ValueError(f"layer {name}: weights of shapes {[w.shape for w in weights]} "
                             f"do not fit {shapes}")
        layer.set_weights(weights)
