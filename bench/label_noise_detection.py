"""bench_label_noise's detection part: a noisy run's suspect ranking, and cleanlab's on the
same split, against the labels the bench flipped. TensorFlow, the run's modules and
cleanlab (the `bench` extra) are imported where they are used: the bench's other parts
need none of them at start-up."""

import json
import time

import numpy as np
from label_noise_data import NOISE

from run_folder import runs


def run_metrics(run_dir):
    """The finished run's metrics.json."""
    return json.loads((run_dir / runs.METRICS_FILE).read_text())


def detection_row(run_dir, flipped, texts, labels):
    """Our scores' and cleanlab's recall among the top 5% and AUROC on one noisy run."""
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    from engine.evaluation.faithfulness import tokenize
    from inspection.methods.data_map import (
        SCORES,
        example_statistics,
        suspect_order,
        suspect_scores,
        with_final_margins,
    )
    from inspection.methods.forward_passes import probabilities
    from run_folder import saved_run

    run = saved_run.load_run(run_dir)
    rebuilt, run_labels = run.load_split("train")
    assert np.array_equal(np.asarray(rebuilt, dtype=str), np.asarray(texts, dtype=str))
    statistics = example_statistics(pd.read_parquet(run_dir / runs.DYNAMICS_FILE), len(texts))
    final = probabilities(run.parts[1], tokenize(run, list(texts)), 256)
    # The run's own label ids: its class order (sorted names) need not be the bench's.
    statistics = with_final_margins(statistics, final, run_labels)
    top = round(NOISE * len(texts))
    row = {"examples": len(texts), "flipped": int(flipped.sum())}
    for score in SCORES:
        scores = suspect_scores(statistics, score)
        order = suspect_order(scores)
        values = np.nan_to_num(scores, nan=-np.inf)
        row[score] = {
            "recall": float(flipped[order[:top]].sum() / flipped.sum()),
            "auroc": float(roc_auc_score(flipped, values)),
        }
    started = time.perf_counter()
    row["cleanlab"] = cleanlab_row(texts, labels, flipped, top)
    row["cleanlab"]["seconds"] = round(time.perf_counter() - started, 1)
    row["random"] = {"recall": NOISE, "auroc": 0.5}
    row["test_accuracy"] = run_metrics(run_dir)["test"]["accuracy"]
    row["train_seconds"] = run_metrics(run_dir)["wall_time_s"]
    return row


def cleanlab_row(texts, labels, flipped, top):
    """cleanlab.find_label_issues on 5-fold cross-validated TF-IDF + LR probabilities."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    features = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(
        [str(text) for text in texts]
    )
    probabilities = cross_val_predict(
        LogisticRegression(C=10, max_iter=2000),
        features,
        labels,
        method="predict_proba",
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
    )
    issues = find_label_issues(labels, probabilities, return_indices_ranked_by="self_confidence")
    quality = get_label_quality_scores(labels, probabilities)
    return {
        "recall": float(flipped[issues[:top]].sum() / flipped.sum()),
        "auroc": float(roc_auc_score(flipped, -quality)),
        "issues": int(len(issues)),
    }


def suspects_of(run_dir, count):
    """The positions of the run's `count` most suspect training labels (`DEFAULT_SCORE`)."""
    import pandas as pd

    from inspection.methods.data_map import example_statistics, suspect_order, suspect_scores
    from run_folder import saved_run

    size = len(saved_run.load_run(run_dir).load_split("train")[0])
    statistics = example_statistics(pd.read_parquet(run_dir / runs.DYNAMICS_FILE), size)
    return suspect_order(suspect_scores(statistics))[:count]
