"""The measurements in an evaluation folder (`RUN_DIR/eval/<split>/`) that outlive it.

`evaluate.py` rewrites the folder as a whole on every evaluation. What its flags measured
there before (`--faithfulness`, `--heads`, `--tokens`, `--compare`, `--slices`, and in
`eval/train/` `--suspects`) is kept unless measured again: the model has not changed, and
a measurement can take minutes. Kept only when measured on the same data: each evaluation
writes `data.json` (what it evaluated: the split or file, the examples and a hash of the
texts and labels), and a folder of other data (`--data test.csv` after the test split, a
file edited since) keeps nothing. `EvaluationReport` is what one evaluation of a folder gave.
"""

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np

from data import DataError
from engine.evaluation import compare, faithfulness, heads, slices, tokens, tokens_report
from inspection.methods.attribution import DEFAULT_METHOD

# Each flag's files, as glob patterns: faithfulness.json, .md and .png, and so on. Those
# measured on the evaluated data are kept only on the same data; --suspects' come from the
# run's training dynamics, whatever `eval/train/` evaluated.
DATA_MEASUREMENTS = ("faithfulness.*", "heads.*", "tokens.*", "compare_*", "slices.*")
RUN_MEASUREMENTS = ("suspects.csv", "data_map.*")
MEASUREMENT_FILES = DATA_MEASUREMENTS + RUN_MEASUREMENTS
SUMMARY_WORDS = 8
DATA_FILE = "data.json"


def data_record(source, texts, labels):
    """What an evaluation measured: {"source", "examples", "sha256"}, the hash over the
    texts and labels in order (the same texts in another order are other data).

    Example:
    >>> first = data_record("test", ["a", "b"], [0, 1])
    >>> first == data_record("test", ["a", "b"], [0, 1])
    True
    >>> first["sha256"] == data_record("test", ["a", "b"], [1, 1])["sha256"]
    False
    """
    digest = hashlib.sha256()
    for text, label in zip(texts, labels, strict=True):
        # A multi-label row: its multi-hot labels as 0/1 digits.
        label = "".join(str(int(x)) for x in label) if np.ndim(label) else int(label)
        digest.update(f"{len(str(text))}:{text}\t{label}\n".encode())
    return {"source": str(source), "examples": len(texts), "sha256": digest.hexdigest()}


def kept_measurements(folder, record, legacy_ok):
    """(whether `folder`'s measurements were made on the data of `record`, the names of
    those that were not). A folder from before `data.json` counts as the same data only
    when `legacy_ok` (the run's own split: what it could only have measured)."""
    folder = Path(folder)
    names = sorted(path.name for pattern in DATA_MEASUREMENTS for path in folder.glob(pattern))
    try:
        before = json.loads((folder / DATA_FILE).read_text())
        # The source is what the user called it ("test", "./test.csv"); the data is the hash.
        same = (before["examples"], before["sha256"]) == (record["examples"], record["sha256"])
    except FileNotFoundError:
        same = legacy_ok
    except (ValueError, KeyError, TypeError):
        same = False
    return same, ([] if same else names)


def carry_over(folder, staging, patterns=MEASUREMENT_FILES):
    """Copies the files of `folder` matching `patterns` into its replacement `staging`,
    except those `staging` already holds (measured again).

    Example:
    >>> import tempfile
    >>> old, new = (Path(tempfile.mkdtemp()) for _ in range(2))
    >>> _ = (old / "heads.json").write_text("old"), (old / "metrics.json").write_text("old")
    >>> _ = (old / "tokens.json").write_text("old"), (new / "tokens.json").write_text("new")
    >>> carry_over(old, new)
    >>> sorted(path.name for path in new.iterdir()), (new / "tokens.json").read_text()
    (['heads.json', 'tokens.json'], 'new')
    """
    folder, staging = Path(folder), Path(staging)
    if not folder.is_dir():
        return
    for pattern in patterns:
        for path in folder.glob(pattern):
            if path.is_file() and not (staging / path.name).exists():
                shutil.copy2(path, staging / path.name)


@dataclasses.dataclass
class EvaluationReport:
    """One evaluated (run, data): the metrics, where the reports went, what was scored."""

    run_dir: Path
    data_name: str
    output_dir: Path
    metrics: dict
    texts: np.ndarray = dataclasses.field(repr=False)
    labels: np.ndarray = dataclasses.field(repr=False)
    probabilities: np.ndarray = dataclasses.field(repr=False)
    dropped: list = dataclasses.field(default_factory=list)  # measured on other data


@dataclasses.dataclass
class Requests:
    """What `evaluate.py`'s flags ask to measure on each evaluated data set.

    faithfulness, heads, tokens: how many first examples each measures (None: not asked).
    others: runs (`saved_run.Run`) to compare with (`--compare`). method, min_count: the
    attribution method and the word threshold of `tokens` and the comparisons (min_count:
    also the smallest slice). slices: whether to find the weak slices (`--slices`).
    """

    faithfulness: int | None = None
    heads: int | None = None
    tokens: int | None = None
    others: list = dataclasses.field(default_factory=list)
    method: str = DEFAULT_METHOD
    min_count: int = 20
    slices: bool = False


def measure(staging, run, data_name, texts, labels, probabilities, requests, data_file=None):
    """Writes what `requests` asks for into `staging`, the evaluation folder's replacement
    (then `carry_over` keeps what was measured there before and not again). `data_file`:
    the labelled file evaluated, None for the run's split `data_name`."""
    if requests.tokens and run.is_pair:
        raise DataError(
            f"{run.run_dir}: --tokens does not yet rank the words of text pairs (one ranking "
            "per side is planned); the other measurements take pairs"
        )
    if requests.tokens and run.is_multi_label:
        raise DataError(
            f"{run.run_dir}: --tokens does not yet rank the words of multi-label runs (one "
            "ranking per label is planned); --faithfulness, --heads, --slices, --compare "
            "and --suspects measure them"
        )
    if requests.slices:  # first: a missing slice column stops it before the long ones
        slices.write_slices(
            staging,
            slices.measure_run_slices(
                run, texts, labels, probabilities, data_name, requests.min_count, data_file
            ),
        )
    if requests.faithfulness:
        faithfulness.write_faithfulness(
            staging, faithfulness.measure_run_faithfulness(run, texts, requests.faithfulness)
        )
    if requests.heads:
        heads.write_heads(
            staging, heads.measure_run_heads(run, texts, labels, requests.heads, data_name)
        )
    if requests.tokens:
        tokens_report.write_tokens(
            staging,
            tokens.measure_run_tokens(
                run, texts, labels, requests.tokens, data_name, requests.method, requests.min_count
            ),
        )
    for other in requests.others:
        compare.write_comparison(
            staging,
            other.run_dir,
            compare.compare_runs(
                run,
                other,
                texts,
                labels,
                probabilities,
                data_name,
                method=requests.method,
                min_count=requests.min_count,
            ),
        )


def summaries(output_dir, requests):
    """What evaluate.py prints of each measurement it made: (title, Markdown) pairs."""
    output_dir = Path(output_dir)
    printed = []
    if requests.faithfulness:
        printed.append(
            ("faithfulness of the explanations", (output_dir / faithfulness.TABLE_FILE).read_text())
        )
    if requests.heads:
        table = (output_dir / heads.TABLE_FILE).read_text().splitlines()
        printed.append(
            (
                f"attention heads (most important first; all in {output_dir / heads.TABLE_FILE})",
                "\n".join(table[:12]),
            )
        )
    if requests.tokens:
        report = json.loads((output_dir / tokens_report.TOKENS_FILE).read_text())
        printed.append(
            (
                f"the words the model relies on, top {SUMMARY_WORDS} per class (*: "
                f"a shortcut; all in {output_dir / tokens_report.TABLE_FILE})",
                tokens_report.tokens_summary(report, SUMMARY_WORDS),
            )
        )
    if requests.slices:
        report = json.loads((output_dir / slices.SLICES_FILE).read_text())
        printed.append(
            (
                f"weak slices, most excess errors first (all in {output_dir / slices.TABLE_FILE})",
                slices.slices_summary(report),
            )
        )
    for other in requests.others:
        table = (output_dir / compare.compare_file(other.run_dir, ".md")).read_text()
        printed.append((f"compared with {other.run_dir}", table.split("\n## ")[0]))
    return printed
