"""The one builder that maps the `model` config section to layer arguments.

Shapes: B batch, T query (sequence) length, D model size, L number of layers
(`num_layers`).
"""

import keras

from layers import TokenAndPositionEmbedding, TokenDropout, TransformerEncoderBlock
from layers.class_token import ClassToken
from layers.sequence_pooling import SequencePooling

# Stable layer names: the attention model and the inspection tools find layers by them.
EMBEDDING = "token_and_position_embedding"
EMBEDDING_DROPOUT = "embedding_dropout"
CLASS_TOKEN = "class_token"
BLOCK_PREFIX = "encoder_block_"
FINAL_NORM = "final_norm"
POOLING = "pooling"
HEAD_HIDDEN = "head_hidden"
HEAD_DROPOUT = "head_dropout"
PROBABILITIES = "probabilities"
TOKEN_IDS = "token_ids"
TOKEN_DROPOUT = "token_dropout"


def build_classifier(model_config, vocabulary_size, sequence_length, num_classes,
                     name="classifier", checkpoint=None):
    """Builds the transformer classifier: token ids `(B, T)` -> probabilities `(B, num_classes)`.

    [token dropout] -> token + position embedding -> dropout -> [ClassToken] -> L = num_layers x
    TransformerEncoderBlock -> [LayerNorm if pre-norm] -> masked pooling -> dropout ->
    [Dense relu -> dropout] -> softmax. The padding mask (ids != 0, when `mask_zero`)
    travels as the Keras mask from the embedding through the blocks into the pooling.

    Args:
        model_config: a `config.ModelConfig`.
        vocabulary_size: size of the token vocabulary (the vectoriser's).
        sequence_length: the most token ids an example may have (positions learned).
        num_classes: number of classes of the softmax head.
        name: model name; the end-to-end model finds the classifier by it.
        checkpoint: a `models.checkpoints.Checkpoint` whose encoder to build (its
            architecture replaces the config's; `model.pretrained_layers` blocks of it).
            Its weights are loaded by `models.starting_weights`. Its tokenizer already
            puts `[CLS]` first: pooling "cls" takes that token, no `ClassToken` is added.

    Returns:
        A functional `keras.Model`. The softmax runs in float32 under mixed precision.

    Example:

    >>> from config import ModelConfig
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    >>> build_classifier(config, vocabulary_size=100, sequence_length=8, num_classes=3).output.shape
    (None, 3)
    """
    m = model_config
    embedding_options = {}
    if checkpoint is not None:
        m = checkpoint.model_config(m, m.pretrained_layers)
        vocabulary_size, sequence_length = len(checkpoint.vocabulary), checkpoint.max_positions
        embedding_options = dict(num_token_types=checkpoint.num_token_types,
                                 layer_norm_epsilon=checkpoint.layer_norm_epsilon)
    # Any length up to `sequence_length`: batches are padded to their longest text only.
    token_ids = keras.Input(shape=(None,), dtype="int64", name=TOKEN_IDS)
    # Only the classifier drops words: the masked language model must see its targets.
    kept_ids = token_ids
    if m.token_dropout:
        kept_ids = TokenDropout(m.token_dropout, name=TOKEN_DROPOUT)(token_ids)  # (B, T)
    x = encode(m, kept_ids, vocabulary_size, sequence_length,
               class_token=m.pooling == "cls" and checkpoint is None, **embedding_options)
    return _head(m, x, token_ids, num_classes, name)


def encode(m, token_ids, vocabulary_size, sequence_length, class_token=False,
           **embedding_options):
    """token ids (B, T) -> the last block's output (B, T, D), or (B, T + 1, D) with the
    class token, through layers named `ENCODER_LAYERS` (pretrain.py trains the same).
    `embedding_options` go to `TokenAndPositionEmbedding` (BERT's token types and norm)."""
    x = TokenAndPositionEmbedding(
        vocabulary_size=vocabulary_size,
        embedding_dim=m.d_model,
        sequence_length=sequence_length,
        positional_encoding=m.positional_encoding,
        mask_zero=m.mask_zero,
        embeddings_initializer=_token_initializer(m.positional_encoding),
        name=EMBEDDING,
        **embedding_options,
    )(token_ids)  # (B, T, D)
    x = keras.layers.Dropout(m.dropout, name=EMBEDDING_DROPOUT)(x)
    if class_token:
        x = ClassToken(name=CLASS_TOKEN)(x)  # (B, T + 1, D)
    for index in range(m.num_layers):
        # The fast path: no scores. `build_attention_model` gets them through AttentionProbe.
        x = _encoder_block(m, index)(x)  # (B, T, D), or (B, T + 1, D) with the class token
    return x


def encoder_layer_names(model_config) -> list[str]:
    """The layers a pretrained encoder hands to a classifier (all of them have weights)."""
    blocks = [f"{BLOCK_PREFIX}{index}" for index in range(model_config.num_layers)]
    return [EMBEDDING, *blocks, *([FINAL_NORM] if model_config.norm_first else [])]


def token_embeddings(classifier):
    """The classifier's token embedding table, a `(vocabulary_size, d_model)` variable."""
    return classifier.get_layer(EMBEDDING).token_embedding.embeddings


def _token_initializer(positional_encoding):
    if positional_encoding == "sinusoidal":
        # Start token vectors on the scale of the sinusoids (values in [-1, 1]); Keras'
        # default uniform(-0.05, 0.05) buries token identity under position for epochs.
        return keras.initializers.RandomNormal(stddev=1.0)
    # Learned positions start as small as the tokens: keep Keras' default.
    return "uniform"


def _encoder_block(m, index):
    return TransformerEncoderBlock(
        num_heads=m.num_heads,
        intermediate_dim=m.intermediate_dim,
        key_dim=m.key_dim if m.key_dim is not None else m.d_model // m.num_heads,
        dropout=m.dropout,
        attention_dropout=m.attention_dropout,
        activation=m.activation,
        norm_first=m.norm_first,
        layer_norm_epsilon=m.layer_norm_epsilon,
        attention_block_size=m.attention_block_size,
        name=f"{BLOCK_PREFIX}{index}",
    )


def _head(m, x, token_ids, num_classes, name):
    if m.norm_first:
        # Pre-norm blocks leave their residual stream unnormalised; normalise once after
        # the last block, as pre-norm Transformers do.
        x = keras.layers.LayerNormalization(epsilon=m.layer_norm_epsilon, name=FINAL_NORM)(x)
    x = SequencePooling(m.pooling, name=POOLING)(x)  # (B, D)
    if m.head_hidden_dim:
        x = keras.layers.Dropout(m.dropout, name="head_hidden_dropout")(x)
        x = keras.layers.Dense(m.head_hidden_dim, activation="relu", name=HEAD_HIDDEN)(x)
    x = keras.layers.Dropout(m.dropout, name=HEAD_DROPOUT)(x)
    # float32 softmax: float16 probabilities round small classes to 0 and break the loss.
    probabilities = keras.layers.Dense(
        num_classes, activation="softmax", dtype="float32", name=PROBABILITIES
    )(x)
    return keras.Model(token_ids, probabilities, name=name)
