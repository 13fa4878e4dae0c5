"""Faithfulness of every attribution method on a run's split, for `evaluate.py --faithfulness`.

Writes, next to the split's evaluation reports (`RUN_DIR/eval/<split>/`):
    faithfulness.json   `faithfulness.measure_faithfulness`'s report, plus the split,
                        the run's pooling and the examples left out
    faithfulness.md     the table: AOPC comprehensiveness and sufficiency with 95%
                        intervals, their ratio to random, entropy, time per example
    faithfulness.png    the curves: comprehensiveness and sufficiency per bin and method

The best method (highest AOPC comprehensiveness) is `predict.py --explain`'s default
(`explanation_method`), read from the validation split's measurement first.
"""

import json
from pathlib import Path

import numpy as np
import tensorflow as tf
from matplotlib.figure import Figure

from inspection.attention_tokens import shortest_first
from inspection.methods.attribution import DEFAULT_METHOD, METHODS
from inspection.methods.faithfulness import measure_faithfulness
from inspection.rendering.markdown_table import markdown_table
from inspection.token_schemes import text_token_mask
from run_folder import runs

TABLE_FILE = "faithfulness.md"
PLOT_FILE = "faithfulness.png"
# The splits whose measurement predict.py believes, in order: methods are chosen on validation.
METHOD_SPLITS = ("validation", "test")


def tokenize(run, texts, batch_size=256):
    """The run's token ids for `texts`, int64 (E, T), padded with 0 to the longest."""
    vectorizer, _ = run.parts
    batches = [
        np.asarray(vectorizer(tf.constant(list(texts[start : start + batch_size]))))
        for start in range(0, len(texts), batch_size)
    ]
    length = max((batch.shape[1] for batch in batches), default=1)
    return np.concatenate(
        [np.pad(batch, ((0, 0), (0, length - batch.shape[1]))) for batch in batches]
    ).astype(np.int64)


def measure_run_faithfulness(run, texts, limit, methods=METHODS, seed=0, batch_size=32):
    """Measures every method on the first `limit` of `texts` that have a text token.

    Returns:
        The report of `measure_faithfulness`, with "pooling", "skipped" (how many of
        the first `limit` texts had no token of their own: nothing to remove) and
        "mean_text_tokens" (leave-one-out's forward passes per example).
    """
    texts = list(texts[:limit])
    token_ids = tokenize(run, texts)
    vocabulary = run.parts[0].get_vocabulary()
    mask = text_token_mask(token_ids, vocabulary)
    kept = mask.any(axis=1)
    # Shortest first: each batch is trimmed to its longest text.
    order = shortest_first(token_ids[kept])
    report = measure_faithfulness(
        run.parts[1],
        token_ids[kept][order],
        mask[kept][order],
        run.pooling,
        methods,
        seed,
        batch_size,
    )
    return {
        **report,
        "pooling": run.pooling,
        "skipped": int((~kept).sum()),
        "mean_text_tokens": float(mask[kept].sum(axis=1).mean()),
    }


def write_faithfulness(folder, report):
    """Writes the report's JSON, table and plot into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / runs.FAITHFULNESS_FILE, report)
    runs.write_text(folder / TABLE_FILE, faithfulness_table(report) + "\n")
    plot_curves(report).savefig(folder / PLOT_FILE, dpi=100)


def faithfulness_table(report):
    """The report as a Markdown table, best comprehensiveness first.

    Example:
    >>> entry = {"comprehensiveness": {"mean": 0.4, "ci95": [0.3, 0.5]},
    ...          "sufficiency": {"mean": 0.1, "ci95": [0.0, 0.2]},
    ...          "entropy": 0.9, "seconds_per_example": 0.01}
    >>> print(faithfulness_table({"methods": {"rollout": entry}}).splitlines()[2])
    | rollout | 0.400 [0.300, 0.500] | - | 0.100 [0.000, 0.200] | - | 0.90 | 10.0 |
    """
    methods = report["methods"]
    random = methods.get("random")

    def measured(entry, key):
        value = entry[key]
        return f"{value['mean']:.3f} [{value['ci95'][0]:.3f}, {value['ci95'][1]:.3f}]"

    def ratio(entry, key):
        floor = random[key]["mean"] if random else 0.0
        return f"{entry[key]['mean'] / floor:.2f}x" if floor > 0 else "-"

    rows = [
        {
            "method": name,
            "AOPC comprehensiveness [95% CI]": measured(entry, "comprehensiveness"),
            "vs random": ratio(entry, "comprehensiveness"),
            "AOPC sufficiency [95% CI]": measured(entry, "sufficiency"),
            "suff. vs random": ratio(entry, "sufficiency"),
            "entropy": f"{entry['entropy']:.2f}",
            "ms / example": f"{1000 * entry['seconds_per_example']:.1f}",
        }
        for name, entry in sorted(
            methods.items(), key=lambda item: -item[1]["comprehensiveness"]["mean"]
        )
    ]
    return "\n".join(markdown_table(list(rows[0]) if rows else [], [row.values() for row in rows]))


def plot_curves(report):
    """Comprehensiveness and sufficiency per bin (% of the tokens), one line per method."""
    figure = Figure(figsize=(10, 4))
    axes = figure.subplots(1, 2)
    bins = report.get("bins_percent", [])
    for name, entry in report["methods"].items():
        style = "--" if name == "random" else "-"
        axes[0].plot(bins, entry["comprehensiveness_curve"], style, marker="o", label=name)
        axes[1].plot(bins, entry["sufficiency_curve"], style, marker="o", label=name)
    for axis, title in zip(
        axes,
        (
            "comprehensiveness: top k% removed (higher is faithful)",
            "sufficiency: only the top k% kept (lower is faithful)",
        ),
    ):
        axis.set_xscale("log")
        axis.set_xlabel("k, % of the text's tokens")
        axis.set_ylabel("drop in p(predicted class)")
        axis.set_title(title, fontsize=9)
    axes[1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def explanation_method(run_dir):
    """The best measured method of the run (validation first, then test), else the default.

    Returns:
        (method, where): the method's name and the file it came from (None: the default).
    """
    for split in METHOD_SPLITS:
        path = Path(run_dir) / runs.EVAL_DIR / split / runs.FAITHFULNESS_FILE
        if path.is_file():
            try:
                best = json.loads(path.read_text()).get("best_method")
            except (OSError, ValueError):
                continue  # A damaged file is no measurement.
            if best in METHODS:
                return best, path
    return DEFAULT_METHOD, None
