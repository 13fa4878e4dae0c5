"""The benches' non-neural reference: TF-IDF + logistic regression on a run's splits.

One owner, so that every bench that sets a model beside it (bench_accuracy.py on the
built-in datasets, bench_own_file.py on user-style files) fits the same baseline.
"""

import time

import numpy as np

C_VALUES = (1.0, 10.0, 100.0)  # the inverse regularisation strengths tried on validation


def tfidf_lr(splits):
    """TF-IDF (word 1-2 grams, min_df 2, sublinear tf) + logistic regression on `splits`.

    C is chosen on validation accuracy among C_VALUES; the test split is scored once, with
    the chosen C. The wall time covers fitting all three and scoring.

    Args:
        splits: a `data.TextSplits` (train, validation, test as (texts, int labels)).

    Returns:
        {"test": classification metrics, "validation": {"accuracy"}, "C", "wall_time_s"}.

    Example:
    >>> from types import SimpleNamespace
    >>> texts = np.array(["good film", "great film", "bad film", "awful film"] * 5)
    >>> labels = np.array([1, 1, 0, 0] * 5)
    >>> splits = SimpleNamespace(train=(texts, labels), validation=(texts, labels),
    ...                          test=(texts, labels), class_names=["neg", "pos"])
    >>> metrics = tfidf_lr(splits)
    >>> metrics["test"]["accuracy"], metrics["C"]
    (1.0, 1.0)
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from engine.reports import classification_metrics

    start = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    train = vectorizer.fit_transform(splits.train[0])
    validation = vectorizer.transform(splits.validation[0])
    fitted = [LogisticRegression(C=C, max_iter=2000).fit(train, splits.train[1]) for C in C_VALUES]
    scores = [(model.predict(validation) == splits.validation[1]).mean() for model in fitted]
    model = fitted[int(np.argmax(scores))]
    probabilities = model.predict_proba(vectorizer.transform(splits.test[0]))
    return {
        "test": classification_metrics(splits.test[1], probabilities, len(splits.class_names)),
        "validation": {"accuracy": float(max(scores))},
        "C": float(model.C),
        "wall_time_s": round(time.perf_counter() - start, 1),
    }
