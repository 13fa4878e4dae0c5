import json
import sys
import types

import numpy as np

from inspection.rendering.bertviz_export import BERTVIZ_SNIPPET, write_bertviz_json


def test_json_has_one_batch_of_heads_per_layer(tmp_path):
    scores = np.random.default_rng(0).random((3, 2, 4, 4)).astype("float32")
    path = write_bertviz_json(tmp_path / "b.json", scores, ["a", "b", "c", "d"], example_id="7")
    data = json.loads(path.read_text())
    assert data["tokens"] == ["a", "b", "c", "d"]
    assert len(data["attention"]) == 3
    assert np.array(data["attention"][0]).shape == (1, 2, 4, 4)
    np.testing.assert_allclose(np.array(data["attention"])[:, 0], scores, atol=1e-6)


def test_snippet_calls_head_view_with_tensors_per_layer(tmp_path, monkeypatch):
    scores = np.full((2, 3, 2, 2), 0.5, "float32")
    (tmp_path / "bertviz").mkdir()
    write_bertviz_json(tmp_path / "bertviz" / "00000.json", scores, ["good", "film"])
    calls = []
    # Stand-ins for torch and bertviz, which this project does not depend on.
    fake_torch = types.SimpleNamespace(tensor=np.asarray)
    fake_bertviz = types.SimpleNamespace(
        head_view=lambda attention, tokens: calls.append((attention, tokens))
    )
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setitem(sys.modules, "bertviz", fake_bertviz)
    monkeypatch.chdir(tmp_path)
    exec(BERTVIZ_SNIPPET, {})
    attention, tokens = calls[0]
    assert tokens == ["good", "film"]
    assert [layer.shape for layer in attention] == [(1, 3, 2, 2), (1, 3, 2, 2)]
