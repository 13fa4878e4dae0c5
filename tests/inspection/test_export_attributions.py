"""The attribution scores of an attention export: every method, laid out over the export's
tokens, summed per word, and leave-one-out equal to removing each token by hand; on the
planted-token classifier (class 1 exactly when token 7 is in the text), a word-level
`pooling: cls` classifier and a WordPiece checkpoint."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ModelConfig
from inspection.attention_export import ScoringOptions, WritingOptions, export_attention
from inspection.export_attributions import check_methods
from inspection.methods.attribution import METHODS, attribute
from models import build_classifier, build_end_to_end_model
from tests.inspection.planted_token import LENGTH, PLANTED, planted_token_classifier

CLASS_NAMES = ["without 7", "with 7"]
# TextVectorization numbers its vocabulary from 2 (0 padding, 1 out of vocabulary), so word
# "w<i>" is token id i: "w7" is the planted token.
VOCABULARY = [f"w{token_id}" for token_id in range(2, 30)]
TEXTS = ["w3 w7 w12 w5", "w4 w9 w20", "w11 w7", "w2 w3 w4 w5 w6 w8 w9 w10"]


def export_of(classifier, vectorizer, texts, directory, pooling, methods=None):
    export = export_attention(
        classifier,
        vectorizer,
        texts,
        directory,
        CLASS_NAMES,
        scoring=ScoringOptions(methods, pooling, batch_size=3),
        writing=WritingOptions(heatmap_examples=0, viewer_examples=0, verbose=0),
    )
    # The export's probabilities are the end-to-end model's, the one users save and load.
    end_to_end = build_end_to_end_model(vectorizer, classifier)
    expected = keras.ops.convert_to_numpy(end_to_end(tf.constant(list(texts))))
    np.testing.assert_allclose(np.stack(export.manifest["probabilities"]), expected, atol=1e-5)
    return export


def word_vectorizer():
    return keras.layers.TextVectorization(output_sequence_length=LENGTH, vocabulary=VOCABULARY)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The planted-token classifier's export of TEXTS with every method, and its ids."""
    classifier, vectorizer = planted_token_classifier(), word_vectorizer()
    export = export_of(classifier, vectorizer, TEXTS, tmp_path_factory.mktemp("planted"), "mean")
    return classifier, vectorizer(tf.constant(TEXTS)).numpy(), export


def probabilities(classifier, token_ids):
    return np.asarray(classifier(np.asarray(token_ids), training=False), dtype=np.float64)


def test_every_method_scores_every_token_and_is_timed(planted):
    _, token_ids, export = planted
    assert export.format_version == 4 and export.attribution_methods == list(METHODS)
    assert list(export.meta["attribution_seconds_per_example"]) == list(METHODS)
    assert export.meta["attribution_seconds_per_example"]["rollout"] == 0.0
    assert export.meta["attribution_seconds_per_example"]["integrated_gradients"] > 0
    for example_id, ids in zip(export.example_ids, token_ids, strict=True):
        scores = export.attributions(example_id)
        assert list(scores) == list(METHODS)
        assert {values.shape for values in scores.values()} == {((ids != 0).sum(),)}
        record = export.record(example_id)
        np.testing.assert_array_equal(scores["rollout"], record.rollout_importance)


def test_scores_are_what_attribute_gives_for_the_predicted_class(planted):
    classifier, token_ids, export = planted
    predicted = export.manifest["predicted_label_index"].to_numpy()
    for method in METHODS:
        if method == "random":  # seeded by each batch's first example (batches of 3)
            expected = np.concatenate(
                [
                    attribute(
                        classifier, token_ids[:3], method, "mean", classes=predicted[:3], seed=0
                    ),
                    attribute(
                        classifier, token_ids[3:], method, "mean", classes=predicted[3:], seed=3
                    ),
                ]
            )
        else:
            expected = attribute(classifier, token_ids, method, "mean", classes=predicted)
        for example_id, ids, row in zip(export.example_ids, token_ids, expected, strict=True):
            np.testing.assert_allclose(
                export.attributions(example_id)[method], row[ids != 0], atol=1e-5, err_msg=method
            )


def test_leave_one_out_is_removing_each_token_by_hand(planted):
    classifier, token_ids, export = planted
    for example_id, ids in zip(export.example_ids, token_ids, strict=True):
        predicted = int(np.argmax(probabilities(classifier, ids[None])))
        removed = np.repeat(ids[None], (ids != 0).sum(), axis=0)  # one row per real token
        removed[np.arange(len(removed)), np.flatnonzero(ids)] = 0
        drops = (
            probabilities(classifier, ids[None])[0, predicted]
            - probabilities(classifier, removed)[:, predicted]
        )
        # float32 sums of a batch of another size round differently (1.07e-6 seen once).
        np.testing.assert_allclose(
            export.attributions(example_id)["leave_one_out"], drops, atol=1e-5
        )


def test_the_planted_token_is_what_leave_one_out_ranks_first(planted):
    _, _, export = planted
    for example_id, words in zip(export.example_ids, export.manifest["words"], strict=True):
        if f"w{PLANTED}" in words:
            scores = export.word_attributions(example_id)["leave_one_out"]
            assert words[int(np.argmax(scores))] == f"w{PLANTED}"
            assert scores.max() > 0.5  # removing it flips the prediction


def test_the_learned_class_token_gets_zero_and_the_words_keep_their_scores(tmp_path):
    keras.utils.set_random_seed(1)
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, pooling="cls")
    classifier = build_classifier(config, len(VOCABULARY) + 2, LENGTH, num_classes=2)
    export = export_of(
        classifier,
        word_vectorizer(),
        TEXTS[:2],
        tmp_path,
        "cls",
        methods=["rollout", "leave_one_out", "gradient_x_input"],
    )
    assert export.attribution_methods == ["rollout", "gradient_x_input", "leave_one_out"]
    ids = word_vectorizer()(tf.constant(TEXTS[:2])).numpy()
    expected = attribute(classifier, ids, "gradient_x_input", "cls")  # (2, T): no class token
    for example_id, row_ids, row in zip(export.example_ids, ids, expected, strict=True):
        record = export.record(example_id)
        assert record.tokens[0] == "[CLS]" and record.special[0]
        scores = export.attributions(example_id)
        assert {float(values[0]) for values in scores.values()} == {0.0}
        np.testing.assert_allclose(scores["gradient_x_input"][1:], row[row_ids != 0], atol=1e-5)
        assert scores["rollout"][1:].tolist() == record.rollout_importance[1:].tolist()
        # Words are the tokens after the class token, each its own score.
        for method, words in export.word_attributions(example_id).items():
            assert words.tolist() == scores[method][1:].tolist()


def test_word_pieces_sum_into_their_words(tmp_path, tiny_checkpoint):
    from engine.training.starting_weights import load_checkpoint_into
    from engine.training.starting_weights.checkpoints import read_checkpoint

    checkpoint = read_checkpoint(tiny_checkpoint)
    config = ModelConfig(pretrained=str(tiny_checkpoint), pooling="cls")
    classifier = build_classifier(config, None, None, num_classes=2, checkpoint=checkpoint)
    load_checkpoint_into(classifier, checkpoint)
    export = export_of(
        classifier,
        checkpoint.tokenizer(16),
        ["the film was acting", "good plays!"],
        tmp_path,
        "cls",
    )
    first, second = export.records()
    assert first.tokens == ["[CLS]", "the", "film", "was", "act", "##ing", "[SEP]"]
    assert first.word_pieces[3] == ["act", "##ing"] and second.word_pieces[1] == ["play", "##s"]
    for record in (first, second):
        scores = export.attributions(record.example_id)
        words = export.word_attributions(record.example_id)
        for method in METHODS:
            expected = [
                sum(
                    scores[method][position]
                    for position, word in enumerate(record.word_index)
                    if word == index
                )
                for index in range(len(record.words))
            ]
            np.testing.assert_allclose(words[method], expected, rtol=1e-12, atol=1e-15)
        # "[CLS]" and "[SEP]" are token ids: scored, but in no word.
        assert scores["leave_one_out"][[0, -1]].tolist() != [0.0, 0.0]


def test_methods_are_checked():
    assert check_methods(None, classifier=None) == ("rollout",)
    assert check_methods(None, classifier=object()) == METHODS
    with pytest.raises(ValueError, match="methods must be names from .* 'shap'"):
        check_methods(["rollout", "shap"], classifier=object())
    with pytest.raises(ValueError, match=r"methods \['leave_one_out'\] need the classifier"):
        check_methods(["leave_one_out"], classifier=None)
    with pytest.raises(ValueError, match="not one string"):
        check_methods("rollout", classifier=None)
