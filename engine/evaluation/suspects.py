"""The training examples whose labels look wrong, for `evaluate.py --suspects`.

Reads the run's dynamics.parquet (`training.dynamics`) and writes `RUN_DIR/eval/train/`:
    suspects.csv   the K most suspect training examples, most suspect first: position,
                   text, label, model_label (the saved model's), score and its parts
                   (confidence, variability, correctness, aum, epochs). A multi-label
                   run's rows are (example, label) pairs, as confident learning ranks
                   them: label, given (1: the data gives the text the label, 0: not),
                   model_given and model_probability (the saved model's), then the same
                   score and parts, of the probability of what the data says
    data_map.png   confidence against variability, coloured by correctness (Data
                   Cartography's figure)
    data_map.json  {"split", "examples", "epochs", "score", "regions", "region_rule",
                   "points": [{"position", "text", "label", "model_label", "confidence",
                   "variability", "correctness", "suspect_rank"}, ...]}: the share of the
                   examples in each region, and a sample of points for the viewer (a
                   label set's: "+label" given, "−label" not)
The numbers are `inspection.methods.data_map`'s; docs/data_quality.md says what they mean.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from engine.evaluation.faithfulness import tokenize
from engine.evaluation.measurements import carry_over
from engine.label_sets import predicted_sets
from inspection.methods.data_map import (
    DEFAULT_SCORE,
    REGION_RULE,
    example_statistics,
    recorded_texts_match,
    region_shares,
    suspect_order,
    suspect_scores,
)
from inspection.methods.forward_passes import probabilities
from inspection.rendering.markdown_table import RIGHT, markdown_cell, markdown_table
from run_folder import runs

SUSPECTS_FILE = "suspects.csv"
MAP_FILE = "data_map.json"
PLOT_FILE = "data_map.png"
SPLIT = "train"
MAP_POINTS = 3000  # points of data_map.json (the viewer's scatter): a sample + the suspects
POINT_TEXT = 300  # characters of each point's text
SEED = 0
COLUMNS = [
    "position",
    "text",
    "label",
    "model_label",
    "score",
    "confidence",
    "variability",
    "correctness",
    "aum",
    "epochs",
]
# A label set's row: the label, whether the data gives it (1) or not (0), the saved model's
# verdict and probability, then the same statistics.
SET_COLUMNS = [
    "position",
    "text",
    "label",
    "given",
    "model_given",
    "model_probability",
    *COLUMNS[4:],
]


def measure_run_suspects(run, count, batch_size=256):
    """(the `count` most suspect training labels as a DataFrame, data_map.json's dict):
    one per example, or for label sets one per (example, label)."""
    dynamics = pd.read_parquet(run.run_dir / runs.DYNAMICS_FILE)
    texts, labels = run.load_split(SPLIT)
    check_same_texts(run, dynamics, texts)
    predicted = probabilities(run.parts[1], tokenize(run, texts), batch_size)
    if run.is_multi_label:
        table, columns = label_set_table(run, dynamics, texts, labels, predicted), SET_COLUMNS
    else:
        table, columns = label_table(run, dynamics, texts, labels, predicted), COLUMNS
    # Labels no epoch saw (a capped training.steps_per_epoch) have no score to rank by.
    rows = suspect_order(table["score"].to_numpy())[:count]
    suspects = table.iloc[rows][columns].reset_index(drop=True)
    return suspects, data_map(table, rows, dynamics)


def label_table(run, dynamics, texts, labels, predicted) -> pd.DataFrame:
    """A row per training example: its text, label, the saved model's, and statistics."""
    statistics = example_statistics(dynamics, len(texts))
    names = np.asarray(run.class_names, dtype=object)
    table = pd.DataFrame(
        {
            "position": np.arange(len(texts)),
            "text": texts,
            "label": names[labels],
            "model_label": names[predicted.argmax(-1)],
        }
    )
    table = pd.concat([table, statistics.reset_index(drop=True)], axis=1)
    return table.assign(score=suspect_scores(statistics), shown_label=table["label"],
                        shown_model_label=table["model_label"])  # fmt: skip


def label_set_table(run, dynamics, texts, labels, predicted) -> pd.DataFrame:
    """A row per (training example, label), in example-major order: whether the data gives
    the text the label, whether the saved model does (at the run's thresholds), and the
    statistics of the probability of what the data says."""
    num_labels = len(run.class_names)
    flat = dynamics.assign(
        position=dynamics["position"] * num_labels + dynamics[runs.DYNAMICS_LABEL]
    )
    statistics = example_statistics(flat, len(texts) * num_labels).reset_index(drop=True)
    given = np.asarray(labels).reshape(-1) > 0.5
    model_given = predicted_sets(predicted, run.thresholds).reshape(-1)
    names = np.tile(np.asarray(run.class_names, dtype=object), len(texts))
    table = pd.DataFrame(
        {
            "position": np.repeat(np.arange(len(texts)), num_labels),
            "text": np.repeat(np.asarray(texts, dtype=object), num_labels),
            "label": names,
            "given": given.astype(int),
            "model_given": model_given.astype(int),
            "model_probability": predicted.reshape(-1),
        }
    )
    table = pd.concat([table, statistics], axis=1)
    return table.assign(
        score=suspect_scores(statistics),
        shown_label=signed(names, given),
        shown_model_label=signed(names, model_given),
    )


def signed(names, given) -> np.ndarray:
    """ "+name" where a text has the label, "−name" where it lacks it.

    Example:
    >>> signed(np.array(["a", "b"], dtype=object), np.array([True, False])).tolist()
    ['+a', '−b']
    """
    return np.where(given, "+", "−").astype(object) + names


def suspects_report(run, count) -> Path:
    """Ranks `run`'s training labels into `RUN_DIR/eval/train/`; the folder's other files
    (an evaluation of a file named train) are kept."""
    output_dir = run.run_dir / runs.EVAL_DIR / SPLIT
    suspects, report = measure_run_suspects(run, count)
    with runs.staged_folder(output_dir) as staging:
        write_suspects(staging, suspects, report)
        carry_over(output_dir, staging, patterns=("*",))
    return output_dir


def suspects_summary(folder, rows=10) -> str:
    """The first `rows` suspects as a Markdown table (texts cut to 70 characters)."""
    table = pd.read_csv(Path(folder) / SUSPECTS_FILE, nrows=rows, keep_default_na=False)
    if "given" in table:  # a label set's (example, label) rows
        labels = table["label"].to_numpy(dtype=object)
        label = signed(labels, table["given"].to_numpy() > 0)
        model_label = signed(labels, table["model_given"].to_numpy() > 0)
    else:
        label, model_label = table["label"], table["model_label"]
    rows = []
    for row, shown, model_shown in zip(table.itertuples(), label, model_label):
        text = " ".join(str(row.text).split())
        text = text if len(text) <= 70 else text[:69] + "…"
        rows.append(
            (
                row.position,
                markdown_cell(shown),
                markdown_cell(model_shown),
                f"{row.score:.3f}",
                markdown_cell(text),
            )
        )
    return "\n".join(
        markdown_table(
            ["position", "label", "model label", "score", "text"],
            rows,
            [RIGHT, "left", "left", RIGHT, "left"],
        )
    )


def check_same_texts(run, dynamics, texts):
    """A RunError when the training split rebuilt today is not the one that was recorded."""
    if not recorded_texts_match(dynamics, texts):
        raise runs.RunError(
            f"{run.run_dir / runs.DYNAMICS_FILE}: the training split rebuilt "
            "from the run's config is not the one training recorded (the "
            "data changed); train the run again to rank its labels"
        )


def data_map(table, suspect_rows, dynamics) -> dict:
    """data_map.json's dict: region shares and up to MAP_POINTS points (every suspect), a
    point per row of `table` (`label_table`'s or `label_set_table`'s)."""
    statistics = table[["confidence", "variability"]]
    seen = np.flatnonzero(table["epochs"].to_numpy() > 0)
    chosen = list(suspect_rows[:MAP_POINTS])
    rank = dict(zip(chosen, range(1, len(chosen) + 1)))
    rest = np.setdiff1d(seen, chosen)
    sample = np.random.default_rng(SEED).choice(
        rest, min(len(rest), MAP_POINTS - len(chosen)), replace=False
    )
    points = [
        {
            "position": int(table.at[row, "position"]),
            "text": str(table.at[row, "text"])[:POINT_TEXT],
            "label": table.at[row, "shown_label"],
            "model_label": table.at[row, "shown_model_label"],
            **{
                name: round(float(table.at[row, name]), 3)
                for name in ("confidence", "variability", "correctness")
            },
            "suspect_rank": rank.get(row),
        }
        for row in sorted({*chosen, *sample})
    ]
    return {
        "split": SPLIT,
        "examples": int(len(seen)),
        "epochs": int(dynamics["epoch"].max()),
        "score": DEFAULT_SCORE,
        "regions": region_shares(statistics),
        "region_rule": REGION_RULE,
        "points": points,
    }


def write_suspects(folder, suspects, report):
    """Writes suspects.csv, data_map.json and data_map.png into `folder`."""
    folder = Path(folder)
    suspects.to_csv(folder / SUSPECTS_FILE, index=False, float_format="%.4f")
    runs.write_json(folder / MAP_FILE, report)
    plot_data_map(report).savefig(folder / PLOT_FILE, dpi=100)


def plot_data_map(report):
    """Confidence against variability, coloured by correctness; suspects ringed."""
    points = report["points"]
    figure = Figure(figsize=(7, 6))
    axes = figure.subplots()
    drawn = axes.scatter(
        [p["variability"] for p in points],
        [p["confidence"] for p in points],
        c=[p["correctness"] for p in points],
        cmap="coolwarm_r",
        vmin=0,
        vmax=1,
        s=8,
        alpha=0.7,
    )
    ringed = [p for p in points if p["suspect_rank"] is not None]
    axes.scatter(
        [p["variability"] for p in ringed],
        [p["confidence"] for p in ringed],
        facecolors="none",
        edgecolors="black",
        s=30,
        linewidths=0.6,
        label=f"the {len(ringed)} suspects listed",
    )
    figure.colorbar(drawn, ax=axes, label="correctness (share of epochs right)")
    shares = ", ".join(f"{name} {share:.0%}" for name, share in report["regions"].items())
    axes.set(
        xlabel="variability (std of p(label) over epochs)",
        ylabel="confidence (mean p(label) over epochs)",
        xlim=(0, 0.5),
        ylim=(0, 1),
        title=f"Training data map, {report['examples']:,} examples, "
        f"{report['epochs']} epochs\n{shares}",
    )
    if ringed:
        axes.legend(loc="lower right")
    return figure
