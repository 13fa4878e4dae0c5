"""train.py with `model.pretrained` naming a DistilBERT, an ELECTRA, a RoBERTa or an
XLM-RoBERTa checkpoint (tiny, saved by `transformers`): it starts from the checkpoint,
fine-tunes, saves, and the saved model predicts raw strings; a DistilBERT reads text pairs
without token types, a RoBERTa and an XLM-RoBERTa as `<s> a </s></s> b </s>`.
(tests/test_train_pretrained.py covers BERT and the options shared by every family.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

import train
from config.files import load_config
from engine.training.starting_weights import starting_weights
from engine.training.starting_weights.checkpoints import read_tensors
from models import get_model_parts, load_end_to_end_model
from tests.helpers import TINY, pretrained_args
from tests.review_fixture import write_pairs_fixture
from tokenization.pairs import join_pair

TEXTS = ["the film was very good !", "bad , bad plot", "Café"]


@pytest.mark.parametrize("model_type", ["distilbert", "electra", "roberta", "xlm-roberta"])
def test_a_familys_checkpoint_fine_tunes_and_its_saved_model_predicts(
    tmp_path, data_file, hf_checkpoint, model_type
):
    folder = hf_checkpoint(model_type)
    assert train.main(pretrained_args(tmp_path, data_file, folder, "training.epochs=1")) == 0
    model = keras.saving.load_model(tmp_path / "tiny" / "model.keras", safe_mode=True)
    probabilities = np.asarray(model(np.array(TEXTS)))
    assert probabilities.shape == (3, 2)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, atol=1e-5)
    _, classifier = get_model_parts(load_end_to_end_model(tmp_path / "tiny" / "model.keras"))
    embedding = classifier.encoder.embedding
    assert hasattr(embedding, "token_type_embedding") == (model_type == "electra")
    assert hasattr(embedding, "embedding_projection") == (model_type == "electra")


@pytest.mark.parametrize(
    "model_type, ours, theirs",
    [
        (
            "distilbert",
            lambda encoder: encoder.blocks[1].feed_forward.output_dense.kernel,
            "transformer.layer.1.ffn.lin2.weight",
        ),
        (
            "electra",
            lambda encoder: encoder.embedding.embedding_projection.kernel,
            "embeddings_project.weight",
        ),
    ],
)
def test_the_classifier_starts_from_the_familys_tensors(
    tmp_path, data_file, hf_checkpoint, model_type, ours, theirs
):
    folder = hf_checkpoint(model_type)
    config = load_config(TINY, pretrained_args(tmp_path, data_file, folder)[3:])
    weights = starting_weights(config)
    data, _, steps = train.load_data(config, weights)
    classifier, _ = train.build_model(config, data, tf.distribute.get_strategy(), steps, weights)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(ours(classifier.encoder)), read_tensors(folder)[theirs].T
    )


def test_a_distilbert_reads_a_pair_with_no_token_types(tmp_path, hf_checkpoint):
    from run_folder import saved_run
    from tests.models.bert_reference import TINY_VOCABULARY

    pairs_file = write_pairs_fixture(tmp_path / "pairs.csv")
    args = pretrained_args(
        tmp_path,
        pairs_file,
        hf_checkpoint("distilbert"),
        "dataset.text_column=[first, second]",
        "training.epochs=1",
    )
    assert train.main(args) == 0
    vectorizer, classifier = saved_run.load_run(tmp_path / "tiny").parts
    ids = vectorizer(np.array([join_pair("the film", "good")], dtype=object)).numpy()[0]
    assert [TINY_VOCABULARY[i] for i in ids if i] == [
        "[CLS]", "the", "film", "[SEP]", "good", "[SEP]"
    ]  # fmt: skip
    # Pretrained without segments, DistilBERT tells the sides apart by [SEP] alone.
    assert classifier.encoder.separator_id is None
    assert not hasattr(classifier.encoder.embedding, "token_type_embedding")


@pytest.mark.parametrize("model_type", ["roberta", "xlm-roberta"])
def test_a_roberta_fine_tunes_on_pairs_and_its_reloaded_model_predicts_the_same(
    tmp_path, hf_checkpoint, model_type
):
    from run_folder import saved_run

    pairs_file = write_pairs_fixture(tmp_path / "pairs.csv")
    folder = hf_checkpoint(model_type)
    args = pretrained_args(
        tmp_path, pairs_file, folder, "dataset.text_column=[first, second]", "training.epochs=1"
    )
    assert train.main(args) == 0
    vectorizer, classifier = saved_run.load_run(tmp_path / "tiny").parts
    ids = vectorizer(np.array([join_pair("the film", "good")], dtype=object)).numpy()[0]
    vocabulary = vectorizer.get_vocabulary()
    # Our ids name the tokens: <pad> is 0, and the string of each id is the checkpoint's.
    assert vocabulary[0] == "<pad>" and ids[-1] == 0
    expected = Tokenizer.from_file(str(folder / "tokenizer.json")).encode("the film", "good")
    assert [vocabulary[i] for i in ids if i] == expected.tokens
    assert (
        "".join(expected.tokens)
        == {
            "roberta": "<s>theĠfilm</s></s>good</s>",
            "xlm-roberta": "<s>▁the▁film</s></s>▁good</s>",
        }[model_type]
    )
    assert not hasattr(classifier.encoder.embedding, "token_type_embedding")
    model = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    safe = keras.saving.load_model(tmp_path / "tiny" / "model.keras", safe_mode=True)
    texts = np.array([join_pair("the film", "good"), join_pair("bad  plot", "a film ")])
    np.testing.assert_allclose(np.asarray(safe(texts)), np.asarray(model(texts)), atol=1e-6)
    assert np.asarray(model(texts)).shape == (2, 2)
