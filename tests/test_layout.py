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
    code = ("import layers, models, data, tokenization, inspection, run_inspection, config, "
            "runs, reports; print('\\n'.join(m.__file__ for m in (layers, models, data, "
            "tokenization, inspection, run_inspection, config, runs, reports)))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    for path in result.stdout.split():
        assert Path(path).resolve().is_relative_to(ROOT), path


def test_nothing_generic_is_installed_into_site_packages():
    # Run from a folder outside the checkout: only an installed package could be found.
    code = ("import importlib.util as u; "
            "print([n for n in ('layers', 'models', 'data', 'tokenization', 'inspection', "
            "'run_inspection', 'config', 'runs') "
            "if u.find_spec(n)])")
    result = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True,
                            text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    assert result.stdout.strip() == "[]"


def test_a_model_saved_before_the_move_loads_after_import_models_alone():
    # A fresh process, as a user would: `import models`, then its loader, safe mode. (Keras'
    # own loader reads only files saved since the attention's projections became sublayers.)
    expected = json.loads((FIXTURE / "expected.json").read_text())
    code = (
        "import json, sys, numpy as np, keras, models; "
        f"model = models.load_end_to_end_model({str(FIXTURE / 'model.keras')!r}); "
        f"texts = np.array({expected['texts']!r}); "
        "print(json.dumps(np.asarray(model(texts, training=False)).tolist()))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    probabilities = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(probabilities, expected["probabilities"], atol=1e-6)


def test_a_run_saved_before_the_classifier_was_one_class_loads_converted():
    # models.upgrade: the old functional classifier becomes a TransformerClassifier with
    # its weights; the export, attributions and head masks then work on it.
    from models import TransformerClassifier, get_model_parts, load_end_to_end_model

    expected = json.loads((FIXTURE / "expected.json").read_text())
    model = load_end_to_end_model(FIXTURE / "model.keras")
    vectorizer, classifier = get_model_parts(model)
    assert isinstance(classifier, TransformerClassifier)
    assert classifier.encoder.class_token is not None and classifier.pooling_mode == "cls"
    texts = np.array(expected["texts"])
    np.testing.assert_allclose(np.asarray(model(texts, training=False)),
                               expected["probabilities"], atol=1e-6)
    outputs = classifier(vectorizer(texts), return_attention_scores=True)
    np.testing.assert_allclose(outputs["probabilities"], expected["probabilities"], atol=1e-6)


def test_registered_names_are_those_saved_models_carry():
    import layers
    import models
    import tokenization

    registered = [models.TextEncoder, models.TransformerClassifier, models.PaddingMask,
                  tokenization.WordPieceTokenizer]
    for cls in [getattr(layers, name) for name in layers.__all__] + registered:
        assert keras.saving.get_registered_name(cls) == f"keras_attention_lab>{cls.__name__}"
