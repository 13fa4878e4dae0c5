"""The attention viewer inline in a notebook: `show(run_or_model, texts)`.

The page is the offline viewer's (`viewer.render_page`), put in an `<iframe srcdoc>`:
Jupyter Notebook, JupyterLab and VS Code all show such HTML as it is, so nothing needs
installing (no widget extension) and nothing is fetched (the page's Content-Security-Policy
forbids it). `sandbox="allow-scripts"` lets the viewer's script run while keeping it out of
the notebook's own page, cookies and kernel.
"""

import html
import pathlib

import keras

from inspection.attention_file.format import VIEWER_FILENAME
from inspection.attention_records import RecordMaker
from inspection.attention_tokens import check_kept_heads
from inspection.export_attributions import check_methods
from inspection.methods.attribution import DEFAULT_METHOD
from inspection.methods.forward_passes import BATCH_SIZE
from inspection.rendering.viewer import MAPS_METHOD, render_page, viewer_data
from models import get_model_parts
from tokenization.pairs import as_text

# What predict.py explains with, and rollout, read off the maps alone.
DEFAULT_METHODS = (DEFAULT_METHOD, MAPS_METHOD)
DEFAULT_HEIGHT = 900  # pixels: the example, its heatmap and lines without scrolling


class NotebookView:
    """The viewer of some texts: shown inline by Jupyter (`_repr_html_`), saved by `save`.

    Attributes:
        html: the standalone page (what `save` writes).
        records: the texts' `AttentionRecord`s, in their order.
        height: the iframe's height in pixels.
    """

    def __init__(self, html_page, records, height=DEFAULT_HEIGHT):
        self.html = html_page
        self.records = records
        self.height = height

    def __repr__(self):
        # What a terminal shows, where no HTML is drawn.
        return (
            f"<NotebookView of {len(self.records)} texts: shown by Jupyter; "
            f".save(path) writes the page>"
        )

    def _repr_html_(self):
        # quote=True escapes '"' too: no text in the page can end the srcdoc attribute.
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            f'sandbox="allow-scripts" title="Attention viewer" '
            f'style="width: 100%; height: {int(self.height)}px; border: 0"></iframe>'
        )

    def save(self, path):
        """Writes the page to `path` (a `.html` file, or a folder to hold `index.html`);
        returns the path written. It opens offline in any browser."""
        path = pathlib.Path(path)
        if path.suffix.lower() != ".html":
            path = path / VIEWER_FILENAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.html, encoding="utf-8")
        return path


def show(
    run_or_model,
    texts,
    methods=None,
    class_names=None,
    heads=None,
    kept_heads=None,
    title="Attention viewer",
    height=DEFAULT_HEIGHT,
):
    """The attention viewer of `texts`, for a notebook cell to show.

    Args:
        run_or_model: a run folder's path ("runs/default": loaded in Keras' safe mode), a
            loaded run (`saved_run.load_run(...)`: its model, class names and pooling are
            used), or an end-to-end Keras model (raw strings -> probabilities,
            `models.load_end_to_end_model(path)`).
        texts: a list of raw strings, or of text pairs as [first, second] for a run
            trained on pairs; every one is embedded in the page.
        methods: the attribution methods to offer (`inspection.methods.attribution.METHODS`);
            None: predict.py's default and rollout.
        class_names: the class names; None: the run's, or "0", "1", ... for a model.
        heads: the heads measured across a split, for the model view and heads panel
            (`engine.evaluation.export_blocks.heads_block`); None: none.
        kept_heads: a pruned model's heads per layer by their original numbers (its
            compress.json's); None: each layer's heads numbered from 0.
        title: the page's title.
        height: the inline frame's height in pixels.

    Returns:
        A `NotebookView`.

    Example:
    >>> import keras
    >>> from config import ModelConfig
    >>> from models import build_classifier, build_end_to_end_model
    >>> vectorizer = keras.layers.TextVectorization(output_sequence_length=8,
    ...                                             vocabulary=["good", "film"])
    >>> classifier = build_classifier(ModelConfig(d_model=8, num_heads=2, num_layers=1,
    ...                               intermediate_dim=16), 4, 8, num_classes=2)
    >>> view = show(build_end_to_end_model(vectorizer, classifier), ["good film"])
    >>> view.records[0].tokens, view._repr_html_().startswith("<iframe srcdoc=")
    (['good', 'film'], True)
    >>> # show("runs/default", ["a wonderful film"]).save("/tmp/view.html")
    """
    vectorizer, classifier, names, pooling = _parts(run_or_model)
    texts = _check_texts(texts)
    if class_names is not None:
        names = [str(name) for name in class_names]
    if len(names) != classifier.num_classes:
        raise ValueError(
            f"class_names must name the model's {classifier.num_classes} classes. "
            f"Received: class_names={names}"
        )
    methods = check_methods(DEFAULT_METHODS if methods is None else methods, classifier)
    kept_heads = check_kept_heads(kept_heads, classifier.encoder.head_counts)
    maker = RecordMaker(classifier, vectorizer, names, methods, pooling, kept_heads)
    records = []
    # In batches, as the export: a batch's maps take B x L x N x T x T floats.
    for start in range(0, len(texts), BATCH_SIZE):
        batch = texts[start : start + BATCH_SIZE]
        example_ids = [str(index) for index in range(start, start + len(batch))]
        records += maker.records(batch, example_ids, seed=start)
    meta = {"pooling": pooling, "kept_heads": kept_heads}
    page = render_page(title, viewer_data(records, names, meta=meta, heads=heads))
    return NotebookView(page, records, height)


def _parts(run_or_model):
    """(vectorizer, classifier, class names, pooling) of a run or an end-to-end model.

    A loaded run is recognised by what it has, not its class; a path is loaded by
    `run_folder.saved_run`, the one reader of run folders (imported here only: it imports
    `data`, which a model or a loaded run does not need).
    """
    if isinstance(run_or_model, (str, pathlib.Path)):
        from run_folder.saved_run import load_run

        run_or_model = load_run(run_or_model)
    if isinstance(run_or_model, keras.Model):
        vectorizer, classifier = get_model_parts(run_or_model)
        names = [str(index) for index in range(classifier.num_classes)]
        return vectorizer, classifier, names, classifier.pooling_mode
    if all(hasattr(run_or_model, name) for name in ("parts", "class_names", "pooling")):
        vectorizer, classifier = run_or_model.parts
        return vectorizer, classifier, list(run_or_model.class_names), run_or_model.pooling
    raise ValueError(
        "run_or_model must be a run folder's path, a loaded run (saved_run.load_run) or "
        f"an end-to-end Keras model. Received: run_or_model={run_or_model!r:.80}"
    )


def _check_texts(texts):
    if isinstance(texts, str):
        raise ValueError(
            f"texts must be a list of strings, not one string. Received: texts={texts!r}"
        )
    try:
        texts = list(texts)
    except TypeError:
        raise ValueError(
            f"texts must be a list of strings. Received: texts={texts!r:.200}"
        ) from None
    if not texts:
        raise ValueError(f"texts must hold at least one text. Received: texts={texts}")
    try:
        return [as_text(text) for text in texts]
    except ValueError as error:
        raise ValueError(f"{error}. Received: texts={texts!r:.200}") from None
