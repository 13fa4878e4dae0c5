"""The weak slices of an evaluated split or file, for `evaluate.py --slices`.

Writes, next to the evaluation's reports (`RUN_DIR/eval/<split or file stem>/`):
    slices.json  {"split", "examples", "accuracy", "correction", "alpha", "min_count",
                 "weak_slices": [{"slice", "kind", "size", "accuracy", "accuracy_ci",
                 "rest_accuracy", "gap", "excess_errors", "p_value", "weak"}, ...],
                 "slices": [every candidate slice, the same fields]}, both lists by
                 excess errors, most first. A multi-label run's slices are measured on
                 micro-F1 ("metric": "micro_f1"; "micro_f1", "micro_f1_ci" and
                 "rest_micro_f1" in place of accuracy's fields, "decisions" added;
                 `inspection.methods.label_set_slices`)
    slices.md    the weak slices, then the top of the others, as a table
The numbers are `inspection.methods.slices`'s; docs/data_quality.md says what each means.
"""

from pathlib import Path

import numpy as np

from engine.label_sets import predicted_sets
from inspection.methods.label_set_slices import decision_counts, measure_label_set_slices
from inspection.methods.slices import candidate_slices, measure_slices
from inspection.rendering.markdown_table import RIGHT, markdown_cell, markdown_row, markdown_rule
from run_folder import runs

SLICES_FILE = "slices.json"
TABLE_FILE = "slices.md"
TABLE_OTHERS = 20  # slices.md's rows of slices that are not weak
SUMMARY_SLICES = 10  # printed by evaluate.py
METRIC_NAMES = {"accuracy": "accuracy", "micro_f1": "micro-F1"}
ALIGNMENT = ["left", "left", RIGHT, "left", RIGHT, RIGHT, RIGHT, RIGHT]


def header(metric):
    name = METRIC_NAMES[metric]
    columns = ["slice", "kind", "size", f"{name} [95% CI]", f"rest {name}", "gap"]
    return [
        markdown_row([*columns, "excess errors", "p-value"]),
        markdown_rule(ALIGNMENT),
    ]


def measure_run_slices(run, texts, labels, probabilities, data_name, min_count=20, data_file=None):
    """The slices report (see the module docstring) of every evaluated example.

    `data_file`: the labelled file evaluated, or None for the run's split `data_name`;
    `dataset.slice_columns` are read from it (or from the split's files).

    Raises:
        DataError: a slice column is not in the data; the message names the columns there.
        RunError: the data changed since it was evaluated.
    """
    names = run.config.dataset.slice_columns
    columns = None
    if names:
        column_texts, columns = run.load_columns(names, data_name, data_file)
        if not np.array_equal(
            np.asarray(column_texts, dtype=object), np.asarray(texts, dtype=object)
        ):
            raise runs.RunError(
                f"{data_file or data_name}: the data changed while it was evaluated; evaluate again"
            )
    slices = candidate_slices(texts, labels, run.class_names, columns, min_count)
    if run.is_multi_label:
        predicted = predicted_sets(probabilities, run.thresholds)
        measured = measure_label_set_slices(slices, *decision_counts(labels, predicted))
    else:
        correct = np.asarray(probabilities).argmax(axis=-1) == np.asarray(labels)
        measured = measure_slices(slices, correct)
    weak, every = measured.pop("weak_slices"), measured.pop("slices")
    return {
        "split": data_name,
        **measured,
        "min_count": min_count,
        "weak_slices": weak,
        "slices": every,
    }


def write_slices(folder, report):
    """Writes the report's JSON and table into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / SLICES_FILE, report)
    runs.write_text(folder / TABLE_FILE, slices_table(report) + "\n")


def _row(entry, metric):
    low, high = entry[f"{metric}_ci"]
    return markdown_row(
        [
            markdown_cell(entry["slice"]),
            entry["kind"],
            entry["size"],
            f"{entry[metric]:.3f} [{low:.3f}, {high:.3f}]",
            f"{entry[f'rest_{metric}']:.3f}",
            f"{entry['gap']:+.3f}",
            f"{entry['excess_errors']:.1f}",
            f"{entry['p_value']:.2g}",
        ]
    )


def slices_table(report, others=TABLE_OTHERS):
    """The report as Markdown: the weak slices, then the `others` first of the rest.

    Example:
    >>> entry = {"slice": "word: a|b", "kind": "word", "size": 30, "accuracy": 0.5,
    ...          "accuracy_ci": [0.3, 0.7], "rest_accuracy": 0.944, "gap": 0.4,
    ...          "excess_errors": 12.0, "p_value": 1e-5, "weak": True}
    >>> report = {"split": "test", "examples": 300, "accuracy": 0.9, "correction": "...",
    ...           "weak_slices": [entry], "slices": [entry]}
    >>> slices_table(report).splitlines()[6]
    '| word: a\\\\|b | word | 30 | 0.500 [0.300, 0.700] | 0.944 | +0.400 | 12.0 | 1e-05 |'
    """
    metric = report.get("metric", "accuracy")  # files written before label sets lack it
    rest = [entry for entry in report["slices"] if not entry["weak"]][:others]
    lines = [
        f"{METRIC_NAMES[metric].capitalize()} on {report['split']}: {report[metric]:.3f} "
        f"over {report['examples']} examples. {report['correction']}",
        "",
        f"## Weak slices ({len(report['weak_slices'])})",
        "",
    ]
    lines += (
        [*header(metric), *(_row(entry, metric) for entry in report["weak_slices"])]
        if report["weak_slices"]
        else [f"None: no slice's {METRIC_NAMES[metric]} is below the rest's after the correction."]
    )
    if rest:
        lines += [
            "",
            f"## The other slices, most excess errors first ({len(rest)} of "
            f"{len(report['slices']) - len(report['weak_slices'])})",
            "",
            *header(metric),
            *(_row(entry, metric) for entry in rest),
        ]
    return "\n".join(lines)


def slices_summary(report, count=SUMMARY_SLICES):
    """The first `count` weak slices as lines, or a line that says there is none.

    Example:
    >>> entry = {"slice": "word: zqxv", "size": 40, "accuracy": 0.1,
    ...          "accuracy_ci": [0.025, 0.2], "excess_errors": 32.0}
    >>> print(slices_summary({"accuracy": 0.9, "slices": [entry] * 3,
    ...                       "weak_slices": [entry]}))
    word: zqxv: accuracy 0.100 [0.025, 0.200] on 40 examples (overall 0.900), 32.0 excess errors
    """
    weak, metric = report["weak_slices"], report.get("metric", "accuracy")
    name, overall = METRIC_NAMES[metric], report[metric]
    if not report["slices"]:
        return (
            f"no candidate slice: none holds {report.get('min_count')} of the "
            f"{report['examples']} examples and not all; lower --min-count, or evaluate "
            "more examples"
        )
    if not weak:
        return (
            f"none of the {len(report['slices'])} candidate slices has a {name} below the "
            f"rest's (overall {name} {overall:.3f}) after the correction"
        )
    return "\n".join(
        f"{entry['slice']}: {name} {entry[metric]:.3f} [{entry[f'{metric}_ci'][0]:.3f}, "
        f"{entry[f'{metric}_ci'][1]:.3f}] on {entry['size']} examples (overall "
        f"{overall:.3f}), {entry['excess_errors']:.1f} excess errors"
        for entry in weak[:count]
    )
