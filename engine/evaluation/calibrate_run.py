"""`evaluate.py RUN --calibrate`: calibrates a run trained without it (`engine.calibration`).

The temperature is fitted on the run's validation split and folded into its classifier;
model.keras is replaced in one step (a crash leaves the old one), after a check that the
new file reloads and predicts as the calibrated model does. metrics.json gains the
"calibration" block train.py writes, its validation and test scores recomputed from the
calibrated probabilities (their accuracy unchanged); a multi-label run's thresholds are
chosen again on validation, after the temperatures, as training chooses them.
"""

import json

import numpy as np

from engine.calibration import calibrate
from engine.label_sets import scored_splits
from models import predict_texts, saved_and_reloaded
from run_folder import runs

SPLITS = ("validation", "test")


def calibrate_run(run, batch_size=256) -> str:
    """Calibrates `run` (a `saved_run.Run`) in its folder; returns what it did, in a line.

    Raises:
        RunError: the run is calibrated already, or its head is quantized (compress.py's
            int8 copies: calibrate the run they came from, then compress it again).
    """
    if run.temperature is not None:
        raise runs.RunError(
            f"{run.run_dir} is calibrated already (temperature {run.temperature}); "
            "--calibrate is for runs trained with training.calibrate: false or before it"
        )
    classifier = run.parts[1]
    if getattr(classifier.head, "quantization_mode", None):
        raise runs.RunError(
            f"{run.run_dir}: its head is quantized ({classifier.head.quantization_mode}); "
            "calibrate the run it was compressed from, then compress that again"
        )
    predictions = {}
    for split in SPLITS:
        texts, labels = run.load_split(split)
        predictions[split] = (predict_texts(run.model, texts, batch_size), labels)
    report, calibrated = calibrate(classifier, predictions, run.class_names)
    save_checked(run, run.load_split("validation")[0][:64])
    metrics_path = run.run_dir / runs.METRICS_FILE
    metrics = json.loads(metrics_path.read_text())
    metrics.update(scored_splits(calibrated, run.class_names, run.is_multi_label, run.run_dir))
    metrics["calibration"] = report
    runs.write_json(metrics_path, metrics)
    return (
        f"{run.run_dir}: calibrated, temperature {report['temperature']}; ECE on validation "
        f"{report['validation']['ece_before']:.4f} -> {report['validation']['ece_after']:.4f}, "
        f"on test {report['test']['ece_before']:.4f} -> {report['test']['ece_after']:.4f}"
    )


def save_checked(run, texts) -> None:
    """Replaces the run's model.keras with `run.model` (its classifier calibrated), after a
    check that the new file reloads and predicts the same."""
    with runs.staged_file(run.run_dir / runs.MODEL_FILE) as temporary:
        expected, actual = saved_and_reloaded(run.model, temporary, texts)
        if not np.allclose(expected, actual, atol=1e-6):
            raise runs.RunError(
                f"{temporary}: the calibrated model reloads with other predictions (max "
                f"difference {np.abs(expected - actual).max():.2e}); model.keras is unchanged"
            )
