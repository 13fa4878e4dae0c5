"""What an attention export reads from the rest of its run folder, each as a block for
meta.json and the viewer: the methods' measured faithfulness (`faithfulness.json`), a pruned
run's kept heads (`compress.json`) and the measured heads (`heads.json`). A file that does
not read as its command wrote it is an `ExportError` that names it and the command that
writes it again.
"""

import json
from pathlib import Path

import numpy as np

from engine.evaluation.heads import HEADS_FILE
from inspection.methods.heads import STATISTICS
from run_folder import runs

# What meta.json keeps of each method in faithfulness.json: the two ERASER measures.
FAITHFULNESS_MEASURES = ("comprehensiveness", "sufficiency")
# Per head, what the viewer shows of heads.json (docs/heads.md says what each means).
HEAD_MEASURES = (
    "importance",
    "ablation_accuracy_drop",
    "ablation_loss_increase",
    "ablation_loss_change",
) + STATISTICS
# Measured since 2026-12-03: heads.json files written before lack it (shown as missing).
NEWER_MEASURES = ("ablation_loss_change",)


class ExportError(ValueError):
    """Bad example ids, an empty selection, an export in the way or an unreadable
    faithfulness, heads or compress file; the message is one line."""


def faithfulness_block(path):
    """What an export's meta.json keeps of a faithfulness file (`evaluate.py --faithfulness`):
    per method the comprehensiveness and sufficiency means with their 95% intervals, and
    the best method; None when there is no file at `path`.

    Example:
    >>> faithfulness_block(Path("runs/default/eval/nothere/faithfulness.json")) is None
    True
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        methods = {
            method: {
                measure: {
                    "mean": float(numbers[measure]["mean"]),
                    "ci95": [float(bound) for bound in numbers[measure]["ci95"]],
                }
                for measure in FAITHFULNESS_MEASURES
            }
            for method, numbers in measured["methods"].items()
        }
        # The eval folder it sits in is the split (or data file) it measured.
        block = {
            "source": str(path),
            "split": path.parent.name,
            "examples": int(measured["examples"]),
            "bins_percent": list(measured["bins_percent"]),
            "best_method": str(measured["best_method"]),
            "methods": methods,
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ExportError(
            f"{path} is not a faithfulness file of evaluate.py --faithfulness "
            f"({type(error).__name__}: {error}); measure again: python evaluate.py RUN_DIR "
            "--faithfulness 500"
        ) from None
    if block["best_method"] not in methods:
        raise ExportError(
            f"{path}: best_method {block['best_method']!r} is none of its "
            f"methods {sorted(methods)}; measure again with --faithfulness"
        )
    return block


def kept_heads_of(run_dir):
    """Per layer, the original numbers of the heads a pruned run kept (its compress.json's
    `kept_heads`); None for a run that was not pruned (an int8 copy's compress.json has
    no `kept_heads`).

    Example:
    >>> kept_heads_of(Path("runs/not_pruned")) is None
    True
    """
    path = Path(run_dir) / runs.COMPRESS_FILE
    if not path.is_file():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        if report.get("int8") and "kept_heads" not in report:
            return None
        return [[int(head) for head in heads] for heads in report["kept_heads"]]
    except (ValueError, KeyError, TypeError) as error:
        raise ExportError(
            f"{path} is not a compress.json of compress.py "
            f"({type(error).__name__}: {error}); prune the run again"
        ) from None


def heads_block(run_dir, heads_per_layer):
    """What the viewer shows of a run's heads.json (`evaluate.py --heads`): the validation
    split's, else the first other split's that has one; None when no split has.

    Args:
        run_dir: the run folder.
        heads_per_layer: the model's heads: per layer a count, or the list of their numbers
            (a pruned run's `kept_heads`); heads.json must hold exactly those.

    Returns:
        {"source", "split", "examples", "spearman_importance_ablation", "measures",
        "heads": [{"layer", "head", <measure>: float or None}, ...]}, or None.
    """
    folder = Path(run_dir) / runs.EVAL_DIR
    paths = sorted(
        folder.glob(f"*/{HEADS_FILE}"),
        key=lambda path: (path.parent.name != runs.HEADS_SPLIT, path.parent.name),
    )
    if not paths:
        return None
    path = paths[0]
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        heads = [
            {
                "layer": int(head["layer"]),
                "head": int(head["head"]),
                **{
                    name: _finite_or_none(head.get(name) if name in NEWER_MEASURES else head[name])
                    for name in HEAD_MEASURES
                },
            }
            for head in measured["heads"]
        ]
        block = {
            "source": str(path),
            "split": path.parent.name,
            "examples": int(measured["examples"]),
            "spearman_importance_ablation": _finite_or_none(
                measured["spearman_importance_ablation"]
            ),
            "measures": list(HEAD_MEASURES),
            "heads": heads,
        }
    except (ValueError, KeyError, TypeError) as error:
        raise ExportError(
            f"{path} is not a heads file of evaluate.py --heads "
            f"({type(error).__name__}: {error}); measure again: python "
            "evaluate.py RUN_DIR --split validation --heads 500"
        ) from None
    expected = {
        (layer, head)
        for layer, heads in enumerate(heads_per_layer)
        for head in (range(heads) if isinstance(heads, int) else heads)
    }
    found = {(head["layer"], head["head"]) for head in heads}
    if found != expected or len(heads) != len(found):
        raise ExportError(
            f"{path} measured other heads than the model has ({len(found)} "
            f"(layer, head) pairs for its {len(expected)}); measure again: "
            f"python evaluate.py {run_dir} --split {path.parent.name} --heads 500"
        )
    return block


def _finite_or_none(value):
    """A float, or None for a missing or non-finite one (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None
