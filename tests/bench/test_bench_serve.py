"""bench_serve end to end on the tiny run: a spawned serve.py, small counts, a short render."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_serve  # noqa: E402

from tests.inspection.viewer_browser import browser  # noqa: E402, F401


def test_the_bench_measures_every_goal_and_writes_its_results(
    tiny_run_dir,
    tmp_path,
    capsys,
    browser,  # noqa: F811
):
    # The shared Chromium: another test file of this process may hold Playwright already.
    assert (
        bench_serve.main(
            [
                "--runs",
                str(tiny_run_dir),
                "--starts",
                "1",
                "--requests",
                "5",
                "--rounds",
                "2",
                "--batch",
                "4",
                "--render-tokens",
                "32",
                "--renders",
                "1",
                "--out",
                str(tmp_path),
            ],
            browser,
        )
        == 0
    )
    report = json.loads((tmp_path / "serve.json").read_text())
    [run] = report["runs"]
    assert run["run_dir"] == str(tiny_run_dir) and run["name"] == "tiny"
    start = run["start"]
    assert start["exit_codes"] == [0]  # serve.py stopped by SIGINT, as by Ctrl-C
    assert 0 < start["ready_seconds"][0] <= start["seconds"][0] == start["median_s"]  # 2 decimals
    latency = run["latency"]
    assert latency["token_count"] == run["sequence_length"] and latency["requests"] == 5
    assert len(latency["ms"]) == 5 and 0 < latency["p50_ms"] <= latency["p95_ms"]
    assert 0 < latency["server_p50_ms"] <= latency["p50_ms"]
    batch = run["batch"]
    assert len(batch["server_s"]) == len(batch["predict_s"]) == 2 and batch["ratio"] > 0
    assert batch["max_probability_difference"] < 1e-4  # the server predicts as predict.py
    render = report["render"]
    assert (render["tokens"], render["layers"], render["heads"]) == (
        32,
        run["layers"],
        run["heads"],
    )
    assert render["thumbnails"] == [run["layers"] * run["heads"]]
    assert len(render["page_ms"]) == 1 and render["median_ms"] > 0
    # Five goals per run and the renderer's, each in the table with its number.
    assert len(report["goals"]) == 6 and report["goals"][1]["met"]
    table = (tmp_path / "serve.md").read_text()
    assert table.startswith(report["machine"]) and "CPU cores" in report["machine"]
    assert table.count("\n| ") == 7 and "Ctrl-C exits 0 | 0 | yes |" in table
    assert "python bench/bench_serve.py --runs" in table
    assert table.strip() in capsys.readouterr().out
