"""examples/quickstart.ipynb executed as Jupyter would (nbclient, the `python3` kernel, from
the notebook's folder) against a copy of the session's tiny run; its outputs checked
against predict.py and the viewer's numbers."""

import base64
import json
import shutil
import struct
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import predict
from inspection import attention_image_size
from run_folder import saved_run
from tests.inspection.viewer_browser import DATA_BLOCK

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
# Per cell; loading TensorFlow in the kernel takes most of the notebook's 15 to 20 s.
CELL_TIMEOUT_S = 40


class TableRows(HTMLParser):
    """The rows of a pandas HTML table: per row its cells' text (index first)."""

    def __init__(self, fragment):
        super().__init__()
        self.rows, self._cell = [], None
        self.feed(fragment)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(self._cell.strip())
            self._cell = None


@pytest.fixture(scope="module")
def executed(tiny_run_dir, tmp_path_factory, monkeypatch_module):
    """(the executed notebook, the run it read): a copy of the tiny run without the eval/
    and attention/ folders other tests may add, so the notebook draws the heads figure."""
    run_dir = tmp_path_factory.mktemp("quickstart") / "tiny"
    shutil.copytree(tiny_run_dir, run_dir, ignore=shutil.ignore_patterns("eval", "attention"))
    monkeypatch_module.setenv("QUICKSTART_RUN_DIR", str(run_dir))
    # The notebook finds the checkout itself, as it must in Jupyter.
    monkeypatch_module.delenv("PYTHONPATH", raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import sys\nprint(sys.executable)"))
    NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        startup_timeout=30,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    return notebook, saved_run.load_run(run_dir)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


class IframeSource(HTMLParser):
    """The srcdoc of a fragment's iframe, unescaped as a browser would."""

    def handle_starttag(self, tag, attrs):
        if tag == "iframe":
            self.srcdoc = dict(attrs)["srcdoc"]


def viewer_data(fragment):
    """What the viewer page in the iframe of `fragment` embeds."""
    parser = IframeSource()
    parser.feed(fragment)
    start = parser.srcdoc.index(DATA_BLOCK) + len(DATA_BLOCK)
    return json.loads(parser.srcdoc[start : parser.srcdoc.index("</script>", start)])


def outputs(notebook, marker):
    """The outputs of the one code cell whose source holds `marker`."""
    [cell] = [cell for cell in notebook.cells if cell.cell_type == "code" and marker in cell.source]
    return cell.outputs


def test_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert all(
        not cell.outputs and cell.execution_count is None
        for cell in notebook.cells
        if cell.cell_type == "code"
    )


def test_runs_in_this_virtualenvs_python_and_writes_nothing_to_stderr(executed):
    notebook, _ = executed
    assert notebook.cells[-1].outputs[0].text.strip() == sys.executable
    # TensorFlow's start-up lines and Python warnings would show under the cells.
    assert [
        output.text
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "stream" and output.name == "stderr"
    ] == []


def test_predictions_and_explanations_are_predicts(executed):
    notebook, run = executed
    [table] = outputs(notebook, "predict.predict(")
    header, _, *rows = TableRows(table.data["text/html"]).rows
    assert header == ["", "predicted", *run.class_names]
    texts = [row[0] for row in rows]
    assert len(texts) == 2
    expected = predict.predict(run, texts, explain=True, top=5)
    for row, prediction in zip(rows, expected, strict=True):
        assert row[1] == prediction.predicted_label
        assert [float(value) for value in row[2:]] == pytest.approx(
            list(prediction.probabilities.values()), abs=6e-5
        )  # shown to 4 decimals

    [printed] = outputs(notebook, "for word in p.tokens")
    lines = printed.text.splitlines()
    for prediction in expected:
        start = lines.index(
            f"{prediction.text!r} -> {prediction.predicted_label}, words by {prediction.method}:"
        )
        words = [line.split() for line in lines[start + 1 : start + 1 + len(prediction.tokens)]]
        assert [word for word, _ in words] == [word.token for word in prediction.tokens]
        assert [float(score) for _, score in words] == pytest.approx(
            [word.importance for word in prediction.tokens], abs=6e-5
        )


def test_the_viewer_is_inline_with_predicts_labels(executed):
    notebook, run = executed
    [view] = outputs(notebook, "inspection.show(")
    fragment = view.data["text/html"]
    assert fragment.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in fragment
    data = viewer_data(fragment)
    texts = [example["text"] for example in data["examples"]]
    assert [example["predicted_label"] for example in data["examples"]] == [
        prediction.predicted_label for prediction in predict.predict(run, texts)
    ]


def test_without_measured_heads_it_draws_the_first_texts_heads(executed):
    notebook, run = executed
    [figure] = outputs(notebook, "heads_block(")
    png = base64.b64decode(figure.data["image/png"])
    width, height = struct.unpack(">II", png[16:24])  # the PNG's IHDR chunk
    _, classifier = run.parts
    [view] = outputs(notebook, "inspection.show(")
    first = viewer_data(view.data["text/html"])["examples"][0]
    num_tokens = len(first["tokens"])
    assert (width, height) == attention_image_size(
        classifier.encoder.num_layers, max(classifier.encoder.head_counts), num_tokens, num_tokens
    )
