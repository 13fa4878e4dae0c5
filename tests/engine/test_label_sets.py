"""engine.label_sets: each label's threshold is its best F1 on validation, and the label
sets' metrics are scikit-learn's."""

import numpy as np
from sklearn.metrics import f1_score, hamming_loss

from engine.label_sets import CANDIDATES, choose_thresholds, label_set_metrics


def test_each_threshold_is_the_best_candidate_for_its_label():
    rng = np.random.default_rng(0)
    labels = rng.random((200, 3)) < 0.3
    probabilities = np.clip(labels * 0.4 + rng.random((200, 3)) * 0.6, 0, 1)
    thresholds = choose_thresholds(labels, probabilities)
    for column, threshold in enumerate(thresholds):
        scores = [f1_score(labels[:, column], probabilities[:, column] >= t) for t in CANDIDATES]
        assert f1_score(labels[:, column], probabilities[:, column] >= threshold) == max(scores)


def test_a_label_validation_never_has_keeps_one_half():
    labels = np.array([[1, 0], [0, 0]])
    assert choose_thresholds(labels, np.array([[0.9, 0.7], [0.1, 0.2]]))[1] == 0.5


def test_the_metrics_are_scikit_learns():
    rng = np.random.default_rng(1)
    labels = rng.random((50, 4)) < 0.4
    probabilities = rng.random((50, 4))
    thresholds = np.array([0.3, 0.5, 0.6, 0.4])
    predicted = probabilities >= thresholds
    metrics = label_set_metrics(labels, probabilities, thresholds)
    assert metrics["micro_f1"] == f1_score(labels, predicted, average="micro")
    assert metrics["macro_f1"] == f1_score(labels, predicted, average="macro")
    assert metrics["hamming_loss"] == hamming_loss(labels, predicted)
    assert metrics["subset_accuracy"] == (labels == predicted).all(1).mean()
