"""The layers need Keras and one backend only (docs/layers.md, using the layers alone).

A clean virtual environment gets the pinned Keras and JAX and nothing else of this
project's dependencies (no TensorFlow, pandas, tensorflow-datasets); a copy of `layers/`
builds, trains, saves and reloads a model there.
"""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import importlib.util
    import numpy as np
    import keras
    assert keras.backend.backend() == "jax"
    for absent in ("tensorflow", "pandas", "tensorflow_datasets", "sklearn"):
        assert importlib.util.find_spec(absent) is None, absent

    from layers import MultiHeadAttention, TokenAndPositionEmbedding, TransformerEncoderBlock

    tokens = keras.Input((None,), dtype="int32")
    x = TokenAndPositionEmbedding(50, 16, sequence_length=8)(tokens)
    x = TransformerEncoderBlock(num_heads=2, intermediate_dim=32)(x)
    x = x + MultiHeadAttention(num_heads=2, key_dim=8)(x, x, use_causal_mask=True)
    outputs = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(tokens, outputs)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(True))
    ids = np.array([[3, 7, 9, 0], [5, 2, 0, 0]])
    model.fit(ids, np.array([0, 1]), epochs=2, verbose=0)
    model.save("model.keras")
    reloaded = keras.saving.load_model("model.keras", safe_mode=True)
    np.testing.assert_allclose(reloaded.predict(ids, verbose=0), model.predict(ids, verbose=0),
                               rtol=1e-6, atol=1e-6)
    print("layers-only ok")
""")


def pinned(name):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    return next(r for r in requirements if r.split("==")[0] == name)


def test_layers_run_with_keras_and_one_backend_only(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    install = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            pinned("keras"),
            pinned("jax"),
            pinned("jaxlib"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    project = tmp_path / "my_project"
    project.mkdir()
    shutil.copytree(
        ROOT / "layers", project / "layers", ignore=shutil.ignore_patterns("__pycache__")
    )
    result = subprocess.run(
        [python, "-c", SCRIPT],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={"KERAS_BACKEND": "jax", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("layers-only ok")
