"""The words a run relies on across a split, for `evaluate.py --tokens`.

Writes, next to the split's evaluation reports (`RUN_DIR/eval/<split>/`):
    tokens.json  {"split", "examples", "method", "min_count", "tests", "classes": {LABEL:
                 [{"word", "count", "attribution", "attribution_ci", "train_count",
                 "p_class_given_word", "z", "p_value", "insertion", "insertion_ci",
                 "deletion", "deletion_ci", "shortcut"}, ...]}, "faithfulness": {...}}
    tokens.md    per class, the top words and their numbers
    tokens.png   per class, the top words' attribution and insertion effect with intervals
The numbers are `inspection.methods.word_reliance`'s; docs/dataset_inspection.md says what
each means and how the ranking itself is checked ("faithfulness").
"""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from engine import runs
from engine.evaluation.faithfulness import tokenize
from inspection.attention_tokens import shortest_first
from inspection.methods.attribution import DEFAULT_METHOD
from inspection.methods.bootstrap import mean_interval
from inspection.methods.forward_passes import probabilities
from inspection.methods.word_reliance import (
    EDITED_TEXTS,
    class_word_scores,
    deletion_effects,
    frequency_matched,
    insertion_effects,
    insertion_sites,
    label_association,
    text_words,
    word_means,
)
from inspection.rendering.markdown_table import markdown_cell, markdown_table
from inspection.word_pieces import is_word_piece

TOKENS_FILE = "tokens.json"
TABLE_FILE = "tokens.md"
TABLE_HEADER = [
    "rank",
    "word",
    "count",
    "attribution [95% CI]",
    "train count",
    "p(class given word)",
    "z",
    "p-value",
    "insertion [95% CI]",
    "deletion [95% CI]",
    "shortcut",
]
PLOT_FILE = "tokens.png"
TOP_WORDS = 50  # listed per class, each with its insertion and deletion measured
CHECKED_WORDS = 10  # the top words whose insertion effect is checked against random words
SHORTCUT_P_VALUE = 0.01
TABLE_WORDS = 20
PLOTTED_WORDS = 12
PLOTTED_CLASSES = 8
# Forward passes only: larger batches than the attribution's backward passes.
EDIT_BATCH_SIZE = 128


def measure_run_tokens(
    run, texts, labels, limit, split, method=DEFAULT_METHOD, min_count=20, seed=0, batch_size=32
):
    """The tokens report (see the module docstring) of the first `limit` examples."""
    vectorizer, classifier = run.parts
    vocabulary = vectorizer.get_vocabulary()
    texts, labels = list(texts[:limit]), np.asarray(labels[:limit], dtype=np.int64)
    token_ids = tokenize(run, texts)
    rows, pieces = text_words(token_ids, vocabulary)
    num_classes = len(run.class_names)
    per_class = class_word_scores(
        classifier, token_ids, rows, run.pooling, method, num_classes, batch_size
    )
    counts = {
        word: len(values) for word, (_, values) in word_means(per_class[0], min_count).items()
    }  # the same words for every class: those of enough texts
    train_texts, train_labels = run.load_split("train")
    train_rows, _ = text_words(tokenize(run, train_texts), vocabulary)
    tests = max(1, len(counts) * num_classes)  # the (word, class) pairs: Bonferroni's factor
    association = label_association(train_rows, train_labels, num_classes, tests)
    full = probabilities(classifier, token_ids, EDIT_BATCH_SIZE)  # (E, C)
    sites = insertion_sites(rows, seed)
    # The vectorizer's cap (the run's text.sequence_length), not the checkpoint's positions.
    length = run.config.text.sequence_length
    cap = classifier.encoder.sequence_length
    editing = {
        "classifier": classifier,
        "keep_last": is_word_piece(vocabulary),
        "cap": min(cap, length) if isinstance(length, int) else cap,
        "batch_size": EDIT_BATCH_SIZE,
    }
    classes, checks = {}, {}
    for label, name in enumerate(run.class_names):
        means = word_means(per_class[label], min_count)
        ranked = sorted(means, key=lambda word: -means[word][0])[:TOP_WORDS]
        # Held-out texts of other classes; by length, so that each batch is cut short.
        targets = shortest_first(token_ids, np.flatnonzero(labels != label)[:EDITED_TEXTS])

        def insertion(word, label=label, targets=targets):
            return insertion_effects(
                token_ids=token_ids[targets],
                sites=sites[targets],
                pieces=pieces[word],
                label=label,
                base=full[targets, label],
                boundaries=[rows[index].boundaries for index in targets],
                **editing,
            )

        entries, inserted = [], {}
        for word in ranked:
            inserted[word] = insertion(word) if len(targets) else np.zeros(0)
            deleted = _word_deletion(classifier, token_ids, rows, word, label, full)
            entries.append(
                _word_entry(word, means[word][1], association(word, label), inserted[word], deleted)
            )
        classes[name] = entries
        top = ranked[:CHECKED_WORDS]
        drawn = frequency_matched(list(counts), counts, top, len(top), seed + label)
        if top and drawn and len(targets):
            checks[name] = (
                np.mean([inserted[word] for word in top], axis=0),
                np.mean([insertion(word) for word in drawn], axis=0),
            )
    return {
        "split": split,
        "examples": len(texts),
        "method": method,
        "min_count": min_count,
        "tests": tests,
        "classes": classes,
        "faithfulness": _ranking_check(checks),
    }


def _word_deletion(classifier, token_ids, rows, word, label, full):
    """The deletion effects of `word` on `label` in the texts holding it (at most
    `EDITED_TEXTS`), shortest first."""
    containing = shortest_first(
        token_ids,
        [index for index, row in enumerate(rows) if word in row.positions][:EDITED_TEXTS],
    )
    return deletion_effects(
        classifier,
        token_ids[containing],
        [rows[index].positions[word] for index in containing],
        label,
        full[containing, label],
        EDIT_BATCH_SIZE,
    )


def _word_entry(word, attributions, association, insertion, deletion):
    attribution, attribution_ci = mean_interval(attributions)
    inserted, inserted_ci = mean_interval(insertion)
    deleted, deleted_ci = mean_interval(deletion)
    return {
        "word": word,
        "count": len(attributions),
        "attribution": attribution,
        "attribution_ci": attribution_ci,
        **association,
        "insertion": inserted,
        "insertion_ci": inserted_ci,
        "deletion": deleted,
        "deletion_ci": deleted_ci,
        "shortcut": bool(
            association["p_value"] < SHORTCUT_P_VALUE and len(insertion) > 0 and inserted_ci[0] > 0
        ),
    }


def _ranking_check(checks):
    """The top words' mean insertion effect against frequency-matched random words', per
    class and over all classes, with the interval of the (per text, paired) difference."""

    def summary(top, drawn):
        difference, difference_ci = mean_interval(top - drawn)
        random = float(drawn.mean())
        return {
            "top_words": float(top.mean()),
            "random_words": random,
            "ratio": float(top.mean() / random) if random > 0 else None,
            "difference": difference,
            "difference_ci": difference_ci,
            "texts": len(top),
        }

    if not checks:
        return None
    pooled = [np.concatenate(series) for series in zip(*checks.values(), strict=True)]
    return {
        "words": CHECKED_WORDS,
        **summary(*pooled),
        "classes": {name: summary(*pair) for name, pair in checks.items()},
    }


def write_tokens(folder, report):
    """Writes the report's JSON, table and plot into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / TOKENS_FILE, report)
    runs.write_text(folder / TABLE_FILE, tokens_table(report) + "\n")
    plot_tokens(report).savefig(folder / PLOT_FILE, dpi=100)


def _ci(value, bounds, digits=3):
    return f"{value:.{digits}f} [{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]"


def ranking_check_line(check):
    """One sentence: the top words' insertion effect against random words'."""
    ratio = f" ({check['ratio']:.1f}x)" if check["ratio"] else ""
    return (
        f"Ranking check: inserted into texts of other classes, the top {check['words']} "
        f"words of each class raise its probability by {check['top_words']:.3f}, "
        f"frequency-matched random words by {check['random_words']:.3f}{ratio}; "
        f"difference {_ci(check['difference'], check['difference_ci'])}."
    )


def _table_row(rank, entry):
    share, z = entry["p_class_given_word"], entry["z"]
    return [
        rank,
        markdown_cell(entry["word"]),
        entry["count"],
        _ci(entry["attribution"], entry["attribution_ci"]),
        entry["train_count"],
        "-" if share is None else f"{share:.2f}",
        "-" if z is None else f"{z:.1f}",
        f"{entry['p_value']:.2g}",
        _ci(entry["insertion"], entry["insertion_ci"]),
        _ci(entry["deletion"], entry["deletion_ci"]),
        "yes" if entry["shortcut"] else "",
    ]


def tokens_table(report, words=TABLE_WORDS):
    """The report as Markdown: the ranking check, then per class its top words.

    Example:
    >>> entry = {"word": "good", "count": 30, "attribution": 0.5, "attribution_ci": [0.4, 0.6],
    ...          "train_count": 90, "p_class_given_word": 0.8, "z": 5.1, "p_value": 1e-6,
    ...          "insertion": 0.1, "insertion_ci": [0.05, 0.15], "deletion": 0.2,
    ...          "deletion_ci": [0.1, 0.3], "shortcut": True}
    >>> lines = tokens_table({"classes": {"pos": [entry]}, "faithfulness": None}).splitlines()
    >>> row = lines[-1].split(" | ")
    >>> row[1:4], row[-2:]
    (['good', '30', '0.500 [0.400, 0.600]'], ['0.200 [0.100, 0.300]', 'yes |'])
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
        f"(no word is in {report.get('min_count')} of the examples: lower "
        "--min-count, or measure more examples)"
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
    """Per class (the first `max_classes`), its top words' attribution and insertion effect
    with their intervals; shortcuts in red."""
    names = list(report["classes"])[:max_classes]
    figure = Figure(figsize=(11, 0.3 * words * len(names) + 1.0 * len(names)))
    axes = figure.subplots(len(names), 2, squeeze=False)
    for row, name in enumerate(names):
        entries = report["classes"][name][:words][::-1]  # the first word on top
        labels = [entry["word"] for entry in entries]
        colours = ["tab:red" if entry["shortcut"] else "tab:blue" for entry in entries]
        for axis, key, title in (
            (axes[row, 0], "attribution", "mean attribution"),
            (axes[row, 1], "insertion", "insertion: rise of p(class)"),
        ):
            values = np.array([entry[key] for entry in entries])
            bounds = np.array([entry[f"{key}_ci"] for entry in entries]).reshape(-1, 2)
            errors = np.abs(bounds.T - values) if len(values) else None
            axis.barh(labels, values, xerr=errors, color=colours, capsize=2)
            axis.axvline(0, color="black", linewidth=0.5)
            axis.set_title(f"{name}: {title}", fontsize=9)
            axis.tick_params(labelsize=7)
    figure.suptitle("Top words per class (red: shortcut)", fontsize=10)
    figure.tight_layout()
    return figure
