"""Exports the attention of a trained classifier: arrays, manifest, attributions, heatmaps,
BertViz, viewer.

Letter legend: B batch, T tokens (padded in a batch, + 1 with a class token; real only
once trimmed), L layers, N heads, C classes.
"""

import dataclasses
import pathlib

import keras

from inspection.attention_file.format import VIEWER_FILENAME
from inspection.attention_file.reader import load_attention
from inspection.attention_file.writer import AttentionFileWriter
from inspection.attention_records import RecordMaker
from inspection.attention_tokens import check_kept_heads
from inspection.export_attributions import check_methods
from inspection.export_checks import label_indices
from inspection.methods.rollout import check_pooling
from inspection.rendering.bertviz_export import write_bertviz_json
from inspection.rendering.heatmaps import plot_attention_heads, plot_layer_averages
from inspection.rendering.viewer import write_viewer
from tokenization import CheckpointTokenizer


@dataclasses.dataclass(frozen=True)
class ScoringOptions:
    """What each example's record holds, and how the classifier is run for it.

    Attributes:
        methods: the attribution methods to store (names of
            `inspection.methods.attribution.METHODS`); None: all of them. Integrated
            Gradients costs a 32-row backward pass per example and leave-one-out T forward
            rows: pass fewer to export many long texts.
        pooling: the classifier's pooling, "mean", "max" or "cls". With "cls" the rollout
            importance is the row of token 0, "[CLS]": a word-level model's attention has
            T + 1 positions, position 0 being its learned class token (kept as token
            "[CLS]"); WordPiece text starts with its own.
        kept_heads: for a pruned classifier (`models.pruning`), per block the original
            numbers of the heads it kept (its run's compress.json): the maps are stored at
            those numbers, a removed head's all 0, and meta.json says which are real.
            None: each block's heads numbered from 0.
        batch_size: examples per forward pass.

    Example:
    >>> ScoringOptions(methods=("rollout",), pooling="cls").batch_size
    32
    >>> ScoringOptions(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be at least 1. Received: batch_size=0
    """

    methods: tuple | list | None = None
    pooling: str = "mean"
    kept_heads: list | None = None
    batch_size: int = 32

    def __post_init__(self):
        check_pooling(self.pooling)
        if self.batch_size < 1:
            raise ValueError(
                f"batch_size must be at least 1. Received: batch_size={self.batch_size}"
            )


@dataclasses.dataclass(frozen=True)
class WritingOptions:
    """What the export holds besides the records, and how much of it is drawn.

    Attributes:
        run_info: JSON-serialisable dict stored in meta.json (model name, run directory,
            checkpoint, dataset split, ...); None: none.
        faithfulness: the methods' faithfulness on these texts' split, for meta.json and
            the viewer (`engine.evaluation.export_blocks.faithfulness_block`); None: not
            measured.
        heads: the heads measured across a split (`engine.evaluation.export_blocks.heads_block`
            of the run's heads.json), shown in the viewer's model view and heads panel;
            None: none.
        dataset: the words the model relies on, the training data map and the weak slices
            (`engine.evaluation.dataset_panel.dataset_block` of the run's eval/ folder),
            shown in the viewer's Dataset panel; None: none.
        heatmap_examples: the first examples that get PNG heatmaps and BertViz JSON.
        viewer_examples: the first examples embedded in index.html.
        verbose: 1 shows a `keras.utils.Progbar`, 0 is silent.

    Example:
    >>> WritingOptions(heatmap_examples=0, verbose=0).viewer_examples
    32
    """

    run_info: dict | None = None
    faithfulness: dict | None = None
    heads: dict | None = None
    dataset: dict | None = None
    heatmap_examples: int = 8
    viewer_examples: int = 32
    verbose: int = 1


def export_attention(
    classifier,
    vectorizer,
    texts,
    out_dir,
    class_names,
    true_labels=None,
    example_ids=None,
    scoring: ScoringOptions | None = None,
    writing: WritingOptions | None = None,
):
    """Runs `classifier` over `texts` in batches and writes a full attention export.

    Per batch: the texts are vectorised, one forward pass of the classifier gives the
    probabilities and every block's attention scores (`training=False`, float32), every
    attribution method scores the tokens for the predicted class
    (`inspection.methods.attribution`), and each example is trimmed to its real tokens,
    rolled out and streamed to disk.

    Writes into `out_dir`:
        meta.json, manifest.jsonl, attention.npz   the format read by `load_attention`
        heatmaps/<id>_heads*.png, <id>_layers*.png first `writing.heatmap_examples` examples
        bertviz/<id>.json                          same examples, for `bertviz.head_view`
        index.html                                 offline viewer, first `viewer_examples`

    Args:
        classifier: a `models.TransformerClassifier` (`get_model_parts(model)[1]`): token
            ids (B, T) -> probabilities, and with `return_attention_scores=True` a dict
            with "probabilities" (B, C) and "attention_scores", one (B, N, T, T) array
            per block, post-softmax, padded keys exactly 0; `encoder.head_counts` says
            how many heads each block has.
        vectorizer: `keras.layers.TextVectorization` (padding id 0), or the
            `tokenization.WordPieceTokenizer` of a pretrained checkpoint, the one in
            the end-to-end model; `find_text_vectorization(model)` finds it. With
            WordPiece the tokens are pieces, "[CLS]" first and "[SEP]" last, and each
            record also says which word each piece belongs to (`word_index`).
        texts: sequence of N raw strings.
        out_dir: output directory, created if missing.
        class_names: list of C class names.
        true_labels: optional N labels, as indices into `class_names` or as names;
            None when unknown (predict.py).
        example_ids: optional N unique ids (letters, digits, `_-.`); default
            the zero-padded position, "00000", "00001", ...
        scoring: what each record holds (`ScoringOptions`); None: the defaults.
        writing: what goes around the records (`WritingOptions`); None: the defaults.

    Returns:
        The export as an `AttentionFile` (see `load_attention`).

    Raises:
        ValueError: an argument does not fit (labels, ids, methods), or an attention row
            does not sum to 1 over the real tokens.

    Example:
    >>> export = export_attention(  # doctest: +SKIP
    ...     get_model_parts(model)[1], find_text_vectorization(model), texts,
    ...     "runs/imdb/attention", class_names=["neg", "pos"], true_labels=labels,
    ...     scoring=ScoringOptions(methods=["rollout", "leave_one_out"]))
    >>> export.word_attributions(export.example_ids[0])["leave_one_out"]  # doctest: +SKIP
    array([ 0.012, -0.003,  0.215])
    """
    scoring, writing = scoring or ScoringOptions(), writing or WritingOptions()
    texts = [str(text) for text in texts]
    class_names = [str(name) for name in class_names]
    true_indices = label_indices(true_labels, class_names, len(texts))
    example_ids = _example_ids(example_ids, len(texts))
    methods = check_methods(scoring.methods, classifier)
    kept_heads = check_kept_heads(scoring.kept_heads, classifier.encoder.head_counts)
    out_dir = pathlib.Path(out_dir)
    maker = RecordMaker(classifier, vectorizer, class_names, methods, scoring.pooling, kept_heads)
    batches = _record_batches(maker, texts, example_ids, true_indices, scoring.batch_size)
    _write_export(out_dir, maker, batches, len(texts), writing)
    return load_attention(out_dir)


def find_text_vectorization(model):
    """Returns the first `keras.layers.TextVectorization` or checkpoint tokenizer
    (`WordPieceTokenizer`, `ByteLevelBpeTokenizer`) inside `model` (searching nested models).

    Example:
    >>> vectorizer = find_text_vectorization(end_to_end_model)  # doctest: +SKIP
    """
    pending = [model]
    while pending:
        layer = pending.pop(0)
        if isinstance(layer, (keras.layers.TextVectorization, CheckpointTokenizer)):
            return layer
        pending.extend(getattr(layer, "layers", []))
    raise ValueError(
        f"No TextVectorization or WordPieceTokenizer layer in model "
        f"{getattr(model, 'name', model)!r}: pass the vectorizer explicitly."
    )


def _example_ids(example_ids, num_examples):
    """The ids as strings, one per text; default the zero-padded positions.

    Example:
    >>> _example_ids(None, 3), _example_ids([7, "b"], 2)
    (['00000', '00001', '00002'], ['7', 'b'])
    """
    if example_ids is None:
        width = max(5, len(str(max(num_examples - 1, 0))))
        return [str(index).zfill(width) for index in range(num_examples)]
    example_ids = [str(example_id) for example_id in example_ids]
    if len(example_ids) != num_examples:
        raise ValueError(
            f"example_ids needs one id per text ({num_examples}). Received: {len(example_ids)} ids"
        )
    return example_ids


def _record_batches(maker, texts, example_ids, true_indices, batch_size):
    """Yields the records of each batch of `batch_size` texts, in order (lazily: the export
    holds one batch's attention at a time)."""
    for start in range(0, len(texts), batch_size):
        stop = start + batch_size
        yield maker.records(
            texts[start:stop], example_ids[start:stop], true_indices[start:stop], seed=start
        )


def _write_export(out_dir, maker, batches, num_examples, writing):
    """Streams the records of `batches` into `out_dir`, draws the first ones' heatmaps,
    writes meta.json last, then the viewer of the first ones."""
    progress = keras.utils.Progbar(num_examples, verbose=writing.verbose, unit_name="example")
    class_names = maker.class_names
    viewer_records = []
    index = 0
    with AttentionFileWriter(
        out_dir,
        class_names,
        run_info=writing.run_info,
        pooling=maker.pooling,
        kept_heads=maker.kept_heads,
    ) as writer:
        for records in batches:
            for record in records:
                writer.add(record)
                if index < writing.heatmap_examples and record.num_tokens > 0:
                    _render(record, class_names, out_dir)
                if index < writing.viewer_examples:
                    viewer_records.append(record)
                index += 1
            progress.update(index)
        meta = writer.finish(
            viewer_examples=writing.viewer_examples,
            heatmap_examples=writing.heatmap_examples,
            attribution_seconds=maker.attributions.seconds_per_example(),
            faithfulness=writing.faithfulness,
        )
    write_viewer(
        out_dir / VIEWER_FILENAME,
        viewer_records,
        class_names,
        meta=meta,
        title="Attention viewer",
        heads=writing.heads,
        dataset=writing.dataset,
    )


def _render(record, class_names, out_dir):
    true_name = "?" if record.true_label_index is None else class_names[record.true_label_index]
    title = (
        f"example {record.example_id}: true {true_name}, predicted "
        f"{class_names[record.predicted_label_index]} "
        f"(p={record.probabilities[record.predicted_label_index]:.3f})"
    )
    prefix = out_dir / "heatmaps" / record.example_id
    plot_attention_heads(record.attention_scores, record.tokens, prefix, title=title)
    plot_layer_averages(record.attention_scores, record.tokens, prefix, title=title)
    write_bertviz_json(
        out_dir / "bertviz" / f"{record.example_id}.json",
        record.attention_scores,
        record.tokens,
        example_id=record.example_id,
    )
