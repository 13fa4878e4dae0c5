"""The gradient methods give the same scores on JAX and PyTorch as on TensorFlow.

The same weights are loaded into the same classifier under each backend, in a subprocess
(the backend is fixed when Keras is imported), and every method but `random` and the
attention-only ones must agree within float32 rounding.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspection.methods.attribution import attribute
from tests.inspection.planted_token import planted_texts, planted_token_classifier

pytestmark = pytest.mark.slow  # a process per backend

ROOT = Path(__file__).resolve().parents[3]
TEXTS = 6
# Every text (and each one's 32 Integrated Gradients steps) in one pass: JAX and PyTorch
# compile or trace a function per batch shape, and 3 passes of other lengths cost 3 times.
ONE_PASS = TEXTS * 32
METHODS = (
    "gradient_x_input",
    "conservative_gradient_x_input",
    "attention_gradient",
    "integrated_gradients",
    "leave_one_out",
    "rollout",
)
SCRIPT = """
import json, sys
import numpy as np
from config import ModelConfig
from inspection.methods.attribution import attribute
from models import build_classifier
from tests.inspection.planted_token import LENGTH, VOCABULARY_SIZE
weights, ids_file, methods, one_pass = sys.argv[1:5]
config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0)
classifier = build_classifier(config, VOCABULARY_SIZE, sequence_length=LENGTH, num_classes=2)
classifier.load_weights(weights)
token_ids = np.load(ids_file)
print(json.dumps({m: attribute(classifier, token_ids, m, "mean", batch_size=int(one_pass)).tolist()
                  for m in methods.split(",")}))
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_scores_equal_tensorflows(backend, tmp_path):
    pytest.importorskip(backend)
    classifier = planted_token_classifier("mean")
    token_ids, _ = planted_texts(TEXTS, seed=5)
    classifier.save_weights(tmp_path / "planted.weights.h5")
    np.save(tmp_path / "ids.npy", token_ids)
    environment = {
        **os.environ,
        "KERAS_BACKEND": backend,
        "PYTHONPATH": str(ROOT),
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(tmp_path / "planted.weights.h5"),
            str(tmp_path / "ids.npy"),
            ",".join(METHODS),
            str(ONE_PASS),
        ],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    other = json.loads(result.stdout.strip().splitlines()[-1])
    for method in METHODS:
        np.testing.assert_allclose(
            other[method],
            attribute(classifier, token_ids, method, "mean", batch_size=ONE_PASS),
            rtol=1e-3,
            atol=1e-5,
            err_msg=f"{backend} {method}",
        )
