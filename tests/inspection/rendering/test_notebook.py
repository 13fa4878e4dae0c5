"""`inspection.show`: the viewer in an `<iframe srcdoc>`, what it embeds, its errors, and
the frame rendered in headless Chromium (`browser`: tests/inspection/viewer_browser.py)."""

import json
import re
import types
from html.parser import HTMLParser

import numpy as np
import pytest

from config import Config, DatasetConfig, ModelConfig
from config.files import dump_config
from inspection import show
from inspection.methods.attribution import DEFAULT_METHOD, attribute
from inspection.rendering.viewer import render_page
from models import predict_texts
from run_folder import runs
from run_folder.runs import RunError
from tests.inspection.stand_in_model import build_stand_in_models
from tests.inspection.viewer_browser import DATA_BLOCK, watched_page

CLASS_NAMES = ["negative", "positive"]
# The second text tries to end the srcdoc attribute and the iframe, then run a script.
HOSTILE_TEXT = '"></iframe><script>window.pwned = 1</script><iframe srcdoc="'
TEXTS = ["the film was great", HOSTILE_TEXT + " boring plot", "i hated the acting"]


class Tags(HTMLParser):
    """Every start tag of an HTML fragment with its attributes, unescaped as a browser would."""

    def __init__(self, fragment):
        super().__init__()
        self.tags = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def page_data(page):
    start = page.index(DATA_BLOCK) + len(DATA_BLOCK)
    return json.loads(page[start : page.index("</script>", start)])


@pytest.fixture(scope="module")
def stand_in():
    return build_stand_in_models()  # (end_to_end, classifier, vectorizer)


@pytest.fixture(scope="module")
def view(stand_in):
    return show(stand_in[0], TEXTS, class_names=CLASS_NAMES)


def test_repr_is_one_sandboxed_iframe_holding_the_page(view):
    fragment = view._repr_html_()
    [(tag, attributes)] = Tags(fragment).tags
    assert tag == "iframe"
    assert attributes["srcdoc"] == view.html
    assert attributes["sandbox"] == "allow-scripts"
    assert "height: 900px" in attributes["style"]
    # Escaped with quote=True: the page adds no '<' or '"' of its own to the fragment.
    assert fragment.count("<") == 2 and fragment.count('"') == 8
    assert "</iframe><script>" not in fragment


def test_page_is_the_viewer_and_fetches_nothing(view):
    assert view.html == render_page("Attention viewer", page_data(view.html))
    assert "default-src 'none'" in view.html
    assert re.findall(r"https?://", view.html.replace('"http://www.w3.org/2000/svg"', "")) == []
    assert "<script>window.pwned" not in view.html
    assert page_data(view.html)["examples"][1]["text"] == TEXTS[1]


def test_records_carry_the_models_own_prediction(view, stand_in):
    expected = predict_texts(stand_in[0], TEXTS)  # (B, C)
    probabilities = np.array([record.probabilities for record in view.records])
    np.testing.assert_allclose(probabilities, expected, atol=1e-6)
    assert expected.argmax(axis=-1).tolist() == [
        record.predicted_label_index for record in view.records
    ]
    data = page_data(view.html)
    np.testing.assert_allclose(
        [example["probabilities"] for example in data["examples"]], expected, atol=1e-6
    )
    assert [example["predicted_label"] for example in data["examples"]] == [
        CLASS_NAMES[index] for index in expected.argmax(axis=-1)
    ]
    assert [example["id"] for example in data["examples"]] == ["0", "1", "2"]
    assert view.records[0].tokens == ["the", "film", "was", "great"]
    assert data["class_names"] == CLASS_NAMES and data["meta"]["pooling"] == "mean"


def test_default_methods_are_predicts_and_rollout_for_the_predicted_class(view, stand_in):
    _, classifier, vectorizer = stand_in
    data = page_data(view.html)
    assert sorted(data["methods"]) == sorted([DEFAULT_METHOD, "rollout"])
    assert data["default_method"] == DEFAULT_METHOD
    token_ids = np.asarray(vectorizer(np.array(TEXTS, dtype=object)))  # (B, T)
    expected = attribute(classifier, token_ids, DEFAULT_METHOD, "mean")  # (B, T)
    for record, ids, scores in zip(view.records, token_ids, expected, strict=True):
        np.testing.assert_allclose(
            record.attributions[DEFAULT_METHOD], scores[ids != 0], rtol=1e-5, atol=1e-7
        )
        assert record.attributions["rollout"].sum() == pytest.approx(1.0)


def test_methods_chooses_the_methods(stand_in):
    other = show(stand_in[0], TEXTS[:1], methods=["leave_one_out", "rollout"])
    assert page_data(other.html)["methods"] == ["rollout", "leave_one_out"]
    assert page_data(other.html)["default_method"] == "rollout"


def test_a_model_gets_numbered_class_names(stand_in):
    data = page_data(show(stand_in[0], TEXTS[:1]).html)
    assert data["class_names"] == ["0", "1"]


def test_a_run_gives_its_parts_class_names_and_pooling(view, stand_in):
    end_to_end, classifier, vectorizer = stand_in
    # What show reads of a `saved_run.Run` (inspection does not import runs).
    run = types.SimpleNamespace(
        model=end_to_end,
        parts=(vectorizer, classifier),
        class_names=["bad", "good"],
        pooling="mean",
        run_dir="runs/x",
    )
    from_run = show(run, TEXTS)
    np.testing.assert_array_equal(
        [record.probabilities for record in from_run.records],
        [record.probabilities for record in view.records],
    )
    assert page_data(from_run.html)["class_names"] == ["bad", "good"]


def test_save_writes_the_standalone_page(view, tmp_path):
    assert view.save(tmp_path / "view.html").read_text(encoding="utf-8") == view.html
    assert view.save(tmp_path / "folder") == tmp_path / "folder" / "index.html"
    assert (tmp_path / "folder" / "index.html").read_text(encoding="utf-8") == view.html


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"texts": "a film"}, "Received: texts='a film'"),
        ({"texts": []}, r"texts must hold at least one text. Received: texts=\[\]"),
        (
            {"texts": ["a film", 3]},
            r"each text must be a string or a pair of strings .*; got 3. "
            r"Received: texts=\['a film', 3\]",
        ),
        ({"texts": 3}, "Received: texts=3"),
        ({"methods": ["rollout", "magic"]}, r"Received: methods=\['rollout', 'magic'\]"),
        ({"methods": "rollout"}, "Received: methods='rollout'"),
        ({"class_names": ["only one"]}, r"2 classes. Received: class_names=\['only one'\]"),
    ],
)
def test_bad_arguments_are_named_and_echoed(stand_in, arguments, message):
    with pytest.raises(ValueError, match=message):
        show(stand_in[0], **{"texts": ["a film"], **arguments})


def test_a_run_folders_path_is_loaded(view, stand_in, tmp_path):
    end_to_end = stand_in[0]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    end_to_end.save(run_dir / runs.MODEL_FILE)
    runs.write_json(run_dir / runs.LABELS_FILE, ["bad", "good"])
    pooling = stand_in[1].pooling_mode
    config = Config(DatasetConfig(name="rotten_tomatoes"), model=ModelConfig(pooling=pooling))
    runs.write_text(run_dir / runs.CONFIG_FILE, dump_config(config))
    for path in (run_dir, str(run_dir)):
        from_path = show(path, TEXTS)
        np.testing.assert_allclose(
            [record.probabilities for record in from_path.records],
            [record.probabilities for record in view.records],
            atol=1e-6,
        )
        assert page_data(from_path.html)["class_names"] == ["bad", "good"]


def test_a_missing_run_folder_is_named(tmp_path):
    with pytest.raises(RunError, match="nothere: no such run folder"):
        show(tmp_path / "nothere", ["a film"])


def test_refuses_what_is_neither_a_run_nor_a_model():
    with pytest.raises(ValueError, match=r"Received: run_or_model=3"):
        show(3, ["a film"])


def test_the_frame_renders_in_chromium_without_errors(browser, view):
    page, problems, requests, dialogs = watched_page(browser, height=1000)
    try:
        # A notebook's output area: the fragment inside the notebook's own page.
        page.set_content(
            f"<!DOCTYPE html><html><body><div class='output'>"
            f"{view._repr_html_()}</div></body></html>"
        )
        assert page.evaluate("document.querySelectorAll('iframe').length") == 1
        frame = page.frames[1]
        frame.wait_for_function("document.body.dataset.view !== undefined")
        labels = [CLASS_NAMES[record.predicted_label_index] for record in view.records]
        assert frame.locator("#predicted-label").text_content() == labels[0]
        assert frame.locator("#example-select option").count() == 3
        frame.select_option("#example-select", "1")
        assert HOSTILE_TEXT in frame.locator("#text").text_content()
        assert frame.locator("#predicted-label").text_content() == labels[1]
        assert frame.evaluate("window.pwned") is None and page.evaluate("window.pwned") is None
        assert frame.evaluate("document.scripts.length") == 2
        # The sandbox keeps the page out of the notebook's: no same origin, no parent DOM.
        assert (
            frame.evaluate(
                "(() => { try { return parent.document.title; }"
                " catch (error) { return 'blocked'; } })()"
            )
            == "blocked"
        )
        assert problems == [] and dialogs == []
        assert all(url.startswith(("about:", "data:")) for url in requests), requests
    finally:
        page.close()
