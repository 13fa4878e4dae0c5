"""Writes attention heatmaps of a few fixed examples to TensorBoard at the end of each epoch."""

import keras
import numpy as np
import tensorflow as tf

from inspection.attention_tokens import real_tokens, stack_block_scores, trim_scores
from inspection.rendering.heatmaps import render_attention_png


class AttentionImagesCallback(keras.callbacks.Callback):
    """Logs a layers x heads attention grid per example as a TensorBoard image.

    The images go under the tag `attention/<example_index>` (step = epoch), written
    with `tf.summary.image` (TensorFlow 2.21 gets it from the `tensorboard` package, a
    dependency of this project). A model that prepends a class token (its maps are one
    position longer than `token_ids`) gets a "[CLS]" row and column first; a WordPiece
    model's labels are its pieces, its own "[CLS]" and "[SEP]" included. Grids of many
    heads get fewer pixels a token (`heatmaps.pixels_per_token`).

    Args:
        log_dir: TensorBoard log directory (e.g. `<run>/logs/attention`).
        token_ids: int array (B, T), a few fixed validation examples; id 0 is padding.
        classifier: the `models.TransformerClassifier` being trained (its forward pass
            with `return_attention_scores=True` gives the maps).
        vocabulary: optional list of token strings (`TextVectorization.get_vocabulary()`)
            for the axis labels; ids it lacks, or all ids without it, are shown as numbers.
        max_tokens: only the first `max_tokens` real tokens ("[CLS]" included) are
            drawn, to keep images small.
        every_n_epochs: log every n-th epoch (and always the first one).

    Example:
    >>> callback = AttentionImagesCallback(  # doctest: +SKIP
    ...     "runs/imdb/logs/attention", validation_token_ids[:3], classifier,
    ...     vocabulary=vocabulary)
    >>> model.fit(train_data, validation_data=val_data, callbacks=[callback])  # doctest: +SKIP
    """

    def __init__(
        self, log_dir, token_ids, classifier, vocabulary=None, max_tokens=64, every_n_epochs=1
    ):
        super().__init__()
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 2 or not np.issubdtype(token_ids.dtype, np.integer):
            raise ValueError(
                "token_ids must be an int array (batch, length). "
                f"Received: dtype={token_ids.dtype}, shape={token_ids.shape}"
            )
        if every_n_epochs < 1:
            raise ValueError(f"every_n_epochs must be at least 1. Received: {every_n_epochs}")
        self.log_dir = str(log_dir)
        self.token_ids = token_ids
        self.classifier = classifier
        self.vocabulary = vocabulary
        self.max_tokens = max_tokens
        self.every_n_epochs = every_n_epochs
        self._token_labels = _token_labels(vocabulary, token_ids)
        self._writer = None

    def on_train_begin(self, logs=None):
        self._writer = tf.summary.create_file_writer(self.log_dir)

    def on_epoch_end(self, epoch, logs=None):
        if epoch % self.every_n_epochs != 0:
            return
        outputs = self.classifier(self.token_ids, training=False, return_attention_scores=True)
        # (B, L, N, T, T), or (B, L, N, T + 1, T + 1) with a class token at position 0.
        scores = stack_block_scores(outputs)
        num_layers, num_heads = scores.shape[1:3]
        class_token = scores.shape[-1] == self.token_ids.shape[1] + 1
        panel_titles = [
            [f"layer {layer} head {head}" for head in range(num_heads)]
            for layer in range(num_layers)
        ]
        with self._writer.as_default():
            for index, example_ids in enumerate(self.token_ids):
                tokens = real_tokens(example_ids, self._token_labels, class_token)
                tokens = tokens[: self.max_tokens]
                example_scores = trim_scores(scores[index], example_ids, class_token)
                example_scores = example_scores[:, :, : self.max_tokens, : self.max_tokens]
                png = render_attention_png(
                    example_scores,
                    tokens,
                    tokens,
                    panel_titles,
                    title=f"example {index}, epoch {epoch + 1}",
                )
                image = tf.io.decode_png(png)[tf.newaxis]  # (1, height, width, channels)
                tf.summary.image(f"attention/{index}", image, step=epoch)
        self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _token_labels(vocabulary, token_ids):
    """A label per id up to the largest in `token_ids`: the vocabulary's, else the id."""
    labels = [] if vocabulary is None else list(vocabulary)
    largest_id = int(token_ids.max(initial=0))
    return labels + [str(token_id) for token_id in range(len(labels), largest_id + 1)]
