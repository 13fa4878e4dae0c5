"""A run's export carries the faithfulness `evaluate.py --faithfulness` measured on its split,
and the run's classifier scores every method (a small untrained classifier stands in for
a run: the export does not care how well it learned)."""

import json
import shutil
import types

import keras
import numpy as np
import pytest

from config import ModelConfig
from engine.evaluation.attention import ExportError, export_evaluation_attention, faithfulness_block
from inspection.methods.attribution import METHODS
from models import build_classifier, build_end_to_end_model
from run_folder import runs, saved_run

CLASS_NAMES = ["negative", "positive"]
TEXTS = np.array(["a good film", "a bad bad plot", "good"], dtype=object)
# The schema evaluate.py writes; meta.json keeps the two measures and the best method.
FAITHFULNESS = {
    "examples": 500,
    "bins_percent": [1, 5, 10, 20, 50],
    "best_method": "integrated_gradients",
    "methods": {
        method: {
            "comprehensiveness": {"mean": 0.31 - index / 100, "ci95": [0.28, 0.34]},
            "sufficiency": {"mean": 0.05 + index / 100, "ci95": [0.03, 0.07]},
            "entropy": 0.93,
            "seconds_per_example": 0.02,
        }
        for index, method in enumerate(METHODS)
    },
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """What `export_evaluation_attention` reads of a `saved_run.Run`, around a small classifier."""
    keras.utils.set_random_seed(0)
    vectorizer = keras.layers.TextVectorization(
        output_sequence_length=6, vocabulary=["a", "good", "bad", "film", "plot"]
    )
    config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    classifier = build_classifier(config, 7, sequence_length=6, num_classes=2)
    model = build_end_to_end_model(vectorizer, classifier)
    return types.SimpleNamespace(
        run_dir=tmp_path_factory.mktemp("run"),
        model=model,
        class_names=CLASS_NAMES,
        pooling="mean",
        parts=(vectorizer, classifier),
        is_pair=False,
        is_multi_label=False,
    )


def evaluation(run, data_name="test"):
    """What evaluate.py's report of `data_name` gives the export."""
    probabilities = np.asarray(run.model(TEXTS.astype(str)), dtype=np.float32)
    return types.SimpleNamespace(
        texts=TEXTS, labels=np.array([1, 0, 1]), probabilities=probabilities, data_name=data_name
    )


def export_meta(run, data_name, **options):
    viewer = export_evaluation_attention(
        run,
        evaluation(run, data_name),
        run.run_dir / runs.ATTENTION_DIR / data_name,
        count=3,
        overwrite=True,
        **options,
    )
    return json.loads((viewer.parent / "meta.json").read_text())


def write_faithfulness(run, data_name, content):
    path = run.run_dir / runs.EVAL_DIR / data_name / runs.FAITHFULNESS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_the_split_faithfulness_goes_into_meta(run):
    path = write_faithfulness(run, "test", FAITHFULNESS)
    meta = export_meta(run, "test", methods=["rollout", "leave_one_out"])
    assert meta["attribution_methods"] == ["rollout", "leave_one_out"]
    block = meta["faithfulness"]
    assert block["source"] == str(path)
    assert (block["split"], block["examples"], block["best_method"]) == (
        "test",
        500,
        "integrated_gradients",
    )
    assert block["bins_percent"] == [1, 5, 10, 20, 50]
    assert list(block["methods"]) == list(METHODS)
    assert block["methods"]["leave_one_out"] == {
        "comprehensiveness": {"mean": pytest.approx(0.25), "ci95": [0.28, 0.34]},
        "sufficiency": {"mean": pytest.approx(0.11), "ci95": [0.03, 0.07]},
    }


def test_no_faithfulness_file_means_no_numbers_and_every_method(run):
    meta = export_meta(run, "validation")
    assert meta["faithfulness"] is None
    assert meta["attribution_methods"] == list(METHODS)


def test_what_evaluate_measures_is_what_meta_keeps(run):
    from engine.evaluation.faithfulness import measure_run_faithfulness, write_faithfulness

    folder = run.run_dir / runs.EVAL_DIR / "measured"
    folder.mkdir(parents=True)
    report = measure_run_faithfulness(run, TEXTS, 3, methods=("rollout", "random"))
    write_faithfulness(folder, report)
    block = export_meta(run, "measured", methods=["rollout"])["faithfulness"]
    assert (block["split"], block["examples"]) == ("measured", 3)
    assert block["best_method"] == report["best_method"] in ("rollout", "random")
    assert block["methods"]["random"]["sufficiency"] == report["methods"]["random"]["sufficiency"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "JSONDecodeError"),
        (
            {
                **FAITHFULNESS,
                "methods": {"rollout": {"sufficiency": {"mean": 0.1, "ci95": [0, 1]}}},
            },
            "KeyError: 'comprehensiveness'",
        ),
        ({**FAITHFULNESS, "best_method": "shap"}, "best_method 'shap' is none of its methods"),
    ],
)
def test_a_broken_faithfulness_file_is_an_export_error(tmp_path, content, message):
    path = write_faithfulness(types.SimpleNamespace(run_dir=tmp_path), "test", content)
    with pytest.raises(ExportError, match=message) as error:
        faithfulness_block(path)
    assert str(path) in str(error.value) and "--faithfulness" in str(error.value)


def test_evaluate_measures_then_exports_and_the_viewer_starts_on_the_best(
    tiny_run_dir, tmp_path, browser
):
    import evaluate
    from inspection import load_attention
    from tests.inspection.viewer_browser import open_viewer

    # A copy: a measurement in the shared run would change predict.py's default method.
    # Without the exports other tests may have added to the shared run.
    run_dir = shutil.copytree(
        tiny_run_dir, tmp_path / "tiny", ignore=shutil.ignore_patterns("attention")
    )
    assert evaluate.main([str(run_dir), "--faithfulness", "6", "--export-attention", "3"]) == 0
    measured = json.loads((run_dir / "eval" / "test" / runs.FAITHFULNESS_FILE).read_text())
    with load_attention(run_dir / runs.ATTENTION_DIR / "test") as export:
        assert export.attribution_methods == list(METHODS)
        assert export.best_method == measured["best_method"]
        best = export.faithfulness["methods"][export.best_method]
    with open_viewer(browser, export.directory / "index.html") as (page, problems, _, _):
        assert page.locator("#method-select").input_value() == measured["best_method"]
        assert (
            page.locator("#faithfulness")
            .text_content()
            .startswith(f"Comprehensiveness {best['comprehensiveness']['mean']:.3f} (95% CI ")
        )
        assert (
            "on 6 test examples (the best method)." in page.locator("#faithfulness").text_content()
        )
        assert problems == []


def heads_file(heads_per_layer, split):
    """A heads.json as evaluate.py --heads writes it, head h of layer l of importance
    l + h / 10."""
    from inspection.methods.heads import STATISTICS

    return {
        "split": split,
        "examples": 40,
        "spearman_importance_ablation": 0.5,
        "heads": [
            {
                "layer": layer,
                "head": head,
                "importance": layer + head / 10,
                "ablation_accuracy_drop": 0.02,
                "ablation_loss_increase": 0.01,
                **dict.fromkeys(STATISTICS, 0.25),
            }
            for layer, count in enumerate(heads_per_layer)
            for head in range(count)
        ],
    }


def write_heads(run_dir, split, content):
    path = run_dir / runs.EVAL_DIR / split / "heads.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_the_viewer_shows_the_validation_splits_heads_else_another_splits(run, tmp_path):
    from tests.inspection.viewer_browser import embedded_data

    run = types.SimpleNamespace(**{**vars(run), "run_dir": tmp_path})

    def viewer_heads():
        viewer = export_evaluation_attention(
            run, evaluation(run), tmp_path / "export", count=1, overwrite=True, methods=["rollout"]
        )
        return embedded_data(viewer)["heads"]

    assert viewer_heads() is None
    write_heads(tmp_path, "test", heads_file([2], "test"))
    assert viewer_heads()["split"] == "test"
    path = write_heads(tmp_path, "validation", heads_file([2], "validation"))
    heads = viewer_heads()
    assert (heads["source"], heads["split"], heads["examples"]) == (str(path), "validation", 40)
    assert heads["spearman_importance_ablation"] == 0.5
    assert heads["measures"][:3] == [
        "importance",
        "ablation_accuracy_drop",
        "ablation_loss_increase",
    ]
    assert [(head["layer"], head["head"], head["importance"]) for head in heads["heads"]] == [
        (0, 0, 0.0),
        (0, 1, 0.1),
    ]


def test_the_viewer_carries_the_data_map_and_the_slices_of_the_exports_split(run, tmp_path):
    from tests.data_quality_fixture import write_data_quality_files
    from tests.inspection.viewer_browser import embedded_data

    run = types.SimpleNamespace(**{**vars(run), "run_dir": tmp_path})
    write_data_quality_files(tmp_path, slice_splits=("validation", "test"))
    viewer = export_evaluation_attention(
        run, evaluation(run, "test"), tmp_path / "export", count=1, methods=["rollout"]
    )
    dataset = embedded_data(viewer)["dataset"]
    assert set(dataset) == {"data_map", "slices"}
    assert len(dataset["data_map"]["points"]) == 4
    assert (dataset["slices"]["split"], len(dataset["slices"]["weak_slices"])) == ("test", 3)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "JSONDecodeError"),
        ({"split": "validation", "heads": []}, "KeyError: 'examples'"),
        (
            heads_file([3], "validation"),
            r"measured other heads than the model has \(3 \(layer, "
            r"head\) pairs for its 2\)",
        ),
    ],
)
def test_a_heads_file_that_does_not_fit_is_an_export_error(tmp_path, content, message):
    from engine.evaluation.attention import heads_block

    path = write_heads(tmp_path, "validation", content)
    with pytest.raises(ExportError, match=message) as error:
        heads_block(tmp_path, [2])
    assert str(path) in str(error.value) and "--heads" in str(error.value)


@pytest.fixture(scope="module")
def pruned_run_dir(tiny_run_dir, tmp_path_factory):
    """A run folder as compress.py leaves it, of 2 blocks keeping 1 and 2 of their 2 heads
    (head 0 of block 0 pruned): the tiny run's config and vectorizer around a new 2-block
    classifier (the tiny run has 1 block; how well it learned does not matter here)."""
    from models.pruning import pruned_classifier
    from models.trim_padding import TrimPadding

    run_dir = shutil.copytree(
        tiny_run_dir,
        tmp_path_factory.mktemp("runs") / "tiny_pruned",
        ignore=shutil.ignore_patterns("eval", "attention"),
    )
    run = saved_run.load_run(run_dir)
    vectorizer = run.parts[0]
    keras.utils.set_random_seed(0)
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32)
    classifier = build_classifier(
        config, vectorizer.vocabulary_size(), vectorizer.get_config()["output_sequence_length"], 2
    )
    trim = any(isinstance(layer, TrimPadding) for layer in run.model.layers)
    build_end_to_end_model(
        vectorizer, pruned_classifier(classifier, [(0, 0)]), name=run.model.name, trim_padding=trim
    ).save(run_dir / runs.MODEL_FILE)
    (run_dir / "compress.json").write_text(
        json.dumps(
            {"source": str(tiny_run_dir), "pruned_heads": [[0, 0]], "kept_heads": [[1], [0, 1]]}
        )
    )
    return run_dir


def test_a_pruned_run_exports_and_its_viewer_shows_the_kept_heads_by_number(
    pruned_run_dir, browser
):
    import evaluate
    import predict
    from inspection import load_attention
    from tests.inspection.viewer_browser import open_viewer

    assert saved_run.load_run(pruned_run_dir).parts[1].encoder.head_counts == [1, 2]
    assert evaluate.main([str(pruned_run_dir), "--export-attention", "2"]) == 0
    for method in ("conservative_gradient_x_input", "rollout", "attention_gradient"):
        assert (
            predict.main([str(pruned_run_dir), "a good film", "--explain", "--method", method]) == 0
        )
    with load_attention(pruned_run_dir / runs.ATTENTION_DIR / "test") as export:
        assert export.kept_heads == [[1], [0, 1]] and export.num_heads == 2
        scores = export.attention_scores(export.example_ids[0])
        assert not scores[0, 0].any() and scores[0, 1].sum(axis=-1) == pytest.approx(1.0)
    with open_viewer(browser, export.directory / "index.html") as (page, problems, _, _):
        assert page.locator("#head-select option").all_text_contents() == [
            "mean of heads",
            "head 1",
        ]
        assert page.locator("#model-view .thumbnail").count() == 3
        assert page.locator("#model-view .pruned").get_attribute("title") == (
            "layer 0, head 0: pruned (removed from the model)"
        )
        page.locator("#model-view .thumbnail").first.click()  # layer 0's one head: head 1
        assert page.evaluate("document.body.dataset.view") == "0:0:1"
        assert page.locator("#head-select").input_value() == "1"
        assert page.locator("#heads-section").is_hidden()
        assert problems == []
