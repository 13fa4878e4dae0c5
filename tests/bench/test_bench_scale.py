"""The scale bench's pure parts: synthetic shards (bench/scale_data.py), medians, the goals
and the table."""

import sys
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_scale  # noqa: E402
import scale_data  # noqa: E402


def test_synthetic_rows_are_seeded_and_carry_their_label():
    texts, labels = scale_data.synthetic_rows(500, seed=3)
    assert (texts, labels) == scale_data.synthetic_rows(500, seed=3)
    assert texts != scale_data.synthetic_rows(500, seed=4)[0]
    assert set(labels) == {"neg", "pos"}
    for text, label in zip(texts, labels, strict=True):
        words = text.split()
        assert 7 <= len(words) <= 20 and words[-1] in scale_data.CUES[label]


def test_shards_hold_the_rows_and_are_written_once(tmp_path, monkeypatch):
    assert scale_data.shard_sizes(2_500_000) == [1_000_000, 1_000_000, 500_000]
    assert scale_data.shard_sizes(300, per_shard=100) == [100, 100, 100]
    monkeypatch.setattr(scale_data, "ROWS_PER_SHARD", 400)
    monkeypatch.setattr(scale_data, "CHUNK_ROWS", 150)
    spec = scale_data.write_dataset(1000, "parquet", folder=tmp_path)
    shards = sorted(Path(spec).parent.glob("*.parquet"))
    assert [pq.ParquetFile(path).metadata.num_rows for path in shards] == [400, 400, 200]
    written = shards[0].stat().st_mtime_ns
    assert scale_data.write_dataset(1000, "parquet", folder=tmp_path) == spec
    assert shards[0].stat().st_mtime_ns == written  # reused, not written again
    csv_spec = scale_data.write_dataset(1000, "csv", folder=tmp_path)
    table = pa_csv.read_csv(sorted(Path(csv_spec).parent.glob("*.csv"))[2])
    assert table.column_names == ["text", "label"] and table.num_rows == 200


def result(rows, path, peak, first, rate, file_format="csv"):
    return {
        "rows": rows,
        "format": file_format,
        "path": path,
        "peak_rss_gb": peak,
        "first_step_s": first,
        "rows_per_s": rate,
    }


RESULTS = [
    result(1000, "memory", 1.5, 10.0, 1000.0),
    result(1000, "memory", 1.7, 14.0, 1200.0),
    result(1000, "stream", 1.2, 5.0, 950.0),
    result(10000, "memory", 9.0, 90.0, 1000.0),
    result(10000, "stream", 1.3, 30.0, 940.0),
]


def test_summary_takes_medians_and_keeps_errors():
    summary = bench_scale.summarize(
        RESULTS + [{"rows": 10000, "format": "csv", "path": "memory", "error": "exit -9: killed"}]
    )
    assert summary[1000, "csv", "memory"] == {
        "peak_rss_gb": 1.6,
        "first_step_s": 12.0,
        "rows_per_s": 1100.0,
        "runs": 2,
        "errors": [],
    }
    assert summary[10000, "csv", "memory"]["errors"] == ["exit -9: killed"]
    assert summary[10000, "csv", "memory"]["runs"] == 1


def test_goals_are_checked_at_the_largest_size_and_the_one_below():
    lines = bench_scale.goals(bench_scale.summarize(RESULTS), [1000, 10000], ["csv"])
    assert lines == [
        ("csv, 10,000 rows streamed: peak memory under 3 GB", "1.30 GB", True),
        ("csv, 10,000 rows streamed: first step within 60 s", "30.0 s", True),
        # 950 / 1100 in-memory rows per second: 0.86, more than 10% slower.
        ("csv, 1,000 rows: streamed throughput within 10% of in memory", "0.86x", False),
        ("csv: streamed peak memory flat from 1,000 to 10,000 rows (within 25%)", "1.08x", True),
    ]
    assert bench_scale.goals({}, [10000], ["csv"]) == [
        ("csv, 10,000 rows streamed: peak memory under 3 GB", "not measured", False),
        ("csv, 10,000 rows streamed: first step within 60 s", "not measured", False),
    ]


def test_the_table_puts_the_paths_side_by_side():
    summary = bench_scale.summarize(
        RESULTS + [{"rows": 10000, "format": "parquet", "path": "stream", "error": "over 60 s"}]
    )
    assert bench_scale.format_table(summary).splitlines()[2:] == [
        "| 1,000 | csv | 1.60 / 1.20 | 12.0 / 5.0 | 1,100 / 950 |",
        "| 10,000 | csv | 9.00 / 1.30 | 90.0 / 30.0 | 1,000 / 940 |",
        # Parquet in memory was not measured (--memory-max-rows): "-"; its stream failed.
        "| 10,000 | parquet | - / failed | - / failed | - / failed |",
    ]


def test_help_runs_without_tensorflow(capsys):
    with pytest.raises(SystemExit) as exit:
        bench_scale.main(["--help"])
    assert exit.value.code == 0 and "--quick" in capsys.readouterr().out
