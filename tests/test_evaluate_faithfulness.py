"""evaluate.py --faithfulness on the tiny run: the files, the table, and that they are kept."""

import json
import shutil

import pytest

import evaluate
from config import ATTRIBUTION_METHODS


@pytest.fixture
def run_dir(tiny_run_dir, tmp_path):
    # A copy, as train.py left it: the measurement changes predict.py's default method for
    # the run, and other tests may have added evaluations and exports to the shared one.
    copy = tmp_path / "run"
    shutil.copytree(tiny_run_dir, copy, ignore=shutil.ignore_patterns("eval", "attention"))
    return copy


def measured(run_dir, capsys, flag, examples):
    """(printed output, eval/validation folder, its JSON report) of `evaluate.py --split
    validation FLAG EXAMPLES` (--faithfulness or --heads), which must succeed."""
    capsys.readouterr()
    assert evaluate.main([str(run_dir), "--split", "validation", flag, str(examples)]) == 0
    out = capsys.readouterr().out
    folder = run_dir / "eval" / "validation"
    name = {"--faithfulness": "faithfulness.json", "--heads": "heads.json"}[flag]
    return out, folder, json.loads((folder / name).read_text())


def test_measures_every_method_writes_the_reports_and_keeps_them(run_dir, capsys):
    out, folder, report = measured(run_dir, capsys, "--faithfulness", 12)
    assert report["examples"] + report["skipped"] == 12
    assert report["pooling"] == "mean" and report["bins_percent"] == [1, 5, 10, 20, 50]
    assert set(report["methods"]) == set(ATTRIBUTION_METHODS)
    assert report["best_method"] in set(ATTRIBUTION_METHODS) - {"random"}
    best = report["methods"][report["best_method"]]
    assert best["comprehensiveness"]["mean"] == max(
        entry["comprehensiveness"]["mean"] for entry in report["methods"].values()
    )
    for entry in report["methods"].values():
        low, high = entry["comprehensiveness"]["ci95"]
        assert low <= entry["comprehensiveness"]["mean"] <= high
        assert 0.0 <= entry["entropy"] <= 1.0 and entry["seconds_per_example"] >= 0
    table = (folder / "faithfulness.md").read_text()
    assert table.splitlines()[2].startswith(f"| {report['best_method']} |")
    assert table.strip() in out and "faithfulness of the explanations" in out
    assert (folder / "faithfulness.png").stat().st_size > 10_000
    # Evaluating again without the flag replaces the reports but keeps the measurement.
    assert evaluate.main([str(run_dir), "--split", "validation"]) == 0
    assert json.loads((folder / "faithfulness.json").read_text()) == report


def test_an_export_stores_the_methods_asked_for(run_dir):
    from inspection import load_attention

    assert (
        evaluate.main(
            [str(run_dir), "--export-attention", "3", "--methods", "rollout", "leave_one_out"]
        )
        == 0
    )
    with load_attention(run_dir / "attention" / "test") as export:
        assert export.attribution_methods == ["rollout", "leave_one_out"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--faithfulness", "0"], "argument --faithfulness: must be at least 1, got 0"),
        (["--faithfulness", "--texts-file", "t.txt"], "--faithfulness needs labelled data"),
        (["--methods", "rollout"], "--methods are for an attention export"),
        (["--heads", "0"], "argument --heads: must be at least 1, got 0"),
        (["--heads", "--texts-file", "t.txt"], "--heads needs labelled data"),
    ],
)
def test_bad_faithfulness_arguments(run_dir, capsys, args, message):
    capsys.readouterr()
    assert evaluate.main([str(run_dir), *args]) == 2
    assert message in capsys.readouterr().err


def test_heads_are_measured_written_and_kept(run_dir, capsys):
    out, folder, report = measured(run_dir, capsys, "--heads", 20)
    assert report["split"] == "validation" and report["examples"] == 20
    heads = report["heads"]
    layers = {head["layer"] for head in heads}
    assert len(heads) == len(layers) * len({head["head"] for head in heads})
    for head in heads:
        assert head["importance"] >= 0 and -1 <= head["ablation_accuracy_drop"] <= 1
        assert 0 <= head["to_self"] <= 1 and 0 <= head["entropy"] <= 1
        assert head["to_cls"] == 0  # mean pooling: no class token, no [CLS] word
    assert report["spearman_importance_ablation"] is None or (
        -1 <= report["spearman_importance_ablation"] <= 1
    )
    assert "attention heads" in out and "| layer | head | importance |" in out
    assert (folder / "heads.png").stat().st_size > 10_000
    assert evaluate.main([str(run_dir), "--split", "validation"]) == 0
    assert json.loads((folder / "heads.json").read_text()) == report
