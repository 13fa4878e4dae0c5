"""bench_label_noise: the flipped labels and the tables (the runs themselves are the bench's)."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_label_noise as bench  # noqa: E402
import label_noise_data  # noqa: E402
import label_noise_report  # noqa: E402


def test_five_percent_of_the_labels_go_to_another_class_the_same_for_a_seed():
    labels = np.arange(1000) % 4
    noisy, flipped = label_noise_data.flip(labels, 4, seed=0)
    assert flipped.sum() == 50
    assert (noisy[flipped] != labels[flipped]).all() and (noisy[~flipped] == labels[~flipped]).all()
    assert set(noisy[flipped]) == {0, 1, 2, 3}  # every other class can be drawn
    again, flipped_again = label_noise_data.flip(labels, 4, seed=0)
    assert (again == noisy).all() and (flipped_again == flipped).all()
    assert not (label_noise_data.flip(labels, 4, seed=1)[1] == flipped).all()
    binary, flipped = label_noise_data.flip(np.arange(200) % 2, 2, seed=0)
    assert (binary[flipped] == 1 - np.arange(200)[flipped] % 2).all()


def test_the_tables_show_recall_auroc_recovery_and_overhead():
    scores = {"recall": 0.6, "auroc": 0.91}
    report = {
        "detection": [
            {
                "dataset": "reuters_r8",
                "recipe": "scratch",
                "seed": 0,
                "test_accuracy": 0.95,
                "aum": scores,
                "confidence": scores,
                "aum_and_confidence": scores,
                "cleanlab": {"recall": 0.5, "auroc": 0.88},
            }
        ],
        "recovery": [
            {"dataset": "reuters_r8", "seed": 0, "clean": 0.97, "noisy": 0.95, "cleaned": 0.965}
        ],
        "cost": [{"recipe": "r", "off_s": [10, 12], "on_s": [11, 11], "overhead": 0.0}],
        "slice": [
            {
                "dataset": "reuters_r8",
                "accuracy": 0.75,
                "candidates": 120,
                "weak": 1,
                "met": True,
                "first": [
                    {
                        "slice": "word: zqxv",
                        "size": 63,
                        "accuracy": 0.2,
                        "accuracy_ci": [0.1, 0.3],
                        "excess_errors": 34.65,
                    }
                ],
            }
        ],
    }
    lines = label_noise_report.format_tables(report).splitlines()
    # The scores the row was measured with, then "-" for those it predates.
    assert lines[2] == (
        "| reuters_r8 | scratch | 0 | 95.00 | 60.0% / 0.910 | 60.0% / 0.910 "
        "| 60.0% / 0.910 | - | - | - | 50.0% / 0.880 | 5.0% |"
    )
    assert "| reuters_r8 | 0 | 97.00 | 95.00 | 96.50 | 0.75 |" in lines
    # One seed: no interval; the share is the mean won over the mean lost.
    assert "| reuters_r8 | 97.00 | 95.00 | 96.50 | 2.00 | 1.50 | 0.75 |" in lines
    assert lines[-3] == "| r | [10, 12] | [11, 11] | +0.0% |"
    assert lines[-1] == (
        "Planted slice, reuters_r8: the first weak slices of 1 (of 120 "
        "candidates; overall accuracy 75.00%): word: zqxv (63 texts, accuracy "
        "20.0%, 34.6 excess errors). Goal met: yes."
    )


def test_the_recovery_summary_is_the_mean_and_t_interval_over_seeds():
    rows = [
        {"dataset": "d", "clean": clean, "noisy": 0.9, "cleaned": cleaned}
        for clean, cleaned in ((0.94, 0.92), (0.96, 0.93), (0.95, 0.91))
    ]
    lines = label_noise_report.recovery_summary(rows).splitlines()
    # lost 4, 6, 5 points: mean 5, t(0.975, 2) * 1 / sqrt(3) = 2.48; won 2, 3, 1.
    assert lines[2] == (
        "| d | 95.00 ± 2.48 | 90.00 ± 0.00 | 92.00 ± 2.48 | 5.00 ± 2.48 | 2.00 ± 2.48 | 0.40 |"
    )


def test_a_bench_run_replaces_only_the_rows_of_the_runs_it_measured_again():
    earlier = [
        {"dataset": "a", "recipe": "scratch", "seed": 0, "value": 1},
        {"dataset": "a", "recipe": "scratch", "seed": 1, "value": 2},
    ]
    again = [
        {"dataset": "a", "recipe": "scratch", "seed": 1, "value": 3},
        {"dataset": "a", "recipe": "minilm", "seed": 1, "value": 4},
    ]
    assert [row["value"] for row in label_noise_report.merged(again, earlier)] == [1, 3, 4]


def test_every_part_runs_by_default():
    args = bench.parse_args([])
    assert args.parts == ["detection", "recovery", "slice", "cost"] and not args.reuse
