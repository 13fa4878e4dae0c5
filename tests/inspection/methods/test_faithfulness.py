"""ERASER's comprehensiveness and sufficiency, the bootstrap and the entropy, with numbers."""

import keras
import numpy as np
import pytest

from inspection.methods.faithfulness import (
    BINS_PERCENT,
    bin_sizes,
    measure_faithfulness,
    normalized_entropy,
    removal_curves,
)
from inspection.methods.forward_passes import class_probabilities
from tests.inspection.planted_token import PLANTED, planted_texts, planted_token_classifier


def test_bins_take_a_share_of_the_tokens_and_at_least_one():
    assert bin_sizes(3) == [1, 1, 1, 1, 2]
    assert bin_sizes(200) == [2, 10, 20, 40, 100]


def test_removal_curves_remove_and_keep_the_top_tokens():
    classifier = planted_token_classifier("mean")
    ids = np.array([[3, PLANTED, 5, 6, 0, 0, 0, 0]])
    scores = np.array([[0.1, 0.9, 0.3, 0.2, 0, 0, 0, 0]])
    full = class_probabilities(classifier, ids, [1])
    comprehensiveness, sufficiency = removal_curves(
        classifier, ids, ids != 0, scores, np.array([1]), full
    )
    probability = lambda row: keras.ops.convert_to_numpy(classifier(np.array([row])))[0, 1]  # noqa: E731
    # 4 tokens: every bin removes one token, the planted one, but 50%, which removes two.
    assert comprehensiveness[0, 0] == pytest.approx(full[0] - probability([3, 0, 5, 6, 0, 0, 0, 0]))
    assert comprehensiveness[0, 4] == pytest.approx(full[0] - probability([3, 0, 0, 6, 0, 0, 0, 0]))
    assert sufficiency[0, 0] == pytest.approx(full[0] - probability([0, PLANTED, 0, 0, 0, 0, 0, 0]))
    assert comprehensiveness[0, 0] > 0.5  # without its planted token the text is class 0


def test_normalized_entropy_is_1_when_flat_and_0_when_one_token_has_it_all():
    mask = np.array([[True, True, True, False]])
    np.testing.assert_allclose(normalized_entropy(np.array([[2.0, -2.0, 2.0, 9.0]]), mask), [1.0])
    np.testing.assert_allclose(
        normalized_entropy(np.array([[0.0, 5.0, 0.0, 9.0]]), mask), [0.0], atol=1e-12
    )


def test_faithful_methods_beat_random_and_the_best_is_reported():
    classifier = planted_token_classifier("mean")
    token_ids, labels = planted_texts(40, seed=3)
    report = measure_faithfulness(
        classifier,
        token_ids,
        token_ids != 0,
        "mean",
        methods=("leave_one_out", "gradient_x_input", "random"),
    )
    assert report["examples"] == 40 and report["bins_percent"] == list(BINS_PERCENT)
    methods = report["methods"]
    assert set(methods) == {"leave_one_out", "gradient_x_input", "random"}
    assert report["best_method"] in ("leave_one_out", "gradient_x_input")
    leave_one_out = methods["leave_one_out"]
    assert leave_one_out["vs_random"]["comprehensiveness"]["ci95"][0] > 0
    assert leave_one_out["sufficiency"]["mean"] < methods["random"]["sufficiency"]["mean"]
    assert len(leave_one_out["comprehensiveness_curve"]) == len(BINS_PERCENT)
    assert "vs_random" not in methods["random"]


def test_an_example_without_text_tokens_is_refused():
    classifier = planted_token_classifier("mean")
    token_ids = np.array([[3, 4, 0], [5, 6, 0]])
    with pytest.raises(ValueError, match="at least one text token"):
        measure_faithfulness(
            classifier, token_ids, np.array([[True, True, False], [False] * 3]), "mean"
        )
