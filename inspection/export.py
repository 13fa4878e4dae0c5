"""Exports the attention of a trained classifier: arrays, manifest, heatmaps, BertViz, viewer.

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
from inspection.attention_tokens import (
    has_class_token,
    real_tokens,
    stack_block_scores,
    trim_scores,
)
from inspection.bertviz_export import write_bertviz_json
from inspection.heatmaps import plot_attention_heads, plot_layer_averages
from inspection.rollout import check_pooling, token_importance
from inspection.viewer import write_viewer
from inspection.word_pieces import is_word_piece, word_index
from tokenization import WordPieceTokenizer

# float32 softmax outputs of the same weights agree to about 1e-6; a larger gap means the
# attention path computes something else than the model that was evaluated.
PROBABILITY_TOLERANCE = 1e-4
# Rows over real keys sum to 1 up to float32 rounding, for up to a few thousand keys.
ROW_SUM_TOLERANCE = 1e-3


def export_attention(
    attention_model,
    vectorizer,
    texts,
    out_dir,
    class_names,
    true_labels=None,
    fast_path_probabilities=None,
    model=None,
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
    against the fast path (the plain model, which does not return scores), and each
    example is trimmed to its real tokens, rolled out and streamed to disk.

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
    ...     fast_path_probabilities=model.predict(np.array(texts)))
    >>> export.max_probability_difference  # doctest: +SKIP
    2.384185791015625e-07
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
    true_indices = _label_indices(true_labels, class_names, num_examples)
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
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1. Received: batch_size={batch_size}")
    out_dir = pathlib.Path(out_dir)
    vocabulary = vectorizer.get_vocabulary()
    word_pieces = is_word_piece(vocabulary)
    class_token = has_class_token(pooling, vocabulary)

    progress = keras.utils.Progbar(num_examples, verbose=verbose, unit_name="example")
    largest_difference = 0.0
    viewer_records = []
    with AttentionFileWriter(out_dir, class_names, run_info=run_info, pooling=pooling) as writer:
        for start in range(0, num_examples, batch_size):
            stop = min(start + batch_size, num_examples)
            batch_texts = texts[start:stop]
            token_ids = keras.ops.convert_to_numpy(vectorizer(tf.constant(batch_texts)))  # (B, T)
            probabilities, attention_scores = _run_attention_model(
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

            for offset in range(stop - start):
                index = start + offset
                tokens = real_tokens(token_ids[offset], vocabulary, class_token)
                scores = trim_scores(attention_scores[offset], token_ids[offset], class_token)
                _check_rows(scores, example_ids[index])
                record = AttentionRecord(
                    example_id=example_ids[index],
                    text=texts[index],
                    tokens=tokens,
                    attention_scores=scores,
                    probabilities=fast_path[offset],
                    predicted_label_index=int(np.argmax(fast_path[offset])),
                    true_label_index=true_indices[index],
                    rollout_importance=token_importance(scores, pooling),
                    probability_difference=float(differences[offset]),
                    word_index=word_index(tokens, word_pieces, class_token),
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


def _run_attention_model(attention_model, token_ids, num_classes, class_token):
    outputs = attention_model(token_ids, training=False)
    if not isinstance(outputs, dict) or not {"probabilities", "attention_scores"} <= set(outputs):
        raise ValueError(
            "attention_model must return a dict with 'probabilities' and 'attention_scores'. "
            f"Received: {type(outputs).__name__} with keys "
            f"{sorted(outputs) if isinstance(outputs, dict) else None}"
        )
    probabilities = keras.ops.convert_to_numpy(outputs["probabilities"]).astype(np.float32)
    batch, length = token_ids.shape
    length += int(class_token)
    if probabilities.shape != (batch, num_classes):
        raise ValueError(
            f"attention_model's 'probabilities' must have shape ({batch}, {num_classes}). "
            f"Received: shape={probabilities.shape}"
        )
    for layer_index, scores in enumerate(outputs["attention_scores"]):
        shape = tuple(keras.ops.shape(scores))
        if len(shape) != 4 or shape[0] != batch or shape[2:] != (length, length):
            hint = ""
            if len(shape) == 4 and shape[2] == length + 1 and not class_token:
                hint = " The scores have one extra position: pass pooling='cls'."
            raise ValueError(
                f"attention_scores[{layer_index}] must have shape ({batch}, num_heads, {length}, "
                f"{length}). Received: shape={shape}.{hint}"
            )
    return probabilities, stack_block_scores(outputs)  # (B, L, N, T, T)


def _check_rows(scores, example_id):
    if scores.shape[-1] == 0:
        return
    row_sums = scores.sum(axis=-1)  # (layers, heads, T)
    worst = float(np.abs(row_sums - 1.0).max())
    if worst > ROW_SUM_TOLERANCE:
        raise ValueError(
            f"Attention rows of example {example_id!r} sum to {1 + worst:.4f} or "
            f"{1 - worst:.4f} over real tokens instead of 1: attention_model must give padded "
            "keys (token id 0) exactly zero weight."
        )


def _label_indices(true_labels, class_names, num_examples):
    if true_labels is None:
        return [None] * num_examples
    true_labels = list(true_labels)
    if len(true_labels) != num_examples:
        raise ValueError(
            f"true_labels needs one label per text ({num_examples}). "
            f"Received: {len(true_labels)} labels"
        )
    indices = []
    for label in true_labels:
        if isinstance(label, (str, bytes)):
            name = label.decode() if isinstance(label, bytes) else label
            if name not in class_names:
                raise ValueError(
                    f"true label {name!r} is not in class_names={class_names}."
                )
            indices.append(class_names.index(name))
        else:
            index = int(label)
            if not 0 <= index < len(class_names):
                raise ValueError(
                    f"true label index {index} is outside 0..{len(class_names) - 1} "
                    f"for class_names={class_names}."
                )
            indices.append(index)
    return indices


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
