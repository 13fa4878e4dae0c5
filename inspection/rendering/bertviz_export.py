"""Exports one example's attention in the shape `bertviz.head_view` takes, as JSON.

BertViz wants, per layer, a tensor (batch=1, heads, T, T) and the T tokens. JSON keeps
torch out of this project's dependencies; `BERTVIZ_SNIPPET` converts on the user's side.
"""

import json
import pathlib

import numpy as np

# Run in a notebook with `pip install bertviz torch`. Tested in tests/inspection with stand-ins.
BERTVIZ_SNIPPET = """\
import json

import torch
from bertviz import head_view

with open("bertviz/00000.json", encoding="utf-8") as file:
    data = json.load(file)
attention = [torch.tensor(layer) for layer in data["attention"]]  # each (1, heads, T, T)
head_view(attention, data["tokens"])
"""


def write_bertviz_json(path, attention_scores, tokens, example_id=None):
    """Writes `{"tokens", "attention", ...}` for `bertviz.head_view` (see `BERTVIZ_SNIPPET`).

    Args:
        path: output .json path; parent directories are created.
        attention_scores: float array (L, N, T, T) over real tokens.
        tokens: T token strings.
        example_id: optional id stored alongside.

    Returns:
        The path written.

    Example:
    >>> write_bertviz_json("/tmp/b.json", np.full((1, 1, 2, 2), 0.5), ["a", "b"])  # doctest: +SKIP
    """
    scores = np.asarray(attention_scores, dtype=np.float32)
    if scores.ndim != 4 or scores.shape[2:] != (len(tokens), len(tokens)):
        raise ValueError(
            f"attention_scores must have shape (num_layers, num_heads, {len(tokens)}, "
            f"{len(tokens)}) for the {len(tokens)} tokens. Received: shape={scores.shape}"
        )
    data = {
        "example_id": example_id,
        "tokens": [str(token) for token in tokens],
        # One entry per layer, each (1, N, T, T): head_view expects a batch axis of 1.
        # Six decimals keep the file small; float32 carries about seven significant digits.
        "attention": [
            np.round(layer_scores[np.newaxis].astype(np.float64), 6).tolist()
            for layer_scores in scores
        ],
    }
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path
