"""What `evaluate.py` does once its arguments hold: each run evaluated on a split or on
labelled files into `RUN_DIR/eval/<name>/` (`evaluate_run`), with the measurements its
flags ask for, the training labels' suspects and the attention export (`evaluate_runs`),
then the results printed (`print_results`).
"""

import dataclasses
from pathlib import Path

from data import load_labelled_file
from engine.evaluation.compare import check_same_labels
from engine.evaluation.measurements import (
    DATA_FILE,
    MEASUREMENT_FILES,
    RUN_MEASUREMENTS,
    EvaluationReport,
    Requests,
    carry_over,
    data_record,
    kept_measurements,
    measure,
    summaries,
)
from engine.evaluation.suspects import suspects_report, suspects_summary
from engine.label_sets import HEADLINE as SETS_HEADLINE
from engine.label_sets import write_label_set_reports
from engine.reports import format_table, write_reports
from models import predict_texts
from run_folder import runs
from run_folder.saved_run import load_run

HEADLINE = ("accuracy", "macro_f1", "weighted_f1", "loss", "ece", "num_examples")
LABEL_SETS_HEADLINE = (*SETS_HEADLINE, "num_examples")


@dataclasses.dataclass
class Results:
    """What `evaluate_runs` gave: the `EvaluationReport`s, the (run folder, suspects
    folder) pairs and the attention viewers' paths."""

    reports: list = dataclasses.field(default_factory=list)
    suspects: list = dataclasses.field(default_factory=list)
    viewers: list = dataclasses.field(default_factory=list)


def evaluate_run(run, split="test", data_files=(), batch_size=256, worst=20, requests=None):
    """Evaluates one `saved_run.Run` on `split`, or on each of `data_files` when given.

    `requests`: what else to measure on each (`measurements.Requests`: faithfulness,
    heads, tokens, comparisons, slices); measurements of the folder not asked for again
    are kept.

    Returns:
        One `measurements.EvaluationReport` per evaluated data set; its reports are in
        `RUN_DIR/eval/<name>/`, each folder replaced as a whole.

    Raises:
        DataError: the data cannot be loaded or has labels the model does not know.
    """
    requests = requests or Requests()
    for other in requests.others:  # before any work
        check_same_labels(run, other)
    dataset = run.config.dataset
    reports = []
    for data_file in data_files or [None]:
        name = Path(data_file).stem if data_file else split
        if data_file:
            texts, labels = load_labelled_file(data_file, run.class_names, dataset)
        else:
            texts, labels = run.load_split(split)
        probabilities = predict_texts(run.model, texts, batch_size)
        output_dir = run.run_dir / runs.EVAL_DIR / name
        record = data_record(data_file or split, texts, labels)
        same_data, dropped = kept_measurements(output_dir, record, legacy_ok=not data_file)
        with runs.staged_folder(output_dir) as staging:
            if run.is_multi_label:
                metrics = write_label_set_reports(
                    staging, texts, labels, probabilities, run.class_names, run.thresholds,
                    worst, run.temperature,
                )  # fmt: skip
            else:
                metrics = write_reports(
                    staging, texts, labels, probabilities, run.class_names, worst, run.temperature
                )
            runs.write_json(staging / DATA_FILE, record)
            measure(staging, run, name, texts, labels, probabilities, requests, data_file)
            carry_over(output_dir, staging, MEASUREMENT_FILES if same_data else RUN_MEASUREMENTS)
        dropped = [name for name in dropped if not (output_dir / name).exists()]
        reports.append(
            EvaluationReport(
                run.run_dir, name, output_dir, metrics, texts, labels, probabilities, dropped
            )
        )
    return reports


def evaluate_runs(run_dirs, requests, export, suspects=None, **evaluation) -> Results:
    """Evaluates each of `run_dirs` (`evaluate_run`, `evaluation`: its split, data_files,
    batch_size and worst), ranks its `suspects` most suspect training labels when asked,
    and writes the attention `export` (`attention.ExportRequest`); an export of a texts
    file replaces the evaluation.

    Raises:
        RunError, DataError, ExportError: at the first run that fails.
    """
    results = Results()
    for run_dir in run_dirs:
        out_dir = export.target(run_dir)  # before any work: nothing replaced unasked
        run = load_run(run_dir)
        if export.numbered_texts is not None:  # a texts file: its export, no evaluation
            results.viewers.append(export.write(run, out_dir))
            continue
        run_reports = evaluate_run(run, requests=requests, **evaluation)
        results.reports += run_reports
        if suspects:
            results.suspects.append((run_dir, suspects_report(run, suspects)))
        if export.wanted:
            results.viewers.append(export.write(run, out_dir, run_reports[0]))
    return results


def format_reports(reports) -> str:
    """One row per (run, data): the headline table, side by side when there are several."""
    rows = [
        {
            "run": str(report.run_dir),
            "data": report.data_name,
            **{
                key: report.metrics[key]
                for key in (LABEL_SETS_HEADLINE if "micro_f1" in report.metrics else HEADLINE)
            },
        }
        for report in reports
    ]
    return "\n".join(
        [format_table(rows), ""] + [f"reports: {report.output_dir}/" for report in reports]
    )


def print_results(results, requests):
    """The headline table, each measurement's summary, the suspects and the viewers."""
    if results.reports:
        print(format_reports(results.reports))
    for report in results.reports:
        if report.dropped:
            print(
                f"{report.output_dir}: {', '.join(report.dropped)} measured other data "
                "than this evaluation's: not kept; measure again with their flags"
            )
        for title, table in summaries(report.output_dir, requests):
            print(f"\n{title}, {report.run_dir} on {report.data_name}:\n{table.rstrip()}")
    for run_dir, folder in results.suspects:
        print(
            f"\nthe most suspect training labels of {run_dir} (all that were ranked, and "
            f"the data map, in {folder}/):\n{suspects_summary(folder)}"
        )
    for viewer in results.viewers:
        print(f"attention viewer: {viewer}")
