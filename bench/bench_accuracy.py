"""Trains every dataset config and the keras.io example model; prints the accuracy table.

Usage:
    python bench/bench_accuracy.py                        # all five datasets, both models
    python bench/bench_accuracy.py --datasets bbc_news reuters_r8
    python bench/bench_accuracy.py --reuse                # reuse finished runs, train the rest
    python bench/bench_accuracy.py --reuse --no-train     # only print the table

For each dataset, `configs/<dataset>.yaml` is trained, TF-IDF (word 1-2 grams) + logistic
regression is fitted (C chosen on validation), and the keras.io "Text
classification with Transformer" model (one block, embed 32, 2 heads of size 32, ff 32,
learned positions, average pooling over all positions, Dense(20) head; Adam 1e-3, batch 32,
20k vocabulary, 200 tokens) on the same splits, through the same train.py code and under the
same protocol as ours: the recipe's epoch budget and early stopping on validation.
Runs go to bench/results/runs/; the table (test accuracy, macro-F1, wall time, published
anchors) is printed and written to bench/results/accuracy.md and .json. Train one dataset
at a time on shared machines: it is CPU-bound.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DATASETS = ("reuters_r8", "reuters_r52", "twenty_newsgroups", "rotten_tomatoes", "bbc_news")

# Published test accuracies (%) of from-scratch models: Text GCN (Yao et al., AAAI 2019,
# Table 2) for R8/R52/20NG, Kim (2014) CNN-rand for MR; the naive Bayes and linear SVM
# figures are the reference points for our splits of Rotten Tomatoes and BBC News.
ANCHORS = {
    "reuters_r8": "TF-IDF+LR 93.7, CNN 94.0, fastText 96.1, Text GCN 97.1",
    "reuters_r52": "TF-IDF+LR 87.0, CNN 85.4, fastText 92.8, Text GCN 93.6",
    "twenty_newsgroups": "TF-IDF+LR 83.2, CNN 76.9, fastText 79.4, Text GCN 86.3",
    "rotten_tomatoes": "CNN-rand 76.1, multinomial NB ~78.6",
    "bbc_news": "TF-IDF + linear SVM ~98",
}

# The keras.io example model, expressed in our schema. mask_zero=false: the example's
# embedding does not mask, so its average pooling includes padding. Its own
# hyperparameters, but our protocol: the recipe's epoch budget, early stopping and
# best-epoch restore (the example itself trains a fixed 2 epochs).
KERAS_IO_EXAMPLE = [
    "text.vocabulary_size=20000",
    "text.sequence_length=200",
    "model.d_model=32",
    "model.num_heads=2",
    "model.key_dim=32",
    "model.num_layers=1",
    "model.intermediate_dim=32",
    "model.dropout=0.1",
    "model.attention_dropout=0.0",
    "model.activation=relu",
    "model.positional_encoding=learned",
    "model.mask_zero=false",
    "model.norm_first=false",
    "model.layer_norm_epsilon=1e-6",
    "model.pooling=mean",
    "model.head_hidden_dim=20",
    "training.batch_size=32",
    "training.optimizer=adam",
    "training.learning_rate=1e-3",
    "training.weight_decay=0",
    "training.warmup_fraction=0",
    "training.schedule=constant",
    "training.clipnorm=null",
    "training.label_smoothing=0",
]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--reuse", action="store_true",
                        help="reuse finished runs in bench/results/runs instead of retraining")
    parser.add_argument("--no-train", action="store_true",
                        help="train nothing; report the finished runs only")
    parser.add_argument("--skip-baseline", action="store_true",
                        help="do not train the keras.io example model")
    return parser.parse_args(argv)


def run(dataset, baseline, reuse, no_train):
    """Metrics of one run (trained now, or read back); None when absent and not trained."""
    from config import load_config
    from runs import METRICS_FILE
    from train import run_training

    name = f"{dataset}_kerasio" if baseline else dataset
    run_dir = RESULTS / "runs" / name
    if (reuse or no_train) and (run_dir / METRICS_FILE).exists():
        return json.loads((run_dir / METRICS_FILE).read_text())
    if no_train:
        return None
    overrides = [f"output.root={RESULTS / 'runs'}", f"output.name={name}"]
    if baseline:
        overrides += KERAS_IO_EXAMPLE
    config = load_config(ROOT / "configs" / f"{dataset}.yaml", overrides)
    print(f"\n=== {name} ===", flush=True)
    return run_training(config, overwrite=True).metrics


def tfidf_baseline(dataset, reuse, no_train):
    """TF-IDF (word 1-2 grams) + logistic regression on the recipe's splits.

    C is chosen on validation accuracy among 1, 10 and 100; the test split is scored once,
    with the chosen C. The wall time covers fitting all three and scoring.
    """
    import time

    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from config import load_config
    from data import load_text_splits
    from reports import classification_metrics

    path = RESULTS / "runs" / f"{dataset}_tfidf" / "metrics.json"
    if (reuse or no_train) and path.exists():
        return json.loads(path.read_text())
    if no_train:
        return None
    print(f"\n=== {dataset}_tfidf ===", flush=True)
    splits = load_text_splits(load_config(ROOT / "configs" / f"{dataset}.yaml").dataset)
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    train = vectorizer.fit_transform(splits.train[0])
    validation = vectorizer.transform(splits.validation[0])
    fitted = [LogisticRegression(C=C, max_iter=2000).fit(train, splits.train[1])
              for C in (1.0, 10.0, 100.0)]
    scores = [(model.predict(validation) == splits.validation[1]).mean() for model in fitted]
    model = fitted[int(np.argmax(scores))]
    probabilities = model.predict_proba(vectorizer.transform(splits.test[0]))
    metrics = {
        "test": classification_metrics(splits.test[1], probabilities, len(splits.class_names)),
        "validation_accuracy": float(max(scores)), "C": float(model.C),
        "wall_time_s": round(time.perf_counter() - start, 1),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def format_table(results):
    header = ("dataset", "ours: test acc", "macro-F1", "epochs", "wall time",
              "keras.io example: test acc", "wall time", "TF-IDF + LR: test acc", "macro-F1",
              "wall time", "published anchors (test acc %)")
    rows = []
    for dataset, (ours, example, tfidf) in results.items():
        def cell(metrics, key, scale=100.0, digits=2):
            if metrics is None:
                return "-"
            return f"{metrics['test'][key] * scale:.{digits}f}"

        def wall(metrics):
            return "-" if metrics is None else f"{metrics['wall_time_s'] / 60:.1f} min"

        rows.append((
            dataset, cell(ours, "accuracy"), cell(ours, "macro_f1"),
            "-" if ours is None else str(ours["epochs"]), wall(ours),
            cell(example, "accuracy"), wall(example), cell(tfidf, "accuracy"),
            cell(tfidf, "macro_f1"), wall(tfidf), ANCHORS[dataset],
        ))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT))
    results = {}
    for dataset in args.datasets:
        ours = run(dataset, False, args.reuse, args.no_train)
        example = None if args.skip_baseline else run(dataset, True, args.reuse, args.no_train)
        results[dataset] = (ours, example, tfidf_baseline(dataset, args.reuse, args.no_train))
    table = format_table(results)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "accuracy.md").write_text(table + "\n")
    (RESULTS / "accuracy.json").write_text(json.dumps(
        {dataset: {"ours": ours, "keras_io_example": example, "tfidf_logistic_regression": tfidf}
         for dataset, (ours, example, tfidf) in results.items()}, indent=2) + "\n")
    print("\nTest accuracy (%), CPU wall time per run:\n")
    print(table)
    print(f"\nwritten: {RESULTS / 'accuracy.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
