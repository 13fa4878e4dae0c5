"""A pretrained BERT-family encoder in our layers, to reuse in any Keras model."""

import keras
from keras import ops

from config import ModelConfig
from engine.training.starting_weights.checkpoint_weights import load_checkpoint_weights
from engine.training.starting_weights.checkpoints import checkpoint_folder, read_checkpoint
from models.transformer_classifier import build_encoder
from models.trim_padding import TrimPadding

SEQUENCE_OUTPUT = "sequence_output"
PADDING_MASK = "padding_mask"


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class PaddingMask(keras.layers.Layer):
    """Token ids `(B, T)` -> boolean `(B, T)`, True for real tokens (id != 0).

    Example:
    >>> import numpy as np
    >>> PaddingMask()(np.array([[101, 7, 102, 0]])).numpy().tolist()
    [[True, True, True, False]]
    """

    def call(self, token_ids):
        return ops.not_equal(token_ids, 0)

    def compute_output_spec(self, token_ids):
        return keras.KerasTensor(token_ids.shape, dtype="bool")


def load_pretrained_encoder(
    name_or_path, sequence_length=None, num_layers=None, dropout=0.1, data_dir=None
):
    """A Keras model: raw strings `(B,)` -> `{"sequence_output": (B, T, D) float32,
    "padding_mask": (B, T) bool}`, with the checkpoint's weights and tokenizer.

    T is the longest text of the batch in WordPiece tokens, `[CLS]` and `[SEP]` included
    (and True in the mask), at most `sequence_length`. The model trains like any other
    (`dropout` on the embeddings and residual branches, BERT's 0.1) and saves to `.keras`.

    Args:
        name_or_path: a registered checkpoint (`all_minilm_l6_v2`) or the folder of a
            BERT-family checkpoint in the Hugging Face layout.
        sequence_length: the most tokens a text keeps; None: the checkpoint's positions.
        num_layers: keep the first blocks only; None: all of them.
        dropout: dropout rate of the embeddings and the blocks' residual branches.
        data_dir: the TFDS data dir whose downloads folder caches registered checkpoints.

    Example:
    >>> # encoder = load_pretrained_encoder("all_minilm_l6_v2")
    >>> # outputs = encoder(tf.constant(["A sentence.", "Another one."]))
    >>> # outputs["sequence_output"].shape, outputs["padding_mask"].shape  # (2, 5, 384), (2, 5)
    """
    checkpoint = read_checkpoint(checkpoint_folder(str(name_or_path), data_dir))
    text = keras.Input(shape=(), dtype="string", name="text")
    tokenizer = checkpoint.tokenizer(sequence_length or checkpoint.max_positions)
    token_ids = TrimPadding(name="trim_padding")(tokenizer(text))  # (B, T)
    sequence_output = encoder_from_token_ids(checkpoint, num_layers, dropout)(token_ids)
    outputs = {
        SEQUENCE_OUTPUT: keras.layers.Identity(dtype="float32", name=SEQUENCE_OUTPUT)(
            sequence_output
        ),  # (B, T, D)
        PADDING_MASK: PaddingMask(name=PADDING_MASK)(token_ids),
    }  # (B, T)
    return keras.Model(text, outputs, name="pretrained_encoder")


def encoder_from_token_ids(checkpoint, num_layers=None, dropout=0.1, attention_dropout=0.0):
    """A `TextEncoder`: token ids `(B, T)` (0 = padding) -> the last block's states
    `(B, T, D)`, with the weights of `checkpoint` (a `starting_weights.checkpoints.Checkpoint`).

    Example:
    >>> # encoder = encoder_from_token_ids(read_checkpoint(folder), num_layers=3)
    """
    model_config = ModelConfig(dropout=dropout, attention_dropout=attention_dropout)
    encoder = build_encoder(model_config, None, None, checkpoint=checkpoint, num_layers=num_layers)
    encoder.build((None, None))
    load_checkpoint_weights(encoder, checkpoint)
    return encoder
