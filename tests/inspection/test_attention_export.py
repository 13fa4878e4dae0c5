import json
import types

import numpy as np
import pytest
import tensorflow as tf

from inspection.attention_export import (
    ScoringOptions,
    WritingOptions,
    export_attention,
    find_text_vectorization,
)
from inspection.attention_file.reader import load_attention
from tests.inspection.stand_in_model import build_stand_in_models

CLASS_NAMES = ["negative", "positive"]
TEXTS = [
    "the film was not good",
    "i loved it",
    "",  # no real token at all
    "the plot was boring and the acting was bad at all very very",  # truncated to 12 tokens
    "great story",
]
TRUE_LABELS = [0, 1, 1, "negative", "positive"]


@pytest.fixture(scope="module")
def stand_in():
    return build_stand_in_models(sequence_length=12)


@pytest.fixture(scope="module")
def export(stand_in, tmp_path_factory):
    _, classifier, vectorizer = stand_in
    out_dir = tmp_path_factory.mktemp("export")
    return export_attention(
        classifier,
        vectorizer,
        TEXTS,
        out_dir,
        CLASS_NAMES,
        true_labels=TRUE_LABELS,
        scoring=ScoringOptions(batch_size=2),
        writing=WritingOptions(
            run_info={"model": "stand-in"}, heatmap_examples=2, viewer_examples=3, verbose=0
        ),
    )


def test_padding_is_trimmed_and_tokens_match_the_vectorizer(stand_in, export):
    vectorizer = stand_in[2]
    token_ids = vectorizer(tf.constant(TEXTS)).numpy()  # (5, 12)
    vocabulary = vectorizer.get_vocabulary()
    for record, ids in zip(export.records(), token_ids, strict=True):
        real_ids = ids[ids != 0]
        assert record.tokens == [vocabulary[token_id] for token_id in real_ids]
        assert record.attention_scores.shape == (2, 2, len(real_ids), len(real_ids))
        # Word-level tokens: each is a word of its own, none special.
        assert record.word_index == list(range(len(real_ids)))
        assert record.words == record.tokens
    assert export.manifest["num_tokens"].tolist() == [5, 3, 0, 12, 2]


def test_rows_sum_to_one_over_real_tokens(export):
    for record in export.records():
        if record.num_tokens:
            np.testing.assert_allclose(record.attention_scores.sum(axis=-1), 1.0, atol=1e-5)
            assert record.rollout_importance.sum() == pytest.approx(1.0)


def test_the_probabilities_are_the_end_to_end_models(stand_in, export):
    end_to_end = stand_in[0]
    expected = end_to_end(tf.constant(TEXTS)).numpy()
    # One forward pass: there is no second path to compare with.
    assert export.max_probability_difference is None
    assert export.meta["max_probability_difference"] is None
    assert export.meta["probability_tolerance"] is None
    assert export.manifest["probability_difference"].isna().all()
    np.testing.assert_allclose(np.stack(export.manifest["probabilities"]), expected, atol=1e-6)
    assert export.manifest["predicted_label_index"].tolist() == expected.argmax(-1).tolist()
    assert export.manifest["true_label"].tolist() == [
        "negative",
        "positive",
        "positive",
        "negative",
        "positive",
    ]


def test_all_outputs_are_written(export):
    directory = export.directory
    assert {path.name for path in (directory / "heatmaps").iterdir()} == {
        "00000_heads.png",
        "00000_layers.png",
        "00001_heads.png",
        "00001_layers.png",
    }
    bertviz = json.loads((directory / "bertviz" / "00000.json").read_text())
    assert np.array(bertviz["attention"][0]).shape == (1, 2, 5, 5)
    page = (directory / "index.html").read_text()
    assert page.count('"id": "0000') == 3  # max_viewer_examples
    assert export.run_info == {"model": "stand-in"}


def test_example_ids_and_unknown_labels(stand_in, tmp_path):
    _, classifier, vectorizer = stand_in
    result = export_attention(
        classifier,
        vectorizer,
        TEXTS[:2],
        tmp_path,
        CLASS_NAMES,
        example_ids=["a", "b"],
        writing=WritingOptions(heatmap_examples=0, verbose=0),
    )
    assert result.example_ids == ["a", "b"]
    assert result.manifest["true_label"].isna().all()


class LeakyAttention:
    """Follows the classifier's call contract, but its one head attends to padding too."""

    def __init__(self, classifier):
        self.classifier = classifier
        self.encoder = types.SimpleNamespace(head_counts=[1])  # the one block's one head

    def __call__(self, token_ids, training=False, return_attention_scores=False, **kwargs):
        probabilities = self.classifier(token_ids, training=training)
        if not return_attention_scores:
            return probabilities
        length = token_ids.shape[1]
        uniform = np.full((len(token_ids), 1, length, length), 1.0 / length, "float32")
        return {"probabilities": probabilities, "attention_scores": [uniform]}


def test_attention_not_masking_padding_is_rejected(stand_in, tmp_path):
    _, classifier, vectorizer = stand_in
    with pytest.raises(ValueError, match="padded keys .* exactly zero weight"):
        export_attention(
            LeakyAttention(classifier),
            vectorizer,
            TEXTS[:1],
            tmp_path,
            CLASS_NAMES,
            scoring=ScoringOptions(methods=["rollout"]),
            writing=WritingOptions(verbose=0),
        )


def test_class_token_pooling_keeps_position_zero(tmp_path):
    _, classifier, vectorizer = build_stand_in_models(sequence_length=12, pooling="cls")
    assert classifier.encoder.class_token is not None
    result = export_attention(
        classifier,
        vectorizer,
        ["i loved it"],
        tmp_path,
        CLASS_NAMES,
        scoring=ScoringOptions(pooling="cls"),
        writing=WritingOptions(heatmap_examples=0, verbose=0),
    )
    record = next(result.records())
    assert record.tokens == ["[CLS]", "i", "loved", "it"]
    assert record.word_index == [None, 0, 1, 2]  # the class token is no word of the text
    assert record.attention_scores.shape == (2, 2, 4, 4)
    assert result.pooling == "cls"
    with pytest.raises(ValueError, match="pass pooling='cls'"):
        export_attention(
            classifier,
            vectorizer,
            ["i loved it"],
            tmp_path / "mean",
            CLASS_NAMES,
            writing=WritingOptions(verbose=0),
        )


def test_find_text_vectorization(stand_in):
    end_to_end, classifier, vectorizer = stand_in
    assert find_text_vectorization(end_to_end) is vectorizer
    with pytest.raises(ValueError, match="No TextVectorization or WordPieceTokenizer layer"):
        find_text_vectorization(classifier)


def test_load_attention_accepts_a_file_inside_the_export(export):
    assert load_attention(export.directory / "meta.json").example_ids == export.example_ids


def test_a_pruned_classifier_exports_its_heads_at_their_original_numbers(stand_in, tmp_path):
    from inspection.methods.attribution import METHODS
    from inspection.methods.rollout import token_importance
    from models.pruning import pruned_classifier

    _, classifier, vectorizer = stand_in
    pruned = pruned_classifier(classifier, [(0, 0)])  # blocks of 1 and 2 heads
    assert pruned.encoder.head_counts == [1, 2]
    result = export_attention(
        pruned,
        vectorizer,
        TEXTS[:2],
        tmp_path,
        CLASS_NAMES,
        scoring=ScoringOptions(kept_heads=[[1], [0, 1]]),
        writing=WritingOptions(heatmap_examples=1, verbose=0),
    )
    assert result.kept_heads == [[1], [0, 1]] and result.num_heads == 2
    assert result.attribution_methods == list(METHODS)  # every method takes unequal blocks
    # The pruned model's maps are the full model's with head (0, 0) masked, at its numbers.
    token_ids = vectorizer(tf.constant(TEXTS[:1])).numpy()[:, :5]  # its 5 real tokens
    masked = classifier(
        token_ids,
        head_mask=np.array([[0.0, 1.0], [1.0, 1.0]], "float32"),
        return_attention_scores=True,
    )["attention_scores"]
    record = result.record("00000")
    scores = record.attention_scores  # (2, 2, 5, 5)
    assert not scores[0, 0].any()
    np.testing.assert_allclose(scores[0, 1], masked[0][0, 1], atol=1e-5)
    np.testing.assert_allclose(scores[1], masked[1][0], atol=1e-5)
    # Rollout averages the model's 3 heads: layer 0 is head 1 alone, not half of it.
    real = np.stack([np.stack([masked[0][0, 1]] * 2), masked[1][0]])  # (2, 2, 5, 5)
    np.testing.assert_allclose(record.rollout_importance, token_importance(real), atol=1e-5)
    diluted = scores.mean(axis=1, keepdims=True)  # (2, 1, 5, 5): the removed head's 0 in
    assert np.abs(token_importance(diluted) - record.rollout_importance).max() > 1e-3
