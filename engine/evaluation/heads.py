"""Every attention head of a run across a split, for `evaluate.py --heads`.

Writes, next to the split's evaluation reports (`RUN_DIR/eval/<split>/`):
    heads.json   {"split", "examples", "spearman_importance_ablation",
                 "spearman_importance_loss_increase", "heads": [{"layer", "head",
                 "importance", "ablation_accuracy_drop", "ablation_loss_increase",
                 "ablation_loss_change", "to_cls", "to_sep", "to_punctuation", "to_self",
                 "to_previous", "to_next",
                 "mean_distance", "entropy"}, ...]} (0-based layer and head)
    heads.md     the heads, most important first
    heads.png    layers x heads grids: importance, the ablation's loss increase and each
                 statistic
The numbers are `inspection.methods.heads`' (docs/heads.md says what each means).
"""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from scipy.stats import spearmanr

from engine.evaluation.faithfulness import tokenize
from inspection.attention_tokens import has_class_token, shortest_first
from inspection.methods.heads import (
    STATISTICS,
    attention_statistics,
    head_ablation,
    head_importance,
)
from inspection.rendering.markdown_table import RIGHT, markdown_table
from run_folder import runs

HEADS_FILE = "heads.json"
TABLE_FILE = "heads.md"
PLOT_FILE = "heads.png"


def measure_run_heads(run, texts, labels, limit, split, batch_size=32):
    """The heads report (see the module docstring) of the first `limit` examples."""
    vectorizer, classifier = run.parts
    counts = classifier.encoder.head_counts
    if len(set(counts)) > 1:  # A head mask is (layers, heads).
        raise runs.RunError(
            f"{run.run_dir}: its blocks keep {counts} heads (a pruned run); "
            "measure the heads of the run it was pruned from"
        )
    texts, labels = list(texts[:limit]), np.asarray(labels[:limit], dtype=np.int64)
    token_ids = tokenize(run, texts)
    # Shortest first: each batch is cut to its longest text.
    order = shortest_first(token_ids)
    token_ids, labels = token_ids[order], labels[order]
    vocabulary = vectorizer.get_vocabulary()
    statistics = attention_statistics(
        classifier, token_ids, vocabulary, has_class_token(run.pooling, vocabulary), batch_size
    )
    importance = head_importance(classifier, token_ids, labels, batch_size)
    drops, rises, changes = head_ablation(classifier, token_ids, labels, batch_size)
    heads = [
        {
            "layer": layer,
            "head": head,
            "importance": float(importance[layer, head]),
            "ablation_accuracy_drop": float(drops[layer, head]),
            "ablation_loss_increase": float(rises[layer, head]),
            "ablation_loss_change": float(changes[layer, head]),
            **{name: float(statistics[name][layer, head]) for name in STATISTICS},
        }
        for layer in range(importance.shape[0])
        for head in range(importance.shape[1])
    ]
    return {
        "split": split,
        "examples": len(texts),
        # Against what the importance estimates (each example's |change of loss|),
        # and against the mean increase, which helped and hurt examples net out.
        "spearman_importance_ablation": _spearman(importance, changes),
        "spearman_importance_loss_increase": _spearman(importance, rises),
        "heads": heads,
    }


def _spearman(first, second):
    correlation = spearmanr(first.ravel(), second.ravel()).statistic
    return None if np.isnan(correlation) else float(correlation)


def write_heads(folder, report):
    """Writes the report's JSON, table and grids into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / HEADS_FILE, report)
    runs.write_text(folder / TABLE_FILE, heads_table(report) + "\n")
    plot_heads(report).savefig(folder / PLOT_FILE, dpi=100)


def heads_table(report):
    """The heads as a Markdown table, most important first, after the correlation line.

    Example:
    >>> head = {"layer": 0, "head": 1, "importance": 0.5, "ablation_accuracy_drop": 0.02,
    ...         "ablation_loss_increase": -0.1, "ablation_loss_change": 0.3,
    ...         **{name: 0.25 for name in STATISTICS}}
    >>> print(heads_table({"examples": 9, "spearman_importance_ablation": 0.7,
    ...                    "spearman_importance_loss_increase": None,
    ...                    "heads": [head]}).splitlines()[4][:51])
    | 0 | 1 | 0.5000 | 2.00 | -0.1000 | 0.3000 | 0.25 |
    """

    def rounded(value):
        return "-" if value is None else f"{value:.2f}"

    lines = [
        f"{report['examples']} examples; Spearman correlation of importance and the "
        f"ablation's loss change (each example's |change|): "
        f"{rounded(report['spearman_importance_ablation'])}; and its mean loss "
        f"increase: {rounded(report.get('spearman_importance_loss_increase'))}",
        "",
    ]
    columns = [
        "layer",
        "head",
        "importance",
        "accuracy drop (points)",
        "loss increase",
        "loss change",
        *STATISTICS,
    ]
    rows = [
        [
            str(head["layer"]),
            str(head["head"]),
            f"{head['importance']:.4f}",
            f"{100 * head['ablation_accuracy_drop']:.2f}",
            f"{head['ablation_loss_increase']:.4f}",
            f"{head['ablation_loss_change']:.4f}",
            *(f"{head[name]:.2f}" for name in STATISTICS),
        ]
        for head in sorted(report["heads"], key=lambda entry: -entry["importance"])
    ]
    lines += markdown_table(columns, rows, [RIGHT] * len(columns))
    return "\n".join(lines)


def grids(report):
    """{name: (L, N) array} of the report's per-head numbers."""
    heads = report["heads"]
    shape = (1 + max(h["layer"] for h in heads), 1 + max(h["head"] for h in heads))
    names = ["importance", "ablation_loss_change", "ablation_loss_increase", *STATISTICS]
    arrays = {name: np.full(shape, np.nan) for name in names}
    for head in heads:
        for name in names:
            arrays[name][head["layer"], head["head"]] = head[name]
    return arrays


def plot_heads(report):
    """One layers x heads grid per number, coloured by it."""
    arrays = grids(report)
    figure = Figure(figsize=(18, 6))
    axes = figure.subplots(2, 6)
    for axis, (name, values) in zip(axes.ravel(), arrays.items()):
        image = axis.imshow(values, cmap="viridis", aspect="auto")
        axis.set_title(name.replace("_", " "), fontsize=9)
        axis.set_xticks(range(values.shape[1]))
        axis.set_yticks(range(values.shape[0]))
        axis.tick_params(labelsize=7)
        axis.set_xlabel("head", fontsize=8)
        axis.set_ylabel("layer", fontsize=8)
        figure.colorbar(image, ax=axis)
    for axis in axes.ravel()[len(arrays) :]:
        axis.set_axis_off()
    figure.tight_layout()
    return figure
