"""bench_faithfulness's goal checks and table on a report whose numbers are known."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_faithfulness as bench  # noqa: E402


def entry(comprehensiveness, sufficiency, vs_rollout_low=None):
    value = {
        "comprehensiveness": {"mean": comprehensiveness, "ci95": [0, 1]},
        "sufficiency": {"mean": sufficiency, "ci95": [0, 1]},
        "entropy": 0.9,
        "seconds_per_example": 0.01,
    }
    if vs_rollout_low is not None:
        value["vs_rollout"] = {"comprehensiveness": {"mean": 0.1, "ci95": [vs_rollout_low, 0.2]}}
    return value


def report(best_comprehensiveness, vs_rollout_low, tokens=20):
    return {
        "best_method": "integrated_gradients",
        "mean_text_tokens": tokens,
        "examples": 9,
        "seconds": 3.0,
        "date": "2026-12-02",
        "table": "| table |",
        "methods": {
            "integrated_gradients": entry(best_comprehensiveness, 0.05, vs_rollout_low),
            "conservative_gradient_x_input": entry(0.32, 0.06, 0.01),
            "gradient_x_input": entry(0.1, 0.2, -0.1),
            "attention_gradient": entry(0.2, 0.1, 0.0),
            "leave_one_out": entry(0.38, 0.0, 0.05),
            "rollout": entry(0.15, 0.15),
            "random": entry(0.1, 0.2),
        },
    }


def test_goals_compare_with_random_rollout_and_leave_one_out():
    goals = bench.goals(report(0.4, 0.02))
    assert goals["best comp / random comp"] == ("4.00x", True)
    assert goals["best suff / random suff"] == ("0.25x", True)
    assert goals["best beats rollout (comp, CI > 0)"] == ("+0.020 lower bound", True)
    # conservative: 0.32 / 0.38 = 84% of leave-one-out, with 1 pass against 20.
    assert goals["stretch: conservative_gradient_x_input / leave-one-out comp"] == (
        "84% with 1 pass vs 20",
        True,
    )


def test_goals_missed():
    goals = bench.goals(report(0.2, -0.01, tokens=8))
    assert goals["best comp / random comp"] == ("2.00x", False)
    assert goals["best beats rollout (comp, CI > 0)"][1] is False
    # 84% but leave-one-out needs only 8 passes: not a tenth of them.
    assert goals["stretch: conservative_gradient_x_input / leave-one-out comp"][1] is False


def test_the_table_names_the_model_and_its_goals():
    text = bench.format_tables({("rotten_tomatoes", "ours"): report(0.4, 0.02)})
    assert text.startswith(
        "### rotten_tomatoes, ours (9 validation examples, 20 tokens on "
        "average, best: `integrated_gradients`; 3 s, 2026-12-02)"
    )
    assert "| best comp / random comp | 4.00x | yes |" in text
