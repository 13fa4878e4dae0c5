"""The encoder trained as a masked language model (pretrain.py), and its hand-over.

Shapes: B batch, T tokens, D model size, V vocabulary (the mask token included), M masked
positions in the whole batch.
"""

import keras
from keras import ops

from engine.training.trainer import Trainer
from models.text_encoder import TextEncoder
from models.transformer_classifier import build_encoder

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

    The encoder is the classifier's (`build_encoder`: a `TextEncoder`), without the class
    token; the output layer predicts the hidden token at each masked
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
    token_ids = keras.Input(shape=(None,), dtype="int64", name="token_ids")
    positions = keras.Input(shape=(), batch_size=None, dtype="int64", name=MASKED_POSITIONS)
    x = build_encoder(model_config, vocabulary_size, sequence_length)(token_ids)  # (B, T, D)
    x = TakePositions(name="take_masked")(x, positions)  # (M, D)
    logits = keras.layers.Dense(vocabulary_size, dtype="float32", name="mlm_logits")(x)
    return Trainer([token_ids, positions], logits, name="masked_language_model")


def copy_encoder_weights(source, target):
    """Copies the encoder's weights (embedding, blocks, final norm) of `source`, a masked
    language model, into `target`'s encoder (a classifier's, whose class token stays).

    Raises:
        ValueError: a layer's weights differ in shape (the two encoders are not alike).
    """
    source, target = text_encoder(source), text_encoder(target)
    pairs = [(source.embedding, target.embedding), *zip(source.blocks, target.blocks, strict=True)]
    if source.final_norm is not None:
        pairs.append((source.final_norm, target.final_norm))
    for ours, theirs in pairs:
        weights = ours.get_weights()
        shapes = [tuple(variable.shape) for variable in theirs.weights]
        if shapes != [weight.shape for weight in weights]:
            raise ValueError(
                f"layer {theirs.name}: weights of shapes "
                f"{[w.shape for w in weights]} do not fit {shapes}"
            )
        theirs.set_weights(weights)


def text_encoder(model):
    """The `TextEncoder` of a classifier or of a masked language model."""
    encoder = getattr(model, "encoder", None)
    if isinstance(encoder, TextEncoder):
        return encoder
    found = [layer for layer in model.layers if isinstance(layer, TextEncoder)]
    if len(found) != 1:
        raise ValueError(
            f"Expected one TextEncoder in the model. Received: {model.name!r} with {len(found)}"
        )
    return found[0]


def load_old_encoder_weights(model, path):
    """Loads the `encoder.weights.h5` of a pretrain.py run saved before the classifier was
    one class into `model`, a masked language model of `build_masked_language_model`.

    Keras keyed that file by the functional graph's layers, in the order it called them;
    calling the same layers in that order in a throwaway functional model gives Keras the
    same keys, and its own loader fills the shared layers.
    """
    encoder = text_encoder(model)
    take = next(layer for layer in model.layers if isinstance(layer, TakePositions))
    logits_layer = model.layers[-1]
    token_ids = keras.Input(shape=(None,), dtype="int64")
    positions = keras.Input(shape=(), dtype="int64")
    x = encoder.embedding_dropout(encoder.embedding(token_ids))  # (B, T, D)
    for block in encoder.blocks:
        x = block(x)
    if encoder.final_norm is not None:
        x = encoder.final_norm(x)
    old = keras.Model([token_ids, positions], logits_layer(take(x, positions)))
    old.load_weights(path)
