"""Every public layer goes through the one contract of `layer_test_case.run_layer_test`."""

import numpy as np
import pytest

import layers
from tests.layers.layer_test_case import padded_features, padded_token_ids, run_layer_test

ATTENTION = {"real_length": 3, "no_gradient": ("key/bias",)}
SEQUENCE = {"real_length": 3}
QUERY_KEY_VALUE = tuple(np.random.default_rng(2).normal(size=(3, 3, 5, 4)).astype("float32"))

# (name, layer factory, inputs, run_layer_test options)
CASES = [
    ("ClassToken", layers.ClassToken, padded_features(), {**SEQUENCE, "length_offset": 1}),
    ("FeedForward", lambda: layers.FeedForward(16, dropout=0.1), padded_features(), SEQUENCE),
    (
        "MultiHeadAttention",
        lambda: layers.MultiHeadAttention(2, dropout=0.1),
        padded_features(feature_dim=8),
        ATTENTION,
    ),
    ("PositionEmbedding", lambda: layers.PositionEmbedding(8), padded_features(), SEQUENCE),
    (
        "ScaledDotProductAttention",
        lambda: layers.ScaledDotProductAttention(dropout=0.1),
        QUERY_KEY_VALUE,
        {},
    ),
    *[
        (
            "SequencePooling",
            lambda pooling=pooling: layers.SequencePooling(pooling),
            padded_features(),
            {**SEQUENCE, "sequence_output": False},
        )
        for pooling in layers.SequencePooling.POOLINGS
    ],
    (
        "SinusoidalPositionalEncoding",
        lambda: layers.SinusoidalPositionalEncoding(100.0),
        padded_features(),
        SEQUENCE,
    ),
    *[
        (
            "TokenAndPositionEmbedding",
            lambda encoding=encoding: layers.TokenAndPositionEmbedding(
                20, 8, sequence_length=8, positional_encoding=encoding
            ),
            padded_token_ids(),
            SEQUENCE,
        )
        for encoding in ("learned", "sinusoidal")
    ],
    (
        "TokenDropout",
        lambda: layers.TokenDropout(0.5, seed=1),
        padded_token_ids(),
        {"integer_output": True},
    ),
    *[
        (
            "TransformerEncoderBlock",
            lambda norm_first=norm_first: layers.TransformerEncoderBlock(
                2, 16, dropout=0.1, attention_dropout=0.1, norm_first=norm_first
            ),
            padded_features(feature_dim=8),
            ATTENTION,
        )
        for norm_first in (False, True)
    ],
    (
        "TransformerEncoderBlock",
        lambda: layers.TransformerEncoderBlock(2, 16, dropout=0.1, attention_block_size=2),
        padded_features(feature_dim=8),
        ATTENTION,
    ),
]


def test_every_public_layer_has_a_contract_case():
    assert sorted({name for name, *_ in CASES}) == sorted(layers.__all__)


@pytest.mark.parametrize(
    "layer_factory, inputs, options",
    [case[1:] for case in CASES],
    ids=[f"{case[0]}-{index}" for index, case in enumerate(CASES)],
)
def test_layer_contract(layer_factory, inputs, options, tmp_path):
    run_layer_test(layer_factory, inputs, tmp_path, **options)
