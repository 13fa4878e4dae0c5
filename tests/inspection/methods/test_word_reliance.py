"""word_reliance: words of token ids, attributions toward a class, Gardner's test, and the
insertion and deletion effects against a direct computation on a small classifier."""

import numpy as np
import pytest
from scipy.stats import norm

from config import ModelConfig
from inspection.methods.attribution import attribute
from inspection.methods.reliance import insertion_changes
from inspection.methods.word_reliance import (
    LabelAssociation,
    TextWords,
    class_word_scores,
    deletion_effects,
    frequency_matched,
    inserted,
    text_words,
)
from models import build_classifier

WORDS = ["", "[UNK]", "the", "film", "good", "bad", "was"]


@pytest.fixture(scope="module")
def classifier():
    config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    return build_classifier(config, len(WORDS), sequence_length=8, num_classes=3)


def test_words_of_a_word_level_model_skip_unknown_tokens_and_padding():
    rows, pieces = text_words(np.array([[2, 3, 1, 4, 3, 0]]), WORDS)
    assert rows[0].positions == {"the": [0], "film": [1, 4], "good": [3]}
    assert rows[0].boundaries == [0, 1, 2, 3, 4, 5]  # before each word, and the end
    assert pieces == {"the": (2,), "film": (3,), "good": (4,)}


def test_insertion_cuts_at_the_cap_and_keeps_the_word():
    ids = np.array([[2, 3, 4, 0], [5, 0, 0, 0]])
    assert inserted(ids, [1, 1], (6,), cap=8, keep_last=False).tolist() == [
        [2, 6, 3, 4],
        [5, 6, 0, 0],
    ]
    assert inserted(ids, [3, 0], (6,), cap=3, keep_last=False).tolist() == [[2, 3, 6], [6, 5, 0]]


def test_insertion_and_deletion_are_the_changes_of_a_direct_computation(classifier):
    token_ids = np.array([[2, 3, 6, 5, 0], [3, 6, 4, 0, 0], [4, 4, 0, 0, 0]])

    def probability(rows, label):
        return np.asarray(classifier(np.array(rows), training=False))[:, label]

    base = np.asarray(classifier(token_ids, training=False))
    changes = insertion_changes(
        classifier, token_ids, [1, 3, 0], (5,), cap=8, keep_last=False, base=base, batch_size=2
    )
    by_hand = [[2, 5, 3, 6, 5], [3, 6, 4, 5, 0], [5, 4, 4, 0, 0]]
    assert changes.shape == (3, 3)
    for label in range(3):
        np.testing.assert_allclose(
            changes[:, label],
            probability(by_hand, label) - probability(token_ids, label),
            atol=1e-6,
        )
    drops = deletion_effects(classifier, token_ids, [[1], [0], [0, 1]], label=1)
    removed = [[2, 0, 6, 5, 0], [0, 6, 4, 0, 0], [0, 0, 0, 0, 0]]
    np.testing.assert_allclose(
        drops, probability(token_ids, 1) - probability(removed, 1), atol=1e-6
    )


def test_logit_linear_attributions_count_what_separates_the_class(classifier):
    token_ids = np.array([[2, 3, 4, 0], [5, 6, 3, 2]])
    rows, _ = text_words(token_ids, WORDS)
    scores = class_word_scores(
        classifier, token_ids, rows, "mean", "conservative_gradient_x_input", 3
    )
    raw = [
        attribute(
            classifier,
            token_ids,
            "conservative_gradient_x_input",
            "mean",
            classes=np.full(2, label),
        )
        for label in range(3)
    ]
    expected = raw[0] - (raw[1] + raw[2]) / 2  # class 0 against the mean of the others
    assert scores[0][0]["film"] == pytest.approx(expected[0, 1])
    assert scores[0][1]["the"] == pytest.approx(expected[1, 3])
    # They sum to 0 over the classes; rollout explains no class and is left as it is.
    assert sum(scores[label][1]["bad"] for label in range(3)) == pytest.approx(0, abs=1e-9)
    rollout = class_word_scores(classifier, token_ids, rows, "mean", "rollout", 3)
    assert rollout[0] == rollout[2] and rollout[0][0]["film"] > 0


def test_gardner_z_the_lift_and_the_bonferroni_p_value():
    # 30 texts with "w": 24 of class 1, whose prior is 0.4 (40 of 100); "v" in 10 texts.
    rows = [TextWords({"w": [0]}, [])] * 30 + [TextWords({"v": [0]}, [])] * 10
    rows += [TextWords({}, [])] * 60
    labels = np.array([1] * 24 + [0] * 6 + [1] * 4 + [0] * 6 + [1] * 12 + [0] * 48)
    association = LabelAssociation(rows, labels, 2, min_count=10)
    assert association.tests == 4  # two words of 10 texts or more, two classes
    entry = association("w", 1)
    z = (0.8 - 0.4) / np.sqrt(0.4 * 0.6 / 30)
    assert entry["train_count"] == 30 and entry["p_class_given_word"] == pytest.approx(0.8)
    assert entry["lift"] == pytest.approx(2.0)
    assert entry["z"] == pytest.approx(z) and entry["p_value"] == pytest.approx(4 * norm.sf(z))
    assert association("nothere", 0) == {
        "train_count": 0,
        "p_class_given_word": None,
        "lift": None,
        "z": None,
        "p_value": 1.0,
    }
    # "w" favours class 1 beyond chance; "v" (4 of 10 in class 1, the prior) no class.
    assert association.candidates(1, limit=5) == ["w"] and association.candidates(0, 5) == []
    assert association.unassociated() == ["v"]
    # A higher threshold of training texts tests "w" alone.
    assert LabelAssociation(rows, labels, 2, min_count=11).tested == ["w"]


def test_random_words_come_from_the_frequency_band_of_the_top_ones():
    counts = {f"rare{index}": 20 + index for index in range(10)}
    counts |= {f"common{index}": 1000 + index for index in range(10)}
    drawn = frequency_matched(list(counts), counts, ["common0", "rare0"], 2, seed=3)
    assert drawn[0].startswith("common") and drawn[1].startswith("rare")
    assert not {"common0", "rare0"} & set(drawn) and len(set(drawn)) == 2
    assert frequency_matched([], counts, ["common0"], 1) == []
