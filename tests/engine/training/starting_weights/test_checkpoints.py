"""starting_weights.checkpoints and load_pretrained_encoder: errors, layouts, and the real
MiniLM."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file, save_file

from data import DataError
from engine.training.starting_weights.checkpoints import (
    checkpoint_folder,
    read_checkpoint,
    read_tensors,
)
from engine.training.starting_weights.pretrained_encoder import load_pretrained_encoder
from tests.models.bert_reference import TINY_VOCABULARY, numpy_bert, write_tiny_checkpoint

# The sentence-transformers quickstart for all-MiniLM-L6-v2: its three sentences and the
# cosine similarities it prints (mean pooling over real tokens, then L2 normalisation).
QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
PUBLISHED_SIMILARITIES = np.array(
    [[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]]
)


def sentence_embeddings(encoder, texts):
    outputs = encoder(tf.constant(texts))
    hidden, mask = outputs["sequence_output"].numpy(), outputs["padding_mask"].numpy()
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_minilm_gives_the_published_quickstart_similarities(minilm_folder):
    encoder = load_pretrained_encoder(minilm_folder)
    embeddings = sentence_embeddings(encoder, QUICKSTART)
    np.testing.assert_allclose(embeddings @ embeddings.T, PUBLISHED_SIMILARITIES, atol=5e-4)


def test_minilm_hidden_states_equal_a_numpy_bert(minilm_folder):
    encoder = load_pretrained_encoder(minilm_folder)
    outputs = encoder(tf.constant(QUICKSTART))
    mask = outputs["padding_mask"].numpy()
    token_ids = encoder.get_layer("trim_padding")(
        encoder.get_layer("text_vectorization")(tf.constant(QUICKSTART))
    ).numpy()
    reference = numpy_bert(read_tensors(minilm_folder), 12, token_ids)
    np.testing.assert_allclose(outputs["sequence_output"].numpy()[mask], reference[mask], atol=1e-4)
    assert mask.sum(1).tolist() == [8, 9, 8]  # [CLS] and [SEP] count as real


@pytest.mark.parametrize("tokenizer_file", [True, False])
def test_the_encoder_model_outputs_and_reloads_in_safe_mode(tmp_path, tokenizer_file):
    folder = write_tiny_checkpoint(tmp_path / "bert", tokenizer_file=tokenizer_file)
    encoder = load_pretrained_encoder(folder, sequence_length=6)
    texts = tf.constant(["the film was very good !", "bad"])
    outputs = encoder(texts)
    assert outputs["sequence_output"].shape == (2, 6, 16)
    assert outputs["sequence_output"].dtype == tf.float32
    assert outputs["padding_mask"].numpy().tolist() == [[True] * 6, [True] * 3 + [False] * 3]
    encoder.save(tmp_path / "encoder.keras")
    reloaded = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    np.testing.assert_allclose(
        reloaded(texts)["sequence_output"], outputs["sequence_output"], atol=1e-6
    )


def test_a_bert_prefix_is_stripped(tmp_path):
    folder = write_tiny_checkpoint(tmp_path / "bert", prefix="bert.")
    assert "embeddings.word_embeddings.weight" in read_tensors(folder)
    load_pretrained_encoder(folder)  # every tensor found


def test_a_pretraining_models_checkpoint_loads_its_encoder(tmp_path):
    # As the hub holds bert-base-uncased (BertForPreTraining): the encoder under "bert.",
    # the masked-LM and next-sentence heads under "cls.", unprefixed.
    plain = load_pretrained_encoder(write_tiny_checkpoint(tmp_path / "plain"))
    folder = write_tiny_checkpoint(tmp_path / "hub", prefix="bert.")
    heads = {
        "cls.predictions.bias": np.zeros(len(TINY_VOCABULARY), "float32"),
        "cls.predictions.transform.dense.weight": np.zeros((16, 16), "float32"),
        "cls.seq_relationship.weight": np.zeros((2, 16), "float32"),
    }
    rewrite_tensors(folder, lambda tensors: tensors.update(heads))
    tensors = read_tensors(folder)
    assert "embeddings.word_embeddings.weight" in tensors and "cls.predictions.bias" in tensors
    texts = tf.constant(["the film was good", "bad"])
    np.testing.assert_allclose(
        load_pretrained_encoder(folder)(texts)["sequence_output"],
        plain(texts)["sequence_output"],
        atol=1e-6,
    )


def rewrite_tensors(folder, change):
    tensors = load_file(str(folder / "model.safetensors"))
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"))


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda t: t.pop("encoder.layer.1.output.dense.bias"),
            "has no tensor encoder.layer.1.output.dense.bias",
        ),
        (
            lambda t: t.update({"encoder.layer.0.attention.self.rotary": np.zeros(3, "float32")}),
            "a tensor encoder.layer.0.attention.self.rotary that no layer of a BERT encoder takes",
        ),
        (
            lambda t: t.update(
                {"encoder.layer.0.intermediate.dense.weight": np.zeros((8, 16), "f4")}
            ),
            r"encoder.layer.0.intermediate.dense.weight has shape \(8, 16\), .* needs \(16, 32\)",
        ),
        (
            lambda t: t.update(
                {"encoder.layer.0.attention.self.query.weight": np.zeros((15, 16), "f4")}
            ),
            r"query.weight has shape \(15, 16\)",
        ),
    ],
)
def test_a_missing_extra_or_misshaped_tensor_is_named(tmp_path, change, message):
    folder = write_tiny_checkpoint(tmp_path / "bert")
    rewrite_tensors(folder, change)
    with pytest.raises(DataError, match=message):
        load_pretrained_encoder(folder)


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "model_type",
            "deberta-v2",
            "is a 'deberta-v2' model; the families that load into our layers "
            r"\(config.json's model_type\) are bert: BERT",
        ),
        ("hidden_act", "relu", "hidden_act='relu' is not supported"),
        ("position_embedding_type", "relative_key", "position_embedding_type='relative_key'"),
        ("vocab_size", 99, f"the tokenizer has {len(TINY_VOCABULARY)} tokens"),
    ],
)
def test_an_unsupported_architecture_is_named(tmp_path, key, value, message):
    folder = write_tiny_checkpoint(tmp_path / "bert")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, key: value}))
    with pytest.raises(DataError, match=message):
        read_checkpoint(folder)


def test_a_folder_that_is_no_checkpoint_is_named(tmp_path):
    with pytest.raises(DataError, match="neither a registered checkpoint"):
        checkpoint_folder(str(tmp_path / "nowhere"))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    missing = r"has no model.safetensors, tokenizer.json \(or vocab.txt, or vocab.json and merges"
    with pytest.raises(DataError, match=missing):
        checkpoint_folder(str(tmp_path / "half"))
