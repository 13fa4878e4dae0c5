"""A run folder's data quality files as `evaluate.py --suspects` and `--slices` write them
(eval/train/data_map.json, eval/<split>/slices.json), for the Dataset panel's tests."""

import json

from inspection.methods.slices import correction_sentence

# A text that tries to become markup wherever it is shown.
HOSTILE_TEXT = '<img src=x onerror="window.pwned=1">'
LONG_TEXT = "too long " * 50  # 450 characters; the page keeps 300


def point(
    position, text, label, model_label, confidence, variability, correctness, suspect_rank=None
):
    return {
        "position": position,
        "text": text,
        "label": label,
        "model_label": model_label,
        "confidence": confidence,
        "variability": variability,
        "correctness": correctness,
        "suspect_rank": suspect_rank,
    }


DATA_MAP = {
    "split": "train",
    "examples": 8530,
    "epochs": 3,
    "score": "aum",
    "regions": {"easy-to-learn": 0.6213, "ambiguous": 0.27, "hard-to-learn": 0.1087},
    "region_rule": "ambiguous: variability at least 0.2; otherwise easy-to-learn: "
    "confidence at least 0.5, else hard-to-learn",
    "points": [
        point(12, "a wonderful, moving film", "positive", "positive", 0.91234, 0.05, 1.0),
        point(40, HOSTILE_TEXT, "positive", "negative", 0.12, 0.08, 0.0, suspect_rank=1),
        point(7, "dull and far too long", "negative", "negative", 0.55, 0.3, 0.66667),
        point(99, LONG_TEXT, "negative", "positive", 0.25, 0.45, 0.33333, suspect_rank=2),
        # Never seen by an epoch: no numbers to draw.
        point(3, "unseen", "negative", "negative", float("nan"), float("nan"), float("nan")),
    ],
}


def entry(name, kind, size, accuracy, low, high):
    return {
        "slice": name,
        "kind": kind,
        "size": size,
        "accuracy": accuracy,
        "accuracy_ci": [low, high],
    }


WEAK_SLICES = [
    entry("word: zqxv", "word", 40, 0.2, 0.1, 0.35),
    entry("length: over 40 words", "length", 120, 0.61234, 0.52, 0.7),
    entry(f"word: {HOSTILE_TEXT}", "word", 25, 0.4, 0.22, 0.6),
]
CORRECTION = correction_sentence(5)


def slices_report(split, weak):
    fine = [
        entry("label: positive", "label", 533, 0.86, 0.83, 0.89),
        entry("length: under 10 words", "length", 300, 0.88, 0.84, 0.91),
    ]
    return {
        "split": split,
        "examples": 1066,
        "accuracy": 0.85,
        "correction": CORRECTION,
        "weak_slices": weak,
        "slices": weak + fine,
    }


def write_data_quality_files(run_dir, data_map=True, slice_splits=("test",)):
    """Writes eval/train/data_map.json (when `data_map`) and eval/<split>/slices.json per
    split of `slice_splits`: the test split's with the 3 weak slices, any other's with
    none. Returns `run_dir`."""
    if data_map:
        write(run_dir / "eval" / "train" / "data_map.json", DATA_MAP)
    for split in slice_splits:
        write(
            run_dir / "eval" / split / "slices.json",
            slices_report(split, WEAK_SLICES if split == "test" else []),
        )
    return run_dir


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    # As json.dump writes them: NaN as the bare word NaN.
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
