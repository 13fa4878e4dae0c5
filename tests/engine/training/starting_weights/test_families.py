"""Every checkpoint family (BERT, DistilBERT, ELECTRA, RoBERTa, XLM-RoBERTa) converted
onto our layers computes what Hugging Face `transformers` computes from the same folder,
on the same raw strings.

The checkpoints are tiny random models saved by `transformers` itself
(`tests.models.hf_reference`); our tokenizer's ids are checked against the `tokenizers`
library's, and our states against `transformers`' float64 `last_hidden_state`.
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ModelConfig
from data import DataError
from engine.training.starting_weights.checkpoint_weights import load_checkpoint_weights
from engine.training.starting_weights.checkpoints import read_checkpoint, read_tensors
from engine.training.starting_weights.families import LOADED_FAMILIES
from engine.training.starting_weights.pretrained_encoder import load_pretrained_encoder
from models.transformer_classifier import build_encoder
from tests.models.hf_reference import (
    ELECTRA_EMBEDDING,
    POSITIONS,
    WIDTH,
    checkpoint_ids,
    padding_id,
    reference_ids,
    reference_states,
)
from tokenization.pairs import join_pair, separator_id

TEXTS = ["The film was very good!", "bad", "A café, playing: not bad.", "一 好 movie's plot"]
PAIRS = [("the film", "was very good !"), ("bad", "a plot")]
# (model_type, with the pretraining model's prefix and heads)
LAYOUTS = [
    ("bert", True),
    ("distilbert", True),
    ("distilbert", False),
    ("electra", True),
    ("electra", False),
    ("roberta", True),
    ("roberta", False),
    ("xlm-roberta", True),
    ("xlm-roberta", False),
]
# XLM-RoBERTa's own: scripts, NFKC folds, unknown characters, spaces, a long word.
MULTILINGUAL = [
    "Der Film war sehr gut, wirklich schön.",
    "映画はとても良かった 😀",
    "  ﬁlm  ＡＢＣ ሰላም\u0085x ",
    "supercalifragilisticexpialidocious",
]


def our_ids_and_states(folder, texts):
    """(token ids (B, T), sequence output (B, T, D), padding mask (B, T)) of our encoder
    model, raw strings in."""
    encoder = load_pretrained_encoder(folder)
    strings = tf.constant(texts)
    outputs = encoder(strings)
    ids = encoder.get_layer("trim_padding")(encoder.get_layer("text_vectorization")(strings))
    return ids.numpy(), outputs["sequence_output"].numpy(), outputs["padding_mask"].numpy()


@pytest.mark.parametrize("model_type, head", LAYOUTS)
def test_hidden_states_equal_transformers_on_raw_strings(hf_checkpoint, model_type, head):
    folder = hf_checkpoint(model_type, head)
    texts = TEXTS + MULTILINGUAL if model_type == "xlm-roberta" else TEXTS
    ids, ours, mask = our_ids_and_states(folder, texts)
    expected_ids, _ = reference_ids(folder, texts)
    np.testing.assert_array_equal(checkpoint_ids(folder, ids), expected_ids)
    np.testing.assert_array_equal(mask, expected_ids != padding_id(folder))
    reference = reference_states(folder, ids)
    assert np.abs(ours[mask] - reference[mask]).max() < 1e-4
    # Not trivially close: the states are far from zero and differ between tokens.
    assert np.abs(reference[mask]).max() > 1.0 and reference[mask].std(0).mean() > 0.3


def test_each_family_builds_its_own_embedding(hf_checkpoint):
    def embedding(model_type, head=True):
        return build_encoder(
            ModelConfig(), None, None, checkpoint=read_checkpoint(hf_checkpoint(model_type, head))
        ).embedding

    distilbert, electra = embedding("distilbert"), embedding("electra")
    assert distilbert.num_token_types is None and not hasattr(distilbert, "token_type_embedding")
    assert electra.embedding_dim == ELECTRA_EMBEDDING and electra.projection_dim == WIDTH
    assert electra.embedding_projection.kernel.shape == (ELECTRA_EMBEDDING, WIDTH)
    # Same widths: no projection, as transformers' ElectraModel has none then.
    assert not hasattr(embedding("electra", head=False), "embedding_projection")
    bert = embedding("bert")
    assert bert.num_token_types == 2 and not hasattr(bert, "embedding_projection")


def pair_encoder(checkpoint, separator_id):
    encoder = build_encoder(
        ModelConfig(dropout=0.0), None, None, checkpoint=checkpoint, separator_id=separator_id
    )
    load_checkpoint_weights(encoder, checkpoint)
    return encoder


@pytest.mark.parametrize("model_type", ["bert", "distilbert", "electra"])
def test_a_pair_reads_as_transformers_reads_the_tokenizers_encoding(hf_checkpoint, model_type):
    """BERT and ELECTRA type the second side 1 from [SEP] on, as the tokenizer does;
    DistilBERT has no token types, and its pairs derive none."""
    folder = hf_checkpoint(model_type)
    checkpoint = read_checkpoint(folder)
    ids, types = reference_ids(folder, PAIRS)
    assert types.max() == 1  # the tokenizer typed the second sides
    encoder = pair_encoder(checkpoint, checkpoint.vocabulary.index("[SEP]"))
    ours = keras.ops.convert_to_numpy(encoder(ids))
    has_types = model_type != "distilbert"
    assert (encoder.embedding.separator_id is not None) == has_types
    reference = reference_states(folder, ids, types if has_types else None)
    real = ids != 0
    assert np.abs(ours[real] - reference[real]).max() < 1e-4
    if has_types:  # Types matter there: ignoring them would not pass.
        untyped = reference_states(folder, ids, np.zeros_like(types))
        assert np.abs(untyped[real] - reference[real]).max() > 0.1


@pytest.mark.parametrize("model_type", ["roberta", "xlm-roberta"])
@pytest.mark.parametrize("head", [True, False])
def test_a_roberta_pair_of_raw_strings_reads_as_transformers_reads_it(
    hf_checkpoint, model_type, head
):
    """`<s> a </s></s> b </s>`, no token types; positions from 2, its type row folded in."""
    folder = hf_checkpoint(model_type, head)
    checkpoint = read_checkpoint(folder)
    texts = tf.constant([join_pair(a, b) for a, b in PAIRS])
    ids = checkpoint.tokenizer().for_pairs()(texts).numpy()
    expected, types = reference_ids(folder, PAIRS)
    np.testing.assert_array_equal(checkpoint_ids(folder, ids), expected)
    assert types.max() == 0 and checkpoint.max_positions == POSITIONS
    encoder = pair_encoder(checkpoint, separator_id(checkpoint.vocabulary))
    assert encoder.embedding.separator_id is None  # One token type: none derived.
    ours = keras.ops.convert_to_numpy(encoder(ids))
    reference, real = reference_states(folder, ids), ids != 0
    assert np.abs(ours[real] - reference[real]).max() < 1e-4


def test_the_encoder_model_with_a_projection_saves_and_reloads(hf_checkpoint, tmp_path):
    encoder = load_pretrained_encoder(hf_checkpoint("electra"))
    texts = tf.constant(TEXTS[:2])
    encoder.save(tmp_path / "electra.keras")
    reloaded = keras.saving.load_model(tmp_path / "electra.keras", safe_mode=True)
    np.testing.assert_allclose(
        reloaded(texts)["sequence_output"], encoder(texts)["sequence_output"], atol=1e-6
    )


@pytest.mark.parametrize("model_type", ["distilbert", "electra"])
def test_the_prefix_is_the_familys(hf_checkpoint, model_type):
    plain, prefixed = (read_tensors(hf_checkpoint(model_type, head)) for head in (False, True))
    assert "embeddings.word_embeddings.weight" in plain
    assert "embeddings.word_embeddings.weight" in prefixed
    assert not any(name.startswith(f"{model_type}.") for name in prefixed)


@pytest.mark.parametrize("model_type", ["deberta-v2", "modernbert", "t5"])
def test_an_unsupported_model_type_names_the_families_that_load(
    hf_checkpoint, tmp_path, model_type
):
    folder = hf_checkpoint("distilbert")
    config = json.loads((folder / "config.json").read_text())
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({**config, "model_type": model_type}))
    with pytest.raises(DataError) as error:
        read_checkpoint(tmp_path)
    message = str(error.value)
    assert f"is a {model_type!r} model" in message and "\n" not in message
    assert all(f"{name}: " in message for name in LOADED_FAMILIES)
    assert list(LOADED_FAMILIES) == ["bert", "distilbert", "electra", "roberta", "xlm-roberta"]


@pytest.mark.parametrize(
    "model_type, key, value, message",
    [
        ("distilbert", "dim", None, "config.json has no 'dim'"),
        ("distilbert", "activation", "relu", "activation='relu' is not supported"),
        ("electra", "hidden_act", "gelu_new", "hidden_act='gelu_new' is not supported"),
    ],
)
def test_a_familys_config_it_cannot_load_is_one_line(
    hf_checkpoint, tmp_path, model_type, key, value, message
):
    folder = hf_checkpoint(model_type)
    config = json.loads((folder / "config.json").read_text())
    config = {k: v for k, v in config.items() if k != key} if value is None else config
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({**config, **({key: value} if value else {})}))
    with pytest.raises(DataError, match=message):
        read_checkpoint(tmp_path)
