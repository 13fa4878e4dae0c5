"""Run folders written before the classifier was one class: their classifier converted, and
pretraining runs' encoder weights read.

Until 2026-12 `model.keras` held the classifier as a functional graph of the same layers
(`TokenAndPositionEmbedding`, `ClassToken`, the `TransformerEncoderBlock`s, a final
`LayerNormalization`, `SequencePooling`, `Dense`). Those layers still load; this module
reads their settings and weights into a `TransformerClassifier` that predicts the same.
"""

import keras

from layers import TokenAndPositionEmbedding, TokenDropout, TransformerEncoderBlock
from layers.class_token import ClassToken
from layers.sequence_pooling import SequencePooling
from models.text_encoder import TextEncoder
from models.transformer_classifier import TransformerClassifier


def upgraded_classifier(old):
    """A `TransformerClassifier` with the settings and weights of an old functional one.

    Raises:
        ValueError: `old` is not a classifier this project saved.
    """
    def of_kind(kind):
        return [layer for layer in old.layers if isinstance(layer, kind)]

    embeddings, blocks, poolings = (of_kind(TokenAndPositionEmbedding),
                                    of_kind(TransformerEncoderBlock), of_kind(SequencePooling))
    dense = of_kind(keras.layers.Dense)  # [head hidden,] output
    if len(embeddings) != 1 or not blocks or len(poolings) != 1 or not 1 <= len(dense) <= 2:
        raise ValueError(f"{old.name!r} is not a classifier saved by this project; retrain "
                         "it with train.py")
    embedding, block, output = embeddings[0].get_config(), blocks[0].get_config(), dense[-1]
    encoder = TextEncoder(
        vocabulary_size=embedding["vocabulary_size"],
        sequence_length=embedding["sequence_length"],
        d_model=embedding["embedding_dim"],
        num_heads=block["num_heads"],
        num_layers=len(blocks),
        intermediate_dim=block["intermediate_dim"],
        key_dim=blocks[0].self_attention.key_dim,
        dropout=block["dropout"],
        attention_dropout=block["attention_dropout"],
        activation=block["activation"],
        norm_first=block["norm_first"],
        layer_norm_epsilon=block["layer_norm_epsilon"],
        attention_block_size=block["attention_block_size"],
        positional_encoding=embedding["positional_encoding"],
        mask_zero=embedding["mask_zero"],
        num_token_types=embedding["num_token_types"],
        embedding_norm_epsilon=embedding["layer_norm_epsilon"],
        class_token=bool(of_kind(ClassToken)),
        name="encoder",
    )
    token_dropouts = of_kind(TokenDropout)
    classifier = TransformerClassifier(
        encoder, output.units, pooling=poolings[0].pooling,
        head_hidden_dim=dense[0].units if len(dense) == 2 else 0, dropout=block["dropout"],
        token_dropout=token_dropouts[0].rate if token_dropouts else 0.0, name=old.name)
    classifier.build((None, None))
    pairs = [(embeddings[0], encoder.embedding), *zip(blocks, encoder.blocks, strict=True),
             *zip(of_kind(ClassToken), [encoder.class_token] if encoder.class_token else []),
             *zip(of_kind(keras.layers.LayerNormalization), [encoder.final_norm]
                  if encoder.final_norm else []),
             (output, classifier.head)]
    if len(dense) == 2:
        pairs.append((dense[0], classifier.head_hidden))
    for source, target in pairs:
        target.set_weights(source.get_weights())
    return classifier


def load_old_encoder_weights(model, path):
    """Loads the `encoder.weights.h5` of a pretrain.py run saved before the classifier was
    one class into `model`, a masked language model of `build_masked_language_model`.

    Keras keyed that file by the functional graph's layers, in the order it called them;
    calling the same layers in that order in a throwaway functional model gives Keras the
    same keys, and its own loader fills the shared layers.
    """
    from models.masked_language_model import TakePositions, text_encoder

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
