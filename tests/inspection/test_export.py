import json

import numpy as np
import pytest
import tensorflow as tf

from inspection.attention_file import load_attention
from inspection.export import export_attention, find_text_vectorization
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
    end_to_end, _, attention_model, vectorizer = stand_in
    out_dir = tmp_path_factory.mktemp("export")
    return export_attention(
        attention_model, vectorizer, TEXTS, out_dir, CLASS_NAMES, true_labels=TRUE_LABELS,
        model=end_to_end, batch_size=2, run_info={"model": "stand-in"},
        max_rendered_examples=2, max_viewer_examples=3, verbose=0,
    )


def test_padding_is_trimmed_and_tokens_match_the_vectorizer(stand_in, export):
    vectorizer = stand_in[3]
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


def test_scores_path_matches_fast_path_and_is_recorded(stand_in, export):
    end_to_end = stand_in[0]
    fast_path = end_to_end(tf.constant(TEXTS)).numpy()
    assert 0.0 <= export.max_probability_difference <= 1e-6
    assert export.meta["max_probability_difference"] == export.max_probability_difference
    assert export.manifest["probability_difference"].max() == pytest.approx(
        export.max_probability_difference)
    np.testing.assert_allclose(np.stack(export.manifest["probabilities"]), fast_path, atol=1e-6)
    assert export.manifest["predicted_label_index"].tolist() == fast_path.argmax(-1).tolist()
    assert export.manifest["true_label"].tolist() == [
        "negative", "positive", "positive", "negative", "positive"]


def test_all_outputs_are_written(export):
    directory = export.directory
    assert {path.name for path in (directory / "heatmaps").iterdir()} == {
        "00000_heads.png", "00000_layers.png", "00001_heads.png", "00001_layers.png"}
    bertviz = json.loads((directory / "bertviz" / "00000.json").read_text())
    assert np.array(bertviz["attention"][0]).shape == (1, 2, 5, 5)
    page = (directory / "index.html").read_text()
    assert page.count('"id": "0000') == 3  # max_viewer_examples
    assert export.run_info == {"model": "stand-in"}


def test_precomputed_fast_path_is_accepted(stand_in, tmp_path):
    end_to_end, _, attention_model, vectorizer = stand_in
    texts = TEXTS[:2]
    result = export_attention(
        attention_model, vectorizer, texts, tmp_path, CLASS_NAMES,
        fast_path_probabilities=end_to_end(tf.constant(texts)).numpy(), example_ids=["a", "b"],
        max_rendered_examples=0, verbose=0,
    )
    assert result.example_ids == ["a", "b"]
    assert result.manifest["true_label"].isna().all()


def test_mismatched_fast_path_raises_and_leaves_no_meta(stand_in, tmp_path):
    end_to_end, _, attention_model, vectorizer = stand_in
    wrong = end_to_end(tf.constant(TEXTS)).numpy()
    wrong[3] += [1e-3, -1e-3]
    with pytest.raises(ValueError, match="differ from the plain model's by 0.001 .* '00003'"):
        export_attention(attention_model, vectorizer, TEXTS, tmp_path, CLASS_NAMES,
                         fast_path_probabilities=wrong, max_rendered_examples=0, verbose=0)
    assert not (tmp_path / "meta.json").exists()


def test_exactly_one_fast_path_source_is_required(stand_in, tmp_path):
    end_to_end, _, attention_model, vectorizer = stand_in
    with pytest.raises(ValueError, match="Pass exactly one of fast_path_probabilities"):
        export_attention(attention_model, vectorizer, TEXTS, tmp_path, CLASS_NAMES, verbose=0)


def test_attention_not_masking_padding_is_rejected(stand_in, tmp_path):
    _, classifier, _, vectorizer = stand_in

    def leaky_attention_model(token_ids, training=False):
        length = token_ids.shape[1]
        uniform = np.full((len(token_ids), 1, length, length), 1.0 / length, "float32")
        return {"probabilities": classifier(token_ids).numpy(), "attention_scores": [uniform]}

    with pytest.raises(ValueError, match="padded keys .* exactly zero weight"):
        export_attention(leaky_attention_model, vectorizer, TEXTS[:1], tmp_path, CLASS_NAMES,
                         model=stand_in[0], verbose=0)


def test_class_token_pooling_keeps_position_zero(stand_in, tmp_path):
    _, classifier, attention_model, vectorizer = stand_in

    def class_token_model(token_ids, training=False):
        # Prepend an always-real class token to the stand-in's padded ids and reuse its maps.
        shifted = np.concatenate([np.full((len(token_ids), 1), 2), token_ids[:, :-1]], axis=1)
        outputs = attention_model(shifted, training=False)
        return {"probabilities": classifier(token_ids).numpy(),
                "attention_scores": [np.pad(scores.numpy(), ((0, 0), (0, 0), (0, 1), (0, 1)))
                                     for scores in outputs["attention_scores"]]}

    result = export_attention(class_token_model, vectorizer, ["i loved it"], tmp_path,
                              CLASS_NAMES, model=stand_in[0], pooling="cls", verbose=0,
                              max_rendered_examples=0)
    record = next(result.records())
    assert record.tokens == ["[CLS]", "i", "loved", "it"]
    assert record.word_index == [None, 0, 1, 2]  # the class token is no word of the text
    assert record.attention_scores.shape == (2, 2, 4, 4)
    assert result.pooling == "cls"
    with pytest.raises(ValueError, match="pass pooling='cls'"):
        export_attention(class_token_model, vectorizer, ["i loved it"], tmp_path, CLASS_NAMES,
                         model=stand_in[0], verbose=0)


def test_find_text_vectorization(stand_in):
    end_to_end, classifier, _, vectorizer = stand_in
    assert find_text_vectorization(end_to_end) is vectorizer
    with pytest.raises(ValueError, match="No TextVectorization or WordPieceTokenizer layer"):
        find_text_vectorization(classifier)


def test_load_attention_accepts_a_file_inside_the_export(export):
    assert load_attention(export.directory / "meta.json").example_ids == export.example_ids
