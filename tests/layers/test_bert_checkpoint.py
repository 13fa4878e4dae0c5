"""A BERT checkpoint converted onto our layers computes BERT, on every Keras backend.

The encoder is built from token ids (the tokenizer is TensorFlow's, tested in
tests/tokenization), loaded through `starting_weights.checkpoint_weights`' tensor table, and
compared with a float64 numpy BERT that reads the checkpoint's tensors directly.
"""

import keras
import numpy as np
import pytest

from engine.training.starting_weights.checkpoints import read_checkpoint, read_tensors
from engine.training.starting_weights.pretrained_encoder import encoder_from_token_ids
from tests.models.bert_reference import numpy_bert, write_tiny_checkpoint

# (B, T) ids of the tiny vocabulary: [CLS] ... [SEP], then padding.
TOKEN_IDS = np.array(
    [
        [2, 9, 8, 10, 6, 13, 3, 0, 0],
        [2, 7, 24, 3, 0, 0, 0, 0, 0],
        [2, 20, 21, 22, 23, 25, 26, 27, 3],
    ]
)


def converted_encoder(checkpoint, num_layers=None):
    """(our encoder of token ids, how many of the checkpoint's blocks it left out)."""
    encoder = encoder_from_token_ids(checkpoint, num_layers, dropout=0.0)
    return encoder, checkpoint.num_layers - len(encoder.blocks)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return read_checkpoint(write_tiny_checkpoint(tmp_path_factory.mktemp("bert"), num_layers=3))


def test_hidden_states_equal_a_numpy_bert(checkpoint):
    encoder, skipped = converted_encoder(checkpoint)
    ours = keras.ops.convert_to_numpy(encoder(TOKEN_IDS))
    reference = numpy_bert(read_tensors(checkpoint.folder), checkpoint.num_heads, TOKEN_IDS)
    real = TOKEN_IDS != 0
    assert skipped == 0
    np.testing.assert_allclose(ours[real], reference[real], atol=1e-4)
    # Not trivially close: the blocks move the states far from the embeddings.
    assert np.abs(reference[real]).max() > 1.0


def test_the_first_blocks_only_equal_bert_cut_there(checkpoint):
    encoder, skipped = converted_encoder(checkpoint, num_layers=1)
    ours = keras.ops.convert_to_numpy(encoder(TOKEN_IDS))
    reference = numpy_bert(
        read_tensors(checkpoint.folder), checkpoint.num_heads, TOKEN_IDS, num_layers=1
    )
    assert skipped == 2
    np.testing.assert_allclose(ours[TOKEN_IDS != 0], reference[TOKEN_IDS != 0], atol=1e-4)


def test_padding_does_not_change_the_real_tokens_states(checkpoint):
    encoder, _ = converted_encoder(checkpoint)
    alone = keras.ops.convert_to_numpy(encoder(TOKEN_IDS[1:2, :4]))
    padded = keras.ops.convert_to_numpy(encoder(TOKEN_IDS[1:2]))
    np.testing.assert_allclose(padded[:, :4], alone, atol=1e-5)
