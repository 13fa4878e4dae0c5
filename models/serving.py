"""A run's model as a TensorFlow SavedModel, for TF Serving and converters.

Two signatures, both returning {"probabilities": float32 (B, C)}:
- `serving_default` (also `serve`): raw strings (B,); the run's tokenizer is inside, so a
  WordPiece run needs `import tensorflow_text` where it loads;
- `serve_token_ids`: token ids int64 (B, T) as the run's vectorizer gives them (0 is
  padding), for runtimes without text ops. `token_ids_only=True` writes that signature
  alone, with no text op in the graph, for converters (ONNX, LiteRT).
With a multi-label run's thresholds, both also return {"labels": bool (B, C)}: each text's
set, the labels whose probability reaches their threshold.
"""

import keras
import tensorflow as tf

from models.end_to_end import get_model_parts

TEXTS_SIGNATURE = "serve"
TOKEN_IDS_SIGNATURE = "serve_token_ids"
OUTPUT = "probabilities"
SETS_OUTPUT = "labels"


def export_saved_model(model, directory, token_ids_only=False, thresholds=None):
    """Writes the end-to-end `model` (`build_end_to_end_model`, a loaded `model.keras`) to
    `directory` as a SavedModel with the signatures above; `thresholds` (C,): a multi-label
    run's, for the "labels" output.

    Example:
    >>> # export_saved_model(load_end_to_end_model("runs/default/model.keras"), "served")
    >>> # served = tf.saved_model.load("served")
    >>> # served.signatures["serving_default"](tf.constant(["a good film"]))["probabilities"]
    """
    _, classifier = get_model_parts(model)
    archive = keras.export.ExportArchive()
    cut = None if thresholds is None else tf.constant(thresholds, tf.float32)[None, :]

    def outputs(probabilities):
        if cut is None:
            return {OUTPUT: probabilities}
        return {OUTPUT: probabilities, SETS_OUTPUT: probabilities >= cut}

    if not token_ids_only:
        archive.track(model)
        # The first endpoint is also `serving_default`.
        archive.add_endpoint(
            TEXTS_SIGNATURE,
            lambda texts: outputs(model(texts, training=False)),
            input_signature=[tf.TensorSpec((None,), tf.string)],
        )
    else:
        archive.track(classifier)
    archive.add_endpoint(
        TOKEN_IDS_SIGNATURE,
        lambda token_ids: outputs(classifier(token_ids, training=False)),
        input_signature=[tf.TensorSpec((None, None), tf.int64)],
    )
    archive.write_out(str(directory), verbose=False)
