"""A run's model through `model.quantize("int8")`, saved and reloaded: for the
quantization tests of the from-scratch and the pretrained runs."""

import numpy as np
import pytest

from models import load_end_to_end_model
from run_folder import runs

TEXTS = np.array(["a good film", "dull, dull and far too long", "fine"], dtype=object)


def quantized_round_trip(run_dir, tmp_path):
    """(the quantized model, probabilities of TEXTS before and after, the model reloaded
    from its saved file in safe mode)."""
    model = load_end_to_end_model(run_dir / runs.MODEL_FILE)
    before = np.asarray(model(TEXTS, training=False))
    with pytest.warns(UserWarning, match="does not have a `quantize` method"):
        model.quantize("int8")
    after = np.asarray(model(TEXTS, training=False))
    path = tmp_path / "int8.keras"
    model.save(path)
    return model, before, after, load_end_to_end_model(path)
