"""Writes attention heatmaps of a few fixed examples to TensorBoard at the end of each epoch."""

import keras
import numpy as np

from inspection.heatmaps import render_attention_png

PADDING_ID = 0
CLASS_TOKEN = "[CLS]"


class AttentionImagesCallback(keras.callbacks.Callback):
    """Logs a layers x heads attention grid per example as a TensorBoard image.

    The images go under the tag `attention/<example_index>` (step = epoch), in
    the same event format as `tf.summary.image`, written with `tf.summary.write`
    so that logging needs TensorFlow only (the `tensorboard` package is needed
    only to look at the logs).

    Args:
        log_dir: TensorBoard log directory (e.g. `<run>/logs/attention`).
        token_ids: int array (B, L), a few fixed validation examples; id 0 is padding.
        attention_model: keras.Model, token ids -> {"probabilities",
            "attention_scores"} (see `export_attention`), sharing weights with
            the model being trained.
        attention_model_builder: alternative to `attention_model`: a function
            `builder(trained_model) -> attention_model`, called once when
            training starts.
        vocabulary: optional list of token strings (`TextVectorization.get_vocabulary()`)
            for the axis labels; token ids otherwise.
        max_tokens: only the first `max_tokens` real tokens are drawn, to keep
            images small.
        every_n_epochs: log every n-th epoch (and always the first one).

    Example:
    >>> callback = AttentionImagesCallback(  # doctest: +SKIP
    ...     "runs/imdb/logs/attention", validation_token_ids[:3],
    ...     attention_model_builder=build_attention_model, vocabulary=vocabulary)
    >>> model.fit(train_data, validation_data=val_data, callbacks=[callback])  # doctest: +SKIP
    """

    def __init__(self, log_dir, token_ids, attention_model=None, attention_model_builder=None,
                 vocabulary=None, max_tokens=64, every_n_epochs=1):
        super().__init__()
        if (attention_model is None) == (attention_model_builder is None):
            raise ValueError(
                "Pass exactly one of attention_model=... or attention_model_builder=...."
            )
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
        self.attention_model = attention_model
        self.attention_model_builder = attention_model_builder
        self.vocabulary = vocabulary
        self.max_tokens = max_tokens
        self.every_n_epochs = every_n_epochs
        self._writer = None

    def on_train_begin(self, logs=None):
        import tensorflow as tf

        if self.attention_model is None:
            self.attention_model = self.attention_model_builder(self.model)
        self._writer = tf.summary.create_file_writer(self.log_dir)

    def on_epoch_end(self, epoch, logs=None):
        if epoch % self.every_n_epochs != 0:
            return
        outputs = self.attention_model(self.token_ids, training=False)
        scores = np.stack([keras.ops.convert_to_numpy(layer_scores)
                           for layer_scores in outputs["attention_scores"]], axis=1)
        # (B, layers, heads, A, A); A = L + 1 when the model prepends a class token.
        num_layers, num_heads = scores.shape[1:3]
        has_class_token = scores.shape[-1] == self.token_ids.shape[1] + 1
        panel_titles = [[f"layer {layer + 1} head {head + 1}" for head in range(num_heads)]
                        for layer in range(num_layers)]
        with self._writer.as_default():
            for index, example_ids in enumerate(self.token_ids):
                is_real = example_ids != PADDING_ID  # (L,)
                tokens = [self._token(token_id) for token_id in example_ids[is_real]]
                if has_class_token:
                    is_real = np.concatenate([[True], is_real])  # (L + 1,)
                    tokens = [CLASS_TOKEN] + tokens
                real_positions = np.flatnonzero(is_real)[: self.max_tokens]
                tokens = tokens[: self.max_tokens]
                example_scores = scores[index][:, :, real_positions][:, :, :, real_positions]
                png = render_attention_png(example_scores, tokens, tokens, panel_titles,
                                           title=f"example {index}, epoch {epoch + 1}")
                _write_png_summary(f"attention/{index}", png, step=epoch)
        self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _token(self, token_id):
        if self.vocabulary is not None and 0 <= token_id < len(self.vocabulary):
            return str(self.vocabulary[token_id])
        return str(token_id)


def _write_png_summary(tag, png, step):
    """Writes one PNG as TensorBoard's image plugin stores it: [width, height, png bytes]."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2

    metadata = summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = "images"
    height, width = _png_size(png)
    tensor = tf.constant([str(width).encode(), str(height).encode(), png])
    tf.summary.write(tag, tensor, step=step, metadata=metadata)


def _png_size(png):
    # The IHDR chunk follows the 8-byte signature: length (4), type (4), width (4), height (4).
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    return height, width
