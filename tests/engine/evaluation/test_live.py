"""engine/evaluation/live.py: what the live lab tells the page about a run, and its answers."""

import json
import shutil

import pytest

import evaluate
from engine.evaluation.live import LiveRun, RequestError, run_names
from inspection import export_checks
from inspection.methods import attribution
from run_folder import saved_run

METHOD = "conservative_gradient_x_input"


@pytest.fixture(scope="module")
def measured_run(tiny_run_dir, tmp_path_factory):
    """A copy of the tiny run with its methods' faithfulness measured on validation."""
    run_dir = tmp_path_factory.mktemp("live") / "tiny"
    shutil.copytree(tiny_run_dir, run_dir, ignore=shutil.ignore_patterns("eval", "attention"))
    assert evaluate.main([str(run_dir), "--split", "validation", "--faithfulness", "12"]) == 0
    return run_dir


def test_the_page_gets_the_measured_faithfulness_and_starts_on_its_best(measured_run):
    lab = LiveRun("tiny", saved_run.load_run(measured_run))
    measured = json.loads((measured_run / "eval" / "validation" / "faithfulness.json").read_text())
    panels = lab.panels()
    assert panels["faithfulness"]["best_method"] == measured["best_method"] == lab.default_method
    assert panels["faithfulness"]["examples"] == 12 and panels["heads"] is None
    assert panels["problems"] == []
    [answer] = lab.answer(["a wonderful film"])
    assert answer["explanation_method"] == measured["best_method"]


def test_a_damaged_file_leaves_its_panel_out_and_says_why(measured_run, tmp_path):
    run_dir = tmp_path / "tiny"
    shutil.copytree(measured_run, run_dir)
    (run_dir / "eval" / "validation" / "heads.json").write_text("{}")
    panels = LiveRun("tiny", saved_run.load_run(run_dir)).panels()
    assert panels["heads"] is None and panels["faithfulness"] is not None
    [problem] = panels["problems"]
    assert "heads.json is not a heads file" in problem and "--heads" in problem


def test_an_unknown_method_is_a_request_error(measured_run):
    lab = LiveRun("tiny", saved_run.load_run(measured_run))
    with pytest.raises(RequestError, match="method must be null or one of rollout"):
        lab.answer(["film"], method="saliency")
    [answer] = lab.answer(["film"], method=None)
    assert set(answer) == {
        "text",
        "predicted_label",
        "probabilities",
        "known_tokens",
        "truncated",
        "token_count",
    }


def test_without_attention_no_maps_are_computed_and_the_answer_is_the_same(
    tiny_run_dir, monkeypatch
):
    lab = LiveRun("tiny", saved_run.load_run(tiny_run_dir))
    texts = ["a wonderful, moving film", "dull and far too long", "film"]
    with_maps = lab.answer(texts, METHOD, attention=True)
    calls = []
    for module in (export_checks, attribution):  # every caller of the pass that returns maps
        real = module.attention_forward
        monkeypatch.setattr(
            module, "attention_forward", lambda *args, real=real: calls.append(1) or real(*args)
        )
    without = lab.answer(texts, METHOD, attention=False)
    assert calls == []
    for answer, wanted in zip(without, with_maps, strict=True):
        assert "attention" not in answer["view"] and "attention" in wanted["view"]
        assert answer["tokens"] == wanted["tokens"]
        assert answer["probabilities"] == pytest.approx(wanted["probabilities"], abs=1e-6)
        view, wanted_view = answer["view"], wanted["view"]
        assert (view["num_layers"], view["num_heads"], view["methods"]) == (
            wanted_view["num_layers"],
            wanted_view["num_heads"],
            wanted_view["methods"],
        )
    # The spies see the maps of a method made of them, and of attention asked for.
    lab.answer(texts, "rollout", attention=False)
    assert calls
    calls.clear()
    lab.answer(texts, METHOD, attention=True)
    assert calls


def test_run_names_are_never_absolute_paths():
    assert run_names(["/srv/x/runs/default", "/srv/y/runs/default", "/srv/y/runs/int8"]) == [
        "x/runs/default",
        "y/runs/default",
        "int8",
    ]


def test_the_panels_name_files_within_the_run_never_server_paths(tmp_path):
    from engine.evaluation.live.live_run import _within_run

    run_dir = tmp_path / "runs" / "tiny"
    block = {
        "calibration": {"source": str(run_dir / "eval" / "test" / "calibration.json")},
        "slices": {"source": str(run_dir / "eval" / "validation" / "slices.json"), "n": 3},
        "elsewhere": {"source": "/other/place.json"},
    }
    assert _within_run(block, run_dir) == {
        "calibration": {"source": "eval/test/calibration.json"},
        "slices": {"source": "eval/validation/slices.json", "n": 3},
        "elsewhere": {"source": "/other/place.json"},
    }
