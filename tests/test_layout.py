"""The card's layout: packages import from the checkout, and old saved models still load."""

import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "saved_before_move"


def test_packages_resolve_inside_the_repository():
    code = ("import layers, models, data, tokenization, inspection, config, runs, reports; "
            "print('\\n'.join(m.__file__ for m in (layers, models, data, tokenization, "
            "inspection, config, runs, reports)))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    for path in result.stdout.split():
        assert Path(path).resolve().is_relative_to(ROOT), path


def test_nothing_generic_is_installed_into_site_packages():
    # Run from a folder outside the checkout: only an installed package could be found.
    code = ("import importlib.util as u; "
            "print([n for n in ('layers', 'models', 'data', 'tokenization', 'inspection', "
            "'config', 'runs') "
            "if u.find_spec(n)])")
    result = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True,
                            text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    assert result.stdout.strip() == "[]"


def test_a_model_saved_before_the_move_loads_after_import_models_alone():
    # A fresh process, as a user would: `import models`, then Keras' own loader, safe mode.
    expected = json.loads((FIXTURE / "expected.json").read_text())
    code = (
        "import json, sys, numpy as np, keras, models; "
        f"model = keras.saving.load_model({str(FIXTURE / 'model.keras')!r}, safe_mode=True); "
        f"texts = np.array({expected['texts']!r}); "
        "print(json.dumps(np.asarray(model(texts, training=False)).tolist()))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    probabilities = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(probabilities, expected["probabilities"], atol=1e-6)


def test_registered_names_are_those_saved_models_carry():
    import layers
    import models
    import tokenization

    registered = [models.AttentionProbe, models.PaddingMask, tokenization.WordPieceTokenizer]
    for cls in [getattr(layers, name) for name in layers.__all__] + registered:
        assert keras.saving.get_registered_name(cls) == f"keras_attention_lab>{cls.__name__}"
