"""Which training labels look wrong: the training dynamics summed up per example.

Training records, per epoch, each training example's probability of its own label, its
margin (own logit minus the largest other) and whether it was right
(`engine.training.dynamics.TrainingDynamics`). Per example, over the epochs:

- confidence: the mean probability of its own label, and variability: its standard
  deviation (Data Cartography, Swayamdipta et al. 2020); correctness: the share of epochs
  it was right;
- aum: the mean margin (Area Under the Margin, Pleiss et al. 2020); first_margin: the
  margin in the first epoch that saw the example (before the model could memorise it);
- final_margin: the saved model's margin on the example, read without dropout after
  training (`with_final_margins`), the one measure a run of one or two epochs has in full.

A mislabelled example is one the model learns late or never: low confidence, negative
margin. `suspect_scores` ranks by the score the label-noise bench chose
(`bench/bench_label_noise.py`, docs/data_quality.md).
"""

import hashlib

import numpy as np
import pandas as pd

# The score `--suspects` ranks by; the bench measured each of SCORES (docs/data_quality.md).
DEFAULT_SCORE = "aum"
# Region cuts of the data map (Swayamdipta et al. name the regions; the cuts are ours).
AMBIGUOUS_VARIABILITY = 0.2
EASY_CONFIDENCE = 0.5
REGION_RULE = (
    f"ambiguous: variability at least {AMBIGUOUS_VARIABILITY}; otherwise "
    f"easy-to-learn: confidence at least {EASY_CONFIDENCE}, else hard-to-learn"
)


def example_statistics(dynamics: pd.DataFrame, num_examples: int) -> pd.DataFrame:
    """Per training position (0 .. `num_examples` - 1): confidence, variability,
    correctness, aum and the epochs the example was seen in (0: never; its numbers NaN).

    `dynamics`: the rows of dynamics.parquet (epoch, position, probability, margin, correct).

    Example:
    >>> rows = pd.DataFrame({"epoch": [1, 2, 1, 2], "position": [0, 0, 1, 1],
    ...                      "probability": [0.2, 0.6, 0.9, 0.9], "margin": [-1., 1., 2., 2.],
    ...                      "correct": [False, True, True, True]})
    >>> example_statistics(rows, 3).round(2).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'confidence': [0.4, 0.9, nan], 'variability': [0.2, 0.0, nan],
     'correctness': [0.5, 1.0, nan], 'aum': [0.0, 2.0, nan], 'first_margin': [-1.0, 2.0, nan],
     'epochs': [2, 2, 0]}
    """
    grouped = dynamics.sort_values("epoch", kind="stable").groupby("position")
    statistics = pd.DataFrame(
        {
            "confidence": grouped["probability"].mean(),
            # The population deviation, as Data Cartography computes it.
            "variability": grouped["probability"].std(ddof=0),
            "correctness": grouped["correct"].mean(),
            "aum": grouped["margin"].mean(),
            "first_margin": grouped["margin"].first(),
            "epochs": grouped["epoch"].count(),
        }
    ).reindex(np.arange(num_examples))
    statistics["epochs"] = statistics["epochs"].fillna(0).astype(int)
    statistics.index.name = "position"
    return statistics


def with_final_margins(statistics: pd.DataFrame, probabilities, labels) -> pd.DataFrame:
    """`statistics` with `final_margin`: each example's log-probability of its label minus
    the largest other's under the saved model (its logit margin, as training records it).

    Example:
    >>> statistics = pd.DataFrame({"aum": [1.0, -1.0]})
    >>> with_final_margins(statistics, np.array([[0.8, 0.2], [0.8, 0.2]]), [0, 1])[
    ...     "final_margin"].round(3).tolist()
    [1.386, -1.386]
    """
    log_probabilities = np.log(np.maximum(np.asarray(probabilities, dtype=np.float64), 1e-12))
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.arange(len(labels))
    own = log_probabilities[rows, labels]
    log_probabilities[rows, labels] = -np.inf
    return statistics.assign(final_margin=own - log_probabilities.max(axis=1))


def text_hashes(texts) -> np.ndarray:
    """A 16-hex-digit BLAKE2b hash of each text (UTF-8): the file's key beside the position.

    Example:
    >>> first, again, other = text_hashes(["a", "a", "b"])
    >>> first == again, first == other, len(first)
    (True, False, 16)
    """
    return np.array(
        [hashlib.blake2b(str(text).encode(), digest_size=8).hexdigest() for text in texts],
        dtype=object,
    )


def recorded_texts_match(dynamics: pd.DataFrame, texts) -> bool:
    """Whether `texts` (the training split rebuilt) are those whose dynamics were recorded:
    every recorded position holds a text of the recorded hash."""
    first = dynamics.drop_duplicates("position")
    positions = first["position"].to_numpy()
    if positions.max(initial=-1) >= len(texts):
        return False
    return np.array_equal(
        text_hashes(np.asarray(texts, dtype=object)[positions]), first["text_hash"].to_numpy()
    )


def suspect_scores(statistics: pd.DataFrame, score: str = DEFAULT_SCORE) -> np.ndarray:
    """How suspect each example's label is (higher: more), by `score`, one of SCORES.

    Example:
    >>> statistics = pd.DataFrame({"confidence": [0.9, 0.2], "aum": [2.0, -1.0]})
    >>> suspect_scores(statistics).tolist(), suspect_scores(statistics, "confidence").tolist()
    ([-2.0, 1.0], [0.09999999999999998, 0.8])
    """
    if score not in SCORES:
        raise ValueError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    return np.asarray(SCORES[score](statistics), dtype=float)


def suspect_order(scores: np.ndarray) -> np.ndarray:
    """Positions by their `suspect_scores`, most suspect first; examples never seen (NaN)
    left out.

    Example:
    >>> suspect_order(suspect_scores(pd.DataFrame({"aum": [2.0, np.nan, -1.0, 0.5]})))
    array([2, 3, 0])
    """
    order = np.argsort(-scores, kind="stable")  # NaN sorts last
    return order[~np.isnan(scores[order])]


def _rank(values):
    return pd.Series(values).rank(pct=True).to_numpy()


SCORES = {
    # The negative area under the margin: a label the model argues against, epoch after epoch.
    "aum": lambda statistics: -statistics["aum"].to_numpy(),
    # One minus the mean probability of the label (Data Cartography's hard-to-learn).
    "confidence": lambda statistics: 1 - statistics["confidence"].to_numpy(),
    # The mean of both ranks (between 0 and 1).
    "aum_and_confidence": lambda statistics: (
        (_rank(-statistics["aum"].to_numpy()) + _rank(-statistics["confidence"].to_numpy())) / 2
    ),
    # The first epoch's margin: early learning fits clean labels before noisy ones.
    "first_margin": lambda statistics: -statistics["first_margin"].to_numpy(),
    # The saved model's margin (`with_final_margins`).
    "final_margin": lambda statistics: -statistics["final_margin"].to_numpy(),
    # The mean of the ranks of aum and the saved model's margin.
    "aum_and_final": lambda statistics: (
        (_rank(-statistics["aum"].to_numpy()) + _rank(-statistics["final_margin"].to_numpy())) / 2
    ),
}


def regions(statistics: pd.DataFrame) -> pd.Series:
    """Each example's data map region (REGION_RULE); examples never seen: None.

    Example:
    >>> statistics = pd.DataFrame({"confidence": [0.9, 0.5, 0.1, np.nan],
    ...                            "variability": [0.05, 0.3, 0.1, np.nan]})
    >>> regions(statistics).tolist()
    ['easy-to-learn', 'ambiguous', 'hard-to-learn', None]
    """
    region = np.where(
        statistics["variability"] >= AMBIGUOUS_VARIABILITY,
        "ambiguous",
        np.where(statistics["confidence"] >= EASY_CONFIDENCE, "easy-to-learn", "hard-to-learn"),
    ).astype(object)
    region[statistics["confidence"].isna().to_numpy()] = None
    return pd.Series(region, index=statistics.index, dtype=object)


def region_shares(statistics: pd.DataFrame) -> dict:
    """{region: share of the examples seen}, in the order easy, ambiguous, hard."""
    counts = regions(statistics).value_counts()
    seen = max(int(counts.sum()), 1)
    return {
        name: round(float(counts.get(name, 0)) / seen, 4)
        for name in ("easy-to-learn", "ambiguous", "hard-to-learn")
    }
