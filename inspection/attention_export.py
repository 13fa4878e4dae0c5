"""Exports the attention of a trained classifier: arrays, manifest, attributions, heatmaps,
BertViz, viewer.

Letter legend: B batch, T tokens (padded in a batch, + 1 with a class token; real only
once trimmed), L layers, N heads, C classes.
"""

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
from tokenization import WordPieceTokenizer


def export_attention(
    classifier,
    vectorizer,
    texts,
    out_dir,
    class_names,
    true_labels=None,
    methods=None,
    faithfulness=None,
    pooling="mean",
    example_ids=None,
    batch_size=32,
    run_info=None,
    max_rendered_examples=8,
    max_viewer_examples=32,
    kept_heads=None,
    heads=None,
    dataset=None,
    verbose=1,
):
    """Runs `classifier` over `texts` in batches and writes a full attention export.

    Per batch: the texts are vectorised, one forward pass of the classifier gives the
    probabilities and every block's attention scores (`training=False`, float32), every
    attribution method scores the tokens for the predicted class
    (`inspection.methods.attribution`), and each example is trimmed to its real tokens, rolled out
    and streamed to disk.

    Writes into `out_dir`:
        meta.json, manifest.jsonl, attention.npz   the format read by `load_attention`
        heatmaps/<id>_heads*.png, <id>_layers*.png first `max_rendered_examples` examples
        bertviz/<id>.json                          same examples, for `bertviz.head_view`
        index.html                                 offline viewer, first `max_viewer_examples`

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
        methods: the attribution methods to store (names of
            `inspection.methods.attribution.METHODS`); None: all of them.
            Integrated Gradients costs a 32-row backward pass per example and
            leave-one-out T forward rows: pass fewer to export many long texts.
        faithfulness: the methods' faithfulness on these texts' split, for meta.json
            and the viewer (`engine.evaluation.attention.faithfulness_block`); None: not
            measured.
        pooling: the classifier's pooling, "mean", "max" or "cls". With "cls"
            the rollout importance is the row of token 0, "[CLS]": a word-level
            model's attention has T + 1 positions, position 0 being its learned class
            token (kept as token "[CLS]"); WordPiece text starts with its own.
        example_ids: optional N unique ids (letters, digits, `_-.`); default
            the zero-padded position, "00000", "00001", ...
        batch_size: examples per forward pass.
        run_info: optional JSON-serialisable dict stored in meta.json (model
            name, run directory, checkpoint, dataset split, ...).
        max_rendered_examples: examples that get PNG heatmaps and BertViz JSON.
        max_viewer_examples: examples embedded in index.html.
        kept_heads: for a pruned classifier (`models.pruning`), per block the original
            numbers of the heads it kept (its run's compress.json): the maps are stored
            at those numbers, a removed head's all 0, and meta.json says which are real.
            None: each block's heads numbered from 0.
        heads: the heads measured across a split (`engine.evaluation.attention.heads_block`
            of the run's heads.json), shown in the viewer's model view and heads panel; None: none.
        dataset: the words the model relies on, the training data map and the weak
            slices (`engine.evaluation.dataset_panel.dataset_block` of the run's eval/
            folder), shown in the viewer's Dataset panel; None: none.
        verbose: 1 shows a `keras.utils.Progbar`, 0 is silent.

    Returns:
        The export as an `AttentionFile` (see `load_attention`).

    Raises:
        ValueError: an argument does not fit (labels, ids, methods), or an attention row
            does not sum to 1 over the real tokens.

    Example:
    >>> export = export_attention(  # doctest: +SKIP
    ...     get_model_parts(model)[1], find_text_vectorization(model), texts,
    ...     "runs/imdb/attention", class_names=["neg", "pos"], true_labels=labels,
    ...     methods=["rollout", "leave_one_out"])
    >>> export.word_attributions(export.example_ids[0])["leave_one_out"]  # doctest: +SKIP
    array([ 0.012, -0.003,  0.215])
    """
    texts = [str(text) for text in texts]
    num_examples = len(texts)
    class_names = [str(name) for name in class_names]
    true_indices = label_indices(true_labels, class_names, num_examples)
    if example_ids is None:
        width = max(5, len(str(max(num_examples - 1, 0))))
        example_ids = [str(index).zfill(width) for index in range(num_examples)]
    example_ids = [str(example_id) for example_id in example_ids]
    if len(example_ids) != num_examples:
        raise ValueError(
            f"example_ids needs one id per text ({num_examples}). "
            f"Received: {len(example_ids)} ids"
        )
    check_pooling(pooling)
    methods = check_methods(methods, classifier)
    kept_heads = check_kept_heads(kept_heads, classifier.encoder.head_counts)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1. Received: batch_size={batch_size}")
    out_dir = pathlib.Path(out_dir)
    maker = RecordMaker(classifier, vectorizer, class_names, methods, pooling, kept_heads)

    progress = keras.utils.Progbar(num_examples, verbose=verbose, unit_name="example")
    viewer_records = []
    with AttentionFileWriter(out_dir, class_names, run_info=run_info, pooling=pooling,
                             kept_heads=kept_heads) as writer:
        for start in range(0, num_examples, batch_size):
            stop = min(start + batch_size, num_examples)
            records = maker.records(texts[start:stop], example_ids[start:stop],
                                    true_indices[start:stop], seed=start)
            for index, record in enumerate(records, start=start):
                writer.add(record)
                if index < max_rendered_examples and record.num_tokens > 0:
                    _render(record, class_names, out_dir)
                if index < max_viewer_examples:
                    viewer_records.append(record)
            progress.update(stop)
        meta = writer.finish(
            viewer_examples=max_viewer_examples,
            heatmap_examples=max_rendered_examples,
            attribution_seconds=maker.attributions.seconds_per_example(),
            faithfulness=faithfulness,
        )
    write_viewer(out_dir / VIEWER_FILENAME, viewer_records, class_names, meta=meta,
                 title="Attention viewer", heads=heads, dataset=dataset)
    return load_attention(out_dir)


def find_text_vectorization(model):
    """Returns the first `keras.layers.TextVectorization` or `WordPieceTokenizer` inside
    `model` (searching nested models).

    Example:
    >>> vectorizer = find_text_vectorization(end_to_end_model)  # doctest: +SKIP
    """
    pending = [model]
    while pending:
        layer = pending.pop(0)
        if isinstance(layer, (keras.layers.TextVectorization, WordPieceTokenizer)):
            return layer
        pending.extend(getattr(layer, "layers", []))
    raise ValueError(
        f"No TextVectorization or WordPieceTokenizer layer in model "
        f"{getattr(model, 'name', model)!r}: pass the vectorizer explicitly."
    )


def _render(record, class_names, out_dir):
    true_name = "?" if record.true_label_index is None else class_names[record.true_label_index]
    title = (f"example {record.example_id}: true {true_name}, predicted "
             f"{class_names[record.predicted_label_index]} "
             f"(p={record.probabilities[record.predicted_label_index]:.3f})")
    prefix = out_dir / "heatmaps" / record.example_id
    plot_attention_heads(record.attention_scores, record.tokens, prefix, title=title)
    plot_layer_averages(record.attention_scores, record.tokens, prefix, title=title)
    write_bertviz_json(out_dir / "bertviz" / f"{record.example_id}.json",
                       record.attention_scores, record.tokens, example_id=record.example_id)
