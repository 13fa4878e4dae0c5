"""Headline classification metrics from predicted probabilities, shared by train and evaluate."""

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

# Keras clips probabilities to this epsilon in its cross-entropy; so do we, so that the
# loss here matches `model.evaluate` on the same data.
EPSILON = 1e-7


def classification_metrics(labels, probabilities, num_classes):
    """Accuracy, macro and weighted F1 and cross-entropy loss of `probabilities` (N, C).

    Example:

    >>> import numpy as np
    >>> metrics = classification_metrics(
    ...     np.array([0, 1]), np.array([[0.9, 0.1], [0.4, 0.6]]), num_classes=2)
    >>> metrics["accuracy"], round(metrics["loss"], 4)
    (1.0, 0.3081)
    """
    labels = np.asarray(labels, dtype=np.int64)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    predictions = probabilities.argmax(axis=-1)
    classes = list(range(num_classes))
    picked = np.clip(probabilities[np.arange(len(labels)), labels], EPSILON, 1.0)
    return {
        "accuracy": float(accuracy_score(labels, predictions)),
        "macro_f1": float(
            f1_score(labels, predictions, labels=classes, average="macro", zero_division=0)
        ),
        "weighted_f1": float(
            f1_score(labels, predictions, labels=classes, average="weighted", zero_division=0)
        ),
        "loss": float(-np.log(picked).mean()),
        "num_examples": int(len(labels)),
    }
