"""The transformer classifier, and the one builder that maps the `model` config section to it.

Shapes: B batch, T token ids, A attended positions (T, or T + 1 with the class token),
L layers, N heads, D model size, C classes.
"""

import keras
from keras import ops

from layers import TokenDropout
from layers.sequence_pooling import SequencePooling
from models.text_encoder import TextEncoder


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TransformerClassifier(keras.Model):
    """Token ids (B, T) -> class probabilities (B, C): [word dropout] -> `TextEncoder` ->
    masked pooling -> dropout -> [Dense relu -> dropout] -> Dense -> softmax, or with
    `multi_label` a sigmoid per class (each label's own probability).

    The one forward pass of every caller: training and prediction take the probabilities;
    the attention export asks for every block's scores; attribution methods for the
    logits, token vectors in place of the lookup, a hook on the attention weights and the
    LayerNorms' scale held constant; head importance for a head mask. Without those
    arguments the blocks run their fast path (no scores).

    Masking: token id 0 is padding (with the encoder's `mask_zero`); the encoder gives
    padding zero attention and the pooling skips it. Dropped words (`token_dropout`, in
    training only) become padding.

    Args:
        encoder: a `TextEncoder`.
        num_classes: int. Number of classes C.
        pooling: "mean", "max" or "cls" (the first position: the class token or [CLS]).
        head_hidden_dim: int. Width of a hidden relu layer before the output; 0: none.
        dropout: float. Dropout before the hidden layer and before the output.
        token_dropout: float. Share of the words dropped in training.
        multi_label: bool. A sigmoid per class, for a set of labels per text.
        **kwargs: base model arguments (`name`, ...).

    Call arguments:
        token_ids: int (B, T), 0 = padding.
        training: bool. Dropout on.
        head_mask: optional float (L, N), or (B, L, N) for one mask per example:
            multiplies each head's output before its block's output projection (0
            switches a head off; Michel et al. 2019).
        token_vectors: optional float (B, T, D) in place of the looked-up token vectors.
        attention_weights_fn: optional function of each block's post-softmax weights
            (B, N, A, A) before they mix the values; it must keep their values.
        detach_norm_scale: bool. No gradient through the LayerNorms' 1 / std.
        return_attention_scores, return_logits: bool. Return a dict instead of the
            probabilities.
        hidden_states, start_block: the encoder's states after its first `start_block`
            blocks (`TextEncoder.lower_states`), to go on from (no word dropout then):
            how a model with frozen lower blocks trains on states computed once.

    Returns:
        float32 probabilities (B, C); with `return_attention_scores` or `return_logits`,
        `{"probabilities", "logits": (B, C) float32[, "attention_scores": L x (B, N, A, A)
        float32]}`.

    Example:

    >>> import numpy as np
    >>> from config import ModelConfig
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32)
    >>> classifier = build_classifier(config, vocabulary_size=50, sequence_length=8,
    ...                               num_classes=3)
    >>> outputs = classifier(np.array([[4, 7, 9, 0]]), return_attention_scores=True)
    >>> tuple(outputs["probabilities"].shape), len(outputs["attention_scores"])
    ((1, 3), 2)
    """

    def __init__(
        self,
        encoder,
        num_classes,
        pooling="mean",
        head_hidden_dim=0,
        dropout=0.1,
        token_dropout=0.0,
        multi_label=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.multi_label = bool(multi_label)
        self.num_classes = num_classes
        self.pooling_mode = pooling
        self.head_hidden_dim = head_hidden_dim
        self.dropout = dropout
        self.token_dropout_rate = token_dropout
        policy = self.dtype_policy  # The sublayers' too, also when loaded under another.
        # Only the classifier drops words: the masked language model must see its targets.
        self.token_dropout = (
            TokenDropout(token_dropout, dtype=policy, name="token_dropout")
            if token_dropout
            else None
        )
        self.pooling = SequencePooling(pooling, dtype=policy, name="pooling")
        self.head_hidden, self.head_hidden_dropout = None, None
        pooled = (None, encoder.d_model)  # (B, D)
        if head_hidden_dim:
            self.head_hidden_dropout = keras.layers.Dropout(
                dropout, dtype=policy, name="head_hidden_dropout"
            )
            self.head_hidden = keras.layers.Dense(
                head_hidden_dim, activation="relu", dtype=policy, name="head_hidden"
            )
            self.head_hidden.build(pooled)
            pooled = (None, head_hidden_dim)
        self.head_dropout = keras.layers.Dropout(dropout, dtype=policy, name="head_dropout")
        # float32 logits and softmax: float16 probabilities round small classes to 0. A
        # quantized classifier's map names the head's policy (`get_config`).
        self.head = keras.layers.Dense(
            num_classes,
            name="head",
            dtype=policy if isinstance(policy, keras.dtype_policies.DTypePolicyMap) else "float32",
        )
        self.head.build(pooled)

    def build(self, token_ids_shape):
        pass  # The encoder and the head were built when they were made.

    def call(
        self,
        token_ids,
        training=None,
        head_mask=None,
        token_vectors=None,
        attention_weights_fn=None,
        detach_norm_scale=False,
        return_attention_scores=False,
        return_logits=False,
        hidden_states=None,
        start_block=0,
    ):
        if self.token_dropout is not None and hidden_states is None:
            token_ids = self.token_dropout(token_ids, training=training)  # (B, T)
        encoded = self.encoder(
            token_ids,
            training=training,
            token_vectors=token_vectors,
            head_mask=head_mask,
            attention_weights_fn=attention_weights_fn,
            detach_norm_scale=detach_norm_scale,
            return_attention_scores=return_attention_scores,
            hidden_states=hidden_states,
            start_block=start_block,
        )
        x, attention_scores = encoded if return_attention_scores else (encoded, None)
        x = self.pooling(x, mask=self.encoder.compute_mask(token_ids))  # (B, D)
        if self.head_hidden is not None:
            x = self.head_hidden(self.head_hidden_dropout(x, training=training))
        logits = self.head(self.head_dropout(x, training=training))  # (B, C) float32
        if self.multi_label:
            probabilities = ops.sigmoid(logits)
        else:
            probabilities = ops.softmax(logits, axis=-1)
        if not (return_attention_scores or return_logits):
            return probabilities
        outputs = {"probabilities": probabilities, "logits": logits}
        if return_attention_scores:
            outputs["attention_scores"] = attention_scores
        return outputs

    def compute_output_spec(self, token_ids, **kwargs):
        # Traced, so the dict outputs and their float32 dtype come with the spec.
        return super(keras.layers.Layer, self).compute_output_spec(token_ids, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "encoder": keras.saving.serialize_keras_object(self.encoder),
                "num_classes": self.num_classes,
                "pooling": self.pooling_mode,
                "head_hidden_dim": self.head_hidden_dim,
                "dropout": self.dropout,
                "token_dropout": self.token_dropout_rate,
                "multi_label": self.multi_label,
            }
        )
        quantized = self._quantized_policies()
        if quantized is not None:
            # Keras rebuilds the sublayers from these configs: each of ours passes its
            # policy down, and a map gives every quantized layer, by path, its own
            # (keras-hub's `Backbone.get_config` does the same; keras issue 19381).
            config["dtype"] = keras.dtype_policies.serialize(quantized)
            config["encoder"]["config"]["dtype"] = config["dtype"]
        return config

    def _quantized_policies(self):
        """A `DTypePolicyMap` of the quantized sublayers' policies by path, or None."""
        policy = self.dtype_policy
        if isinstance(policy, keras.dtype_policies.DTypePolicyMap):
            return policy
        layers = [layer for layer in self._flatten_layers() if layer.quantization_mode]
        if not layers:
            return None
        policies = keras.dtype_policies.DTypePolicyMap(default_policy=policy)
        for layer in layers:
            policies[layer.path] = layer.dtype_policy
        if self.head.path not in policies:
            policies[self.head.path] = self.head.dtype_policy
        return policies

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)


def build_encoder(
    model_config,
    vocabulary_size,
    sequence_length,
    class_token=False,
    checkpoint=None,
    num_layers=None,
    separator_id=None,
):
    """The `TextEncoder` of a `config.ModelConfig`. With a checkpoint, its architecture:
    its first `num_layers` (or `model.pretrained_layers`, or all) blocks, its vocabulary,
    positions, token types, embedding norm and projection. With a `separator_id` (text
    pairs), token types tell a pair's sides apart: the checkpoint's, or two of our own; a
    checkpoint with fewer than two (DistilBERT) reads a pair as it was pretrained, told
    apart by the separator token alone."""
    m = model_config
    options = {} if separator_id is None else dict(num_token_types=2, separator_id=separator_id)
    if checkpoint is not None:
        m = checkpoint.model_config(m, num_layers or m.pretrained_layers)
        vocabulary_size, sequence_length = len(checkpoint.vocabulary), checkpoint.max_positions
        types = checkpoint.num_token_types
        options = dict(
            num_token_types=types or None,
            embedding_norm_epsilon=checkpoint.layer_norm_epsilon,
            embedding_dim=checkpoint.embedding_dim,
        )
        if separator_id is not None and types >= 2:
            options["separator_id"] = separator_id
    return TextEncoder(
        vocabulary_size=vocabulary_size,
        sequence_length=sequence_length,
        d_model=m.d_model,
        num_heads=m.num_heads,
        num_layers=m.num_layers,
        intermediate_dim=m.intermediate_dim,
        key_dim=m.key_dim if m.key_dim is not None else m.d_model // m.num_heads,
        dropout=m.dropout,
        attention_dropout=m.attention_dropout,
        activation=m.activation,
        norm_first=m.norm_first,
        layer_norm_epsilon=m.layer_norm_epsilon,
        attention_block_size=m.attention_block_size,
        positional_encoding=m.positional_encoding,
        mask_zero=m.mask_zero,
        class_token=class_token,
        name="encoder",
        **options,
    )


def build_classifier(
    model_config,
    vocabulary_size,
    sequence_length,
    num_classes,
    name="classifier",
    checkpoint=None,
    separator_id=None,
    multi_label=False,
):
    """Builds the `TransformerClassifier` of a `config.ModelConfig`, its weights created.

    Args:
        model_config: a `config.ModelConfig`.
        vocabulary_size: size of the token vocabulary (the vectoriser's).
        sequence_length: the most token ids an example may have (positions learned).
        num_classes: number of classes.
        name: model name; the end-to-end model finds the classifier by its type.
        checkpoint: a `starting_weights.checkpoints.Checkpoint` whose encoder to build (its
            architecture replaces the config's). Its weights are loaded by the caller
            (`starting_weights`). Its tokenizer already puts `[CLS]` first: pooling "cls"
            takes that token, no `ClassToken` is added.
        separator_id: the token id that separates a text pair's sides
            (`tokenization.pairs.separator_id`), or None for single texts.
        multi_label: a sigmoid per class instead of a softmax (a set of labels per text).

    Example:

    >>> from config import ModelConfig
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    >>> classifier = build_classifier(config, vocabulary_size=100, sequence_length=8,
    ...                               num_classes=3)
    >>> classifier.count_params() > 0, len(classifier.encoder.blocks)
    (True, 1)
    """
    m = model_config
    encoder = build_encoder(
        m,
        vocabulary_size,
        sequence_length,
        class_token=m.pooling == "cls" and checkpoint is None,
        checkpoint=checkpoint,
        separator_id=separator_id,
    )
    classifier = TransformerClassifier(
        encoder,
        num_classes,
        pooling=m.pooling,
        head_hidden_dim=m.head_hidden_dim,
        dropout=m.dropout,
        token_dropout=m.token_dropout,
        multi_label=multi_label,
        name=name,
    )
    classifier.build((None, None))
    return classifier


def token_embeddings(classifier):
    """The classifier's token embedding table, a `(vocabulary_size, d_model)` variable."""
    return classifier.encoder.embedding.token_embedding.embeddings


def token_vectors(classifier, token_ids):
    """The token vectors (B, T, D) the classifier looks up for `token_ids`, before positions
    are added: the "input" of gradient x input and Integrated Gradients."""
    return classifier.encoder.embedding.token_embedding(ops.convert_to_tensor(token_ids, "int64"))
