"""bench_commits reads the ratio column of the tables our benchmarks print."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_commits import ratios  # noqa: E402

ATTENTION = """\
| length | mode | ours (ms) | Keras (ms) | ours / Keras |
|---:|---|---:|---:|---:|
| 64 | train | 8.4 | 10.5 | 0.80 |
| 256 | infer+scores | 27.7 | 31.7 | 0.87 |
"""
PRETRAINED = """\
max |ours - keras-hub| of the last hidden states, real tokens: 5.8e-06
| length | mode | ours (ms) | keras-hub (ms) | ours / keras-hub | ours (GFLOP/s) | share of peak |
|---:|---|---:|---:|---:|---:|---:|
| 64 | train step | 801.6 | 805.0 | 1.00 | 167.3 | 45.3% |
"""


def test_the_ratio_column_is_found_by_its_header_not_its_place():
    assert ratios(ATTENTION) == {"64 | train": 0.80, "256 | infer+scores": 0.87}
    assert ratios(PRETRAINED) == {"64 | train step": 1.00}  # not the GFLOP/s after it


def test_a_row_without_a_number_is_left_out():
    table = ATTENTION + (
        "| length | memory allocated by one training step | ours (MiB) | Keras (MiB) "
        "| ours / Keras |\n| 256 | train | 136.1 | not measurable here | not measurable here |\n"
    )
    assert ratios(table) == {"64 | train": 0.80, "256 | infer+scores": 0.87}
