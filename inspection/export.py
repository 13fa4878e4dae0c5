"""Exports the attention of a trained classifier: arrays, manifest, attributions, heatmaps,
BertViz, viewer.

Letter legend: B batch, T tokens (padded in a batch, + 1 with a class token; real only
once trimmed), L layers, N heads, C classes.
"""

import pathlib

import keras
import numpy as np
import tensorflow as tf

from inspection import attention_file
from inspection.attention_file import load_attention
from inspection.attention_file_writer import AttentionFileWriter
from inspection.attention_record import AttentionRecord
from inspection.attention_tokens import has_class_token, real_tokens, trim_scores
from inspection.bertviz_export import write_bertviz_json
from inspection.export_attributions import BatchAttributions, check_methods
from inspection.export_checks import check_rows, label_indices, run_attention_model
from inspection.heatmaps import plot_attention_heads, plot_layer_averages
from inspection.rollout import check_pooling, token_importance
from inspection.viewer import write_viewer
from inspection.word_pieces import is_word_piece, word_index
from tokenization import WordPieceTokenizer

# float32 softmax outputs of the same weights agree to about 1e-6; a larger gap means the
# attention path computes something else than the model that was evaluated.
PROBABILITY_TOLERANCE = 1e-4


def export_attention(
    attention_model,
    vectorizer,
    texts,
    out_dir,
    class_names,
    true_labels=None,
    fast_path_probabilities=None,
    model=None,
    classifier=None,
    methods=None,
    faithfulness=None,
    pooling="mean",
    example_ids=None,
    batch_size=32,
    run_info=None,
    max_rendered_examples=8,
    max_viewer_examples=32,
    tolerance=PROBABILITY_TOLERANCE,
    verbose=1,
):
    """Runs `attention_model` over `texts` in batches and writes a full attention export.

    Per batch: the texts are vectorised, `attention_model` gives probabilities and
    attention scores (`training=False`, float32), the probabilities are checked
    against the fast path (the plain model, which does not return scores), every
    attribution method scores the tokens for the predicted class
    (`inspection.attribution`), and each example is trimmed to its real tokens, rolled out
    and streamed to disk.

    Writes into `out_dir`:
        meta.json, manifest.jsonl, attention.npz   the format read by `load_attention`
        heatmaps/<id>_heads*.png, <id>_layers*.png first `max_rendered_examples` examples
        bertviz/<id>.json                          same examples, for `bertviz.head_view`
        index.html                                 offline viewer, first `max_viewer_examples`

    Args:
        attention_model: keras.Model, token ids int (B, T) -> dict with
            "probabilities" (B, C) and "attention_scores", a list of one array
            (B, N, T, T) per layer; post-softmax, padded keys exactly 0.
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
        fast_path_probabilities: float array (N, C) from the plain model, e.g.
            what evaluate.py already computed with `model.predict(texts)`.
        model: the end-to-end model, strings (B,) -> (B, C); used to compute the
            fast path batch by batch when `fast_path_probabilities` is None.
            Exactly one of the two must be given.
        classifier: the classifier `attention_model` was built from (token ids ->
            probabilities; `get_model_parts(model)[1]`), which the attribution methods
            replay; None: only rollout, read off the attention maps.
        methods: the attribution methods to store (names of
            `inspection.attribution.METHODS`); None: all of them with a classifier.
            Integrated Gradients costs a 32-row backward pass per example and
            leave-one-out T forward rows: pass fewer to export many long texts.
        faithfulness: the methods' faithfulness on these texts' split, for meta.json
            and the viewer (`run_export.faithfulness_block`); None: not measured.
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
        tolerance: largest allowed |scores path - fast path| probability gap.
        verbose: 1 shows a `keras.utils.Progbar`, 0 is silent.

    Returns:
        The export as an `AttentionFile` (see `load_attention`); its
        `max_probability_difference` is the largest gap found.

    Raises:
        ValueError: if the gap exceeds `tolerance`, naming the example, or if
            `attention_model` does not follow the contract above.

    Example:
    >>> export = export_attention(  # doctest: +SKIP
    ...     attention_model, find_text_vectorization(model), texts, "runs/imdb/attention",
    ...     class_names=["neg", "pos"], true_labels=labels,
    ...     fast_path_probabilities=model.predict(np.array(texts)),
    ...     classifier=get_model_parts(model)[1], methods=["rollout", "leave_one_out"])
    >>> export.max_probability_difference  # doctest: +SKIP
    2.384185791015625e-07
    >>> export.word_attributions(export.example_ids[0])["leave_one_out"]  # doctest: +SKIP
    array([ 0.012, -0.003,  0.215])
    """
    texts = [str(text) for text in texts]
    num_examples = len(texts)
    class_names = [str(name) for name in class_names]
    if (fast_path_probabilities is None) == (model is None):
        raise ValueError(
            "Pass exactly one of fast_path_probabilities=... (from model.predict) or "
            "model=... (the end-to-end model), so the attention path can be checked against "
            "the plain model."
        )
    if fast_path_probabilities is not None:
        fast_path_probabilities = np.asarray(fast_path_probabilities, dtype=np.float32)
        if fast_path_probabilities.shape != (num_examples, len(class_names)):
            raise ValueError(
                f"fast_path_probabilities must have shape ({num_examples}, {len(class_names)}), "
                f"one row per text and one column per class name. "
                f"Received: shape={fast_path_probabilities.shape}"
            )
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
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1. Received: batch_size={batch_size}")
    out_dir = pathlib.Path(out_dir)
    vocabulary = vectorizer.get_vocabulary()
    word_pieces = is_word_piece(vocabulary)
    class_token = has_class_token(pooling, vocabulary)
    attributions = BatchAttributions(classifier, methods, pooling)

    progress = keras.utils.Progbar(num_examples, verbose=verbose, unit_name="example")
    largest_difference = 0.0
    viewer_records = []
    with AttentionFileWriter(out_dir, class_names, run_info=run_info, pooling=pooling) as writer:
        for start in range(0, num_examples, batch_size):
            stop = min(start + batch_size, num_examples)
            batch_texts = texts[start:stop]
            token_ids = keras.ops.convert_to_numpy(vectorizer(tf.constant(batch_texts)))  # (B, T)
            probabilities, attention_scores = run_attention_model(
                attention_model, token_ids, len(class_names), class_token
            )  # (B, C), (B, L, N, T, T) (T + 1 with a class token)
            if fast_path_probabilities is not None:
                fast_path = fast_path_probabilities[start:stop]
            else:
                fast_path = keras.ops.convert_to_numpy(
                    model(tf.constant(batch_texts), training=False)
                ).astype(np.float32)  # (B, C)
            differences = np.abs(probabilities - fast_path).max(axis=-1)  # (B,)
            worst = int(np.argmax(differences))
            if not differences[worst] <= tolerance:
                raise ValueError(
                    f"The attention model's probabilities differ from the plain model's by "
                    f"{differences[worst]:.3g} (> tolerance {tolerance:g}) on example "
                    f"{example_ids[start + worst]!r}: build attention_model from the same "
                    "trained weights, and call both with training=False."
                )
            largest_difference = max(largest_difference, float(differences[worst]))
            # The predicted class of the model that was evaluated, as the manifest says.
            predicted = fast_path.argmax(axis=-1)  # (B,)
            attributions.compute(token_ids, predicted, seed=start)

            for offset in range(stop - start):
                index = start + offset
                tokens = real_tokens(token_ids[offset], vocabulary, class_token)
                scores = trim_scores(attention_scores[offset], token_ids[offset], class_token)
                check_rows(scores, example_ids[index])
                rollout = token_importance(scores, pooling)
                record = AttentionRecord(
                    example_id=example_ids[index],
                    text=texts[index],
                    tokens=tokens,
                    attention_scores=scores,
                    probabilities=fast_path[offset],
                    predicted_label_index=int(predicted[offset]),
                    true_label_index=true_indices[index],
                    rollout_importance=rollout,
                    probability_difference=float(differences[offset]),
                    word_index=word_index(tokens, word_pieces, class_token),
                    attributions=attributions.of_example(offset, token_ids[offset], rollout,
                                                         class_token),
                )
                writer.add(record)
                if index < max_rendered_examples and record.num_tokens > 0:
                    _render(record, class_names, out_dir)
                if index < max_viewer_examples:
                    viewer_records.append(record)
            progress.update(stop)
        meta = writer.finish(
            max_probability_difference=largest_difference if num_examples else None,
            probability_tolerance=tolerance,
            viewer_examples=max_viewer_examples,
            heatmap_examples=max_rendered_examples,
            attribution_seconds=attributions.seconds_per_example(),
            faithfulness=faithfulness,
        )
    write_viewer(out_dir / attention_file.VIEWER_FILENAME, viewer_records, class_names, meta=meta,
                 title="Attention viewer")
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
