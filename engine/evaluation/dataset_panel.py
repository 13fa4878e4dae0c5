"""What the viewer's Dataset panel shows of a run's eval/ folder, for the attention export.

Any of four files, each optional:
    eval/<split>/tokens.json       the words the model relies on (`viewer_block`)
    eval/train/data_map.json       the training data map (`evaluate.py --suspects`): the
                                   regions' shares and a sample of points with the suspects
    eval/<split>/slices.json       the weak slices (`evaluate.py --slices`)
    eval/<split>/calibration.json  the reliability diagram and the coverage curve (every
                                   evaluation; `engine.calibration.reports`)
tokens.json, slices.json and calibration.json are the export's own split's, else the
validation or test split's, else any split's (`viewer_path`). The block keeps only what the panel
draws, floats to 3 digits: a data map of 3000 points is about 1 MB of the page, mostly
the points' texts.

Example:
>>> dataset_block(Path("runs/nothere"), "test") is None
True
"""

import json
import math
from pathlib import Path

from engine.calibration.reports import CALIBRATION_FILE
from engine.evaluation import suspects
from engine.evaluation.slices import SLICES_FILE
from engine.evaluation.tokens_report import TOKENS_FILE
from run_folder import runs

DIGITS = 3
VIEWER_WORDS = 20  # per class in the viewer's Dataset panel
# Which split's tokens.json the viewer shows when the export's own data has none.
VIEWER_SPLITS = ("validation", "test")


def dataset_block(run_dir, data_name=None):
    """The Dataset panel's data: tokens.json's fields (`viewer_block`), plus
    `data_map` and `slices` when the run has those files; None when it has none of them.

    Raises:
        ValueError: a file is not what its command writes; the message says how to measure
            again.
    """
    block = viewer_block(run_dir, data_name) or {}
    data_map = data_map_block(run_dir)
    if data_map is not None:
        block["data_map"] = data_map
    slices = slices_block(run_dir, data_name)
    if slices is not None:
        block["slices"] = slices
    calibration = calibration_block(run_dir, data_name)
    if calibration is not None:
        block["calibration"] = calibration
    return block or None


def calibration_block(run_dir, data_name=None):
    """What the panel draws of a split's calibration.json (`viewer_path`'s); None without.

    Returns:
        {"source", "split", "temperature", "subject", "ece", "ece_before", "brier",
        "bins": {"before", "after": [{"confidence", "accuracy", "count"}, ...]},
        "coverage": [{"threshold", "coverage", "accuracy"}, ...] or None}.
    """
    path = viewer_path(run_dir, CALIBRATION_FILE, data_name)
    if path is None:
        return None
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        bins = {
            name: [
                {"confidence": _rounded(row["confidence"]), "accuracy": _rounded(row["accuracy"]),
                 "count": int(row["count"])}
                for row in measured["bins"][name]
            ]
            for name in ("before", "after")
        }  # fmt: skip
        coverage = measured["coverage"]
        return {
            "source": str(path),
            "split": path.parent.name,
            "temperature": measured["temperature"],
            "subject": str(measured["subject"]),
            **{key: _rounded(measured[key]) for key in ("ece", "ece_before", "brier")},
            "bins": bins,
            "coverage": None
            if coverage is None
            else [{key: _rounded(row[key]) for key in ("threshold", "coverage", "accuracy")}
                  for row in coverage],
        }  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{path} is not a calibration file of evaluate.py ({type(error).__name__}: "
            f"{error}); evaluate again: python evaluate.py {run_dir} --split {path.parent.name}"
        ) from None


def data_map_block(run_dir):
    """What the panel draws of `RUN_DIR/eval/train/data_map.json`; None without one.

    Returns:
        {"source", "split", "examples", "epochs", "regions": {region: share},
        "region_rule", "points": [{"position", "text", "label", "model_label",
        "confidence", "variability", "correctness", "suspect_rank"}, ...]}.
    """
    path = Path(run_dir) / runs.EVAL_DIR / suspects.SPLIT / suspects.MAP_FILE
    if not path.is_file():
        return None
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        points = [_point(point) for point in measured["points"]]
        return {
            "source": str(path),
            "split": str(measured["split"]),
            "examples": int(measured["examples"]),
            "epochs": int(measured["epochs"]),
            "regions": {
                str(region): _rounded(share) for region, share in measured["regions"].items()
            },
            "region_rule": str(measured["region_rule"]),
            # An example no epoch saw has no numbers to draw (NaN, which JSON lacks).
            "points": [point for point in points if point is not None],
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{path} is not a data map of evaluate.py --suspects "
            f"({type(error).__name__}: {error}); measure again: python "
            f"evaluate.py {run_dir} --suspects"
        ) from None


def slices_block(run_dir, data_name=None):
    """What the panel shows of a split's slices.json (`data_name`'s, else validation's or
    test's, else any); None without one.

    Returns:
        {"source", "split", "examples", "metric" ("accuracy", or "micro_f1" for label
        sets), the metric, "correction", "candidates" (how many slices were tested),
        "weak_slices": [{"slice", "kind", "size", the metric, its "_ci"}, ...]} (in the
        file's order).
    """
    path = viewer_path(run_dir, SLICES_FILE, data_name)
    if path is None:
        return None
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        metric = measured.get("metric", "accuracy")  # older files: accuracy
        weak = [
            {
                "slice": str(entry["slice"]),
                "kind": str(entry["kind"]),
                "size": int(entry["size"]),
                metric: _rounded(entry[metric]),
                f"{metric}_ci": [_rounded(bound) for bound in entry[f"{metric}_ci"]],
            }
            for entry in measured["weak_slices"]
        ]
        return {
            "source": str(path),
            "split": path.parent.name,
            "examples": int(measured["examples"]),
            "metric": metric,
            metric: _rounded(measured[metric]),
            "correction": str(measured["correction"]),
            "candidates": len(measured["slices"]),
            "weak_slices": weak,
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{path} is not a slices file of evaluate.py --slices "
            f"({type(error).__name__}: {error}); measure again: python "
            f"evaluate.py {run_dir} --split {path.parent.name} "
            "--slices"
        ) from None


def _point(point):
    """A data map point as the page keeps it; None when its numbers are not finite."""
    numbers = {key: float(point[key]) for key in ("confidence", "variability", "correctness")}
    if not all(math.isfinite(value) for value in numbers.values()):
        return None
    rank = point.get("suspect_rank")
    return {
        "position": int(point["position"]),
        "text": str(point["text"])[: suspects.POINT_TEXT],
        "label": str(point["label"]),
        "model_label": str(point["model_label"]),
        **{key: round(value, DIGITS) for key, value in numbers.items()},
        "suspect_rank": None if rank is None else int(rank),
    }


def _rounded(value):
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"a number is {value}")
    return round(value, DIGITS)


def viewer_block(run_dir, data_name=None):
    """What the viewer's Dataset panel shows of a run's tokens.json: `data_name`'s, else the
    validation or test split's, else any; None when the run has none.

    Returns:
        {"source", "split", "examples", "method", "faithfulness", "classes": {LABEL:
        [{"word", "count", "reliance", "reliance_ci", "insertion", "control",
        "attribution", "p_class_given_word", "shortcut"}, ...]}} (the top `VIEWER_WORDS`).

    Raises:
        ValueError: the file is not a tokens.json; the message says how to measure again.
    """
    path = viewer_path(run_dir, TOKENS_FILE, data_name)
    if path is None:
        return None
    kept = (
        "word",
        "count",
        "reliance",
        "reliance_ci",
        "insertion",
        "control",
        "attribution",
        "p_class_given_word",
        "shortcut",
    )
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        classes = {
            str(name): [{key: entry[key] for key in kept} for entry in entries[:VIEWER_WORDS]]
            for name, entries in report["classes"].items()
        }
        return {
            "source": str(path),
            "split": path.parent.name,
            "examples": int(report["examples"]),
            "method": str(report["method"]),
            "faithfulness": report.get("faithfulness"),
            "classes": classes,
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{path} is not a tokens file of evaluate.py --tokens "
            f"({type(error).__name__}: {error}); measure again: python "
            f"evaluate.py {run_dir} --tokens"
        ) from None


def viewer_path(run_dir, filename, data_name=None):
    """The `RUN_DIR/eval/<split>/<filename>` the viewer shows: `data_name`'s, else the
    validation or test split's, else the first other split's; None when no split has one.

    Example:
    >>> viewer_path(Path("runs/nothere"), TOKENS_FILE, "test") is None
    True
    """
    order = [data_name, *VIEWER_SPLITS]
    paths = sorted(
        (Path(run_dir) / runs.EVAL_DIR).glob(f"*/{filename}"),
        key=lambda path: (
            order.index(path.parent.name) if path.parent.name in order else len(order),
            path.parent.name,
        ),
    )
    return paths[0] if paths else None
