"""The tokens report's files (`evaluate.py --tokens`): tokens.json as measured, tokens.md
(the ranking check's line, then per class its top words) and tokens.png (per class, the top
words' reliance and insertion with their intervals); and the lines evaluate.py prints.
`engine.evaluation.tokens` measures what they show."""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from inspection.rendering.markdown_table import markdown_cell, markdown_table
from run_folder import runs

TOKENS_FILE = "tokens.json"
TABLE_FILE = "tokens.md"
PLOT_FILE = "tokens.png"
TABLE_HEADER = [
    "rank",
    "word",
    "reliance [95% CI]",
    "insertion",
    "control",
    "p(class given word)",
    "lift",
    "train count",
    "p-value",
    "texts",
    "attribution [95% CI]",
    "deletion [95% CI]",
    "shortcut",
]
TABLE_WORDS = 20
PLOTTED_WORDS = 12
PLOTTED_CLASSES = 8


def write_tokens(folder, report):
    """Writes the report's JSON, table and plot into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / TOKENS_FILE, report)
    runs.write_text(folder / TABLE_FILE, tokens_table(report) + "\n")
    plot_tokens(report).savefig(folder / PLOT_FILE, dpi=100)


def _ci(value, bounds, digits=3):
    if value is None:
        return "-"
    return f"{value:.{digits}f} [{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]"


def ranking_check_line(check):
    """One sentence: the top words' insertion effect against the control words'."""
    ratio = f" ({check['ratio']:.1f}x)" if check["ratio"] else ""
    return (
        f"Ranking check: inserted into texts of other classes, the top {check['words']} "
        f"words of each class raise its probability by {check['top_words']:.3f}, "
        f"the control's random words by {check['random_words']:.3f}{ratio}; "
        f"difference {_ci(check['difference'], check['difference_ci'])}."
    )


def _number(value, form):
    return "-" if value is None else format(value, form)


def _table_row(rank, entry):
    return [
        rank,
        markdown_cell(entry["word"]),
        _ci(entry["reliance"], entry["reliance_ci"]),
        f"{entry['insertion']:.3f}",
        f"{entry['control']:.3f}",
        _number(entry["p_class_given_word"], ".2f"),
        _number(entry["lift"], ".1f"),
        entry["train_count"],
        f"{entry['p_value']:.2g}",
        entry["count"],
        _ci(entry["attribution"], entry["attribution_ci"]),
        _ci(entry["deletion"], entry["deletion_ci"]),
        "yes" if entry["shortcut"] else "",
    ]


def tokens_table(report, words=TABLE_WORDS):
    """The report as Markdown: the ranking check, then per class its top words.

    Example:
    >>> entry = {"word": "good", "reliance": 0.2, "reliance_ci": [0.1, 0.3],
    ...          "insertion": 0.15, "control": 0.01, "p_class_given_word": 0.8, "lift": 1.6,
    ...          "train_count": 90, "p_value": 1e-6, "count": 0, "attribution": None,
    ...          "attribution_ci": None, "deletion": None, "deletion_ci": None,
    ...          "shortcut": True}
    >>> lines = tokens_table({"classes": {"pos": [entry]}, "faithfulness": None}).splitlines()
    >>> row = lines[-1].split(" | ")
    >>> row[1:5], row[-3:]
    (['good', '0.200 [0.100, 0.300]', '0.150', '0.010'], ['-', '-', 'yes |'])
    """
    check = report.get("faithfulness")
    lines = [ranking_check_line(check), ""] if check else []
    for name, entries in report["classes"].items():
        rows = [_table_row(rank, entry) for rank, entry in enumerate(entries[:words], 1)]
        lines += [f"## {name}", "", *markdown_table(TABLE_HEADER, rows), ""]
    return "\n".join(lines).rstrip()


def tokens_summary(report, words):
    """The ranking check's line, then per class its top `words` words, shortcuts starred.

    Example:
    >>> entries = [{"word": "x", "shortcut": True}, {"word": "good", "shortcut": False}]
    >>> print(tokens_summary({"classes": {"pos": entries}, "faithfulness": None}, 5))
    pos: x*, good
    """
    check = report.get("faithfulness")
    lines = [ranking_check_line(check)] if check else []
    empty = (
        f"(no word of {report.get('min_count')} training texts or more is tied to this "
        "class: lower --min-count)"
    )
    lines += [
        f"{name}: "
        + (
            ", ".join(
                entry["word"] + ("*" if entry["shortcut"] else "") for entry in entries[:words]
            )
            or empty
        )
        for name, entries in report["classes"].items()
    ]
    return "\n".join(lines)


def plot_tokens(report, words=PLOTTED_WORDS, max_classes=PLOTTED_CLASSES):
    """Per class (the first `max_classes`), its top words' reliance and insertion effect
    with their intervals, the control's insertion as a line; shortcuts in red."""
    names = list(report["classes"])[:max_classes]
    figure = Figure(figsize=(11, 0.3 * words * len(names) + 1.0 * len(names)))
    axes = figure.subplots(max(len(names), 1), 2, squeeze=False)
    for row, name in enumerate(names):
        entries = report["classes"][name][:words][::-1]  # the first word on top
        labels = [entry["word"] for entry in entries]
        colours = ["tab:red" if entry["shortcut"] else "tab:blue" for entry in entries]
        for axis, key, title in (
            (axes[row, 0], "reliance", "reliance: over random words, toward the class"),
            (axes[row, 1], "insertion", "insertion: rise of p(class)"),
        ):
            values = np.array([entry[key] for entry in entries])
            bounds = np.array([entry[f"{key}_ci"] for entry in entries]).reshape(-1, 2)
            errors = np.abs(bounds.T - values) if len(values) else None
            axis.barh(labels, values, xerr=errors, color=colours, capsize=2)
            axis.axvline(0, color="black", linewidth=0.5)
            if key == "insertion" and entries:
                axis.axvline(entries[0]["control"], color="grey", linestyle="--", linewidth=1)
            axis.set_title(f"{name}: {title}", fontsize=9)
            axis.tick_params(labelsize=7)
    figure.suptitle("Top words per class (red: shortcut; dashed: random words)", fontsize=10)
    figure.tight_layout()
    return figure
