"""keras-hub's backbone of each checkpoint family, as bench_pretrained_encoder.py feeds it.

keras-hub's `Backbone.from_preset(<a Hugging Face folder>)` reads config.json's
`model_type` and runs its converter (keras_hub/src/utils/transformers/convert_*.py):
BERT into `BertBackbone` (inputs token_ids, segment_ids, padding_mask; outputs a dict),
DistilBERT into `DistilBertBackbone` and RoBERTa into `RobertaBackbone` (token_ids and
padding_mask; the last hidden states). The DistilBERT and RoBERTa converters look the
tensors up under the pretraining model's prefix (`distilbert.`, `roberta.`), which
`save_pretrained` of DistilBertForMaskedLM and RobertaForMaskedLM writes (as the hub's
distilbert-base-uncased and roberta-base hold them); a folder of the bare encoder
(DistilBertModel, RobertaModel: no prefix) does not load there. RoBERTa's
converter drops the first two position rows (padding id 1, as roberta-base) and does not
load the token-type row, which the published checkpoints hold as zeros.

ELECTRA has no converter from Hugging Face folders in keras-hub (keras-hub issue #2989),
so it is not benched.
"""

import dataclasses

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from engine.training.starting_weights.families import token_order


@dataclasses.dataclass(frozen=True)
class KerasHubFamily:
    """How keras-hub holds one family.

    Attributes:
        backbone: the keras-hub backbone class `from_preset` builds for the folder.
        segment_ids: whether it takes segment (token type) ids, all 0 here.
        shipped_gelu: the feed-forward's GELU as keras-hub builds it: "tanh"
            (BertBackbone's hard-coded `gelu_approximate`) or "exact" (the others'
            `activation="gelu"`, which Keras 3 computes with erf).
    """

    backbone: type
    segment_ids: bool
    shipped_gelu: str


KERAS_HUB_FAMILIES = {
    "bert": KerasHubFamily(keras_hub.models.BertBackbone, True, "tanh"),
    "distilbert": KerasHubFamily(keras_hub.models.DistilBertBackbone, False, "exact"),
    "roberta": KerasHubFamily(keras_hub.models.RobertaBackbone, False, "exact"),
}
NOT_BENCHED = {
    "electra": "keras-hub has no converter of ELECTRA's Hugging Face folders "
    "(keras-hub issue #2989): nothing to compare against",
}


def build_keras_hub(checkpoint, dropout):
    """keras-hub's backbone of the checkpoint's family from the same folder (its converter)."""
    family = KERAS_HUB_FAMILIES[checkpoint.family.model_type]
    # dropout: embeddings, attention weights and both residual branches, as ours.
    return family.backbone.from_preset(str(checkpoint.folder), dropout=dropout)


def set_gelu(backbone, approximate):
    """Sets the feed-forward activation of every block of a keras-hub backbone.

    The backbones take no activation argument; the Dense layer reads `activation` when
    called, so setting it before tracing changes the graph.
    """
    for block in backbone.transformer_layers:
        block._feedforward_intermediate_dense.activation = lambda x: keras.activations.gelu(
            x, approximate=approximate
        )


def encoder_ids(checkpoint, token_ids):
    """{encoder: its token ids (B, T)} for our `token_ids` (0 = padding): keras-hub takes
    the checkpoint's own ids, ours with 0 and the padding id swapped back
    (`families.token_order`; the same ids for BERT and DistilBERT)."""
    order = token_order(len(checkpoint.vocabulary), checkpoint.padding_id)
    # Mapped here, outside the timed steps, so keras-hub's step does not pay for it.
    return {"ours": token_ids, "keras-hub": tf.constant(order[np.asarray(token_ids)], tf.int32)}


def forward_functions(ours, backbone, checkpoint):
    """{encoder: (its token ids (B, T), training) -> last hidden states (B, T, D)}."""
    family = KERAS_HUB_FAMILIES[checkpoint.family.model_type]

    def keras_hub_forward(token_ids, training):
        inputs = {
            "token_ids": token_ids,
            "padding_mask": tf.not_equal(token_ids, checkpoint.padding_id),
        }
        if family.segment_ids:
            inputs["segment_ids"] = tf.zeros_like(token_ids)
        outputs = backbone(inputs, training=training)
        return outputs["sequence_output"] if isinstance(outputs, dict) else outputs

    return {
        "ours": lambda token_ids, training: ours(token_ids, training=training),
        "keras-hub": keras_hub_forward,
    }


def trainable_weights(ours, backbone):
    """{encoder: the variables the train step's loss reaches}: all of ours; keras-hub's
    less BertBackbone's pooler (a Dense on [CLS] whose output the mean-pooled head does
    not use; the other backbones have none)."""
    pooler = {
        id(variable)
        for layer in backbone.layers
        if layer.name == "pooled_dense"
        for variable in layer.weights
    }
    return {
        "ours": list(ours.trainable_variables),
        "keras-hub": [v for v in backbone.trainable_variables if id(v) not in pooler],
    }
