"""Older attention exports rewritten in the current format (upgrade_run.py; the reader
refuses them): what each version lacked, filled in.

- Version 1 had no word columns: each token is a word, but the class token of `pooling:
  cls` (version 1 exports came from word-level models only).
- Versions 1 and 2 had no attribution methods: rollout, the one they computed, becomes the
  `attributions` of each example, 0 at a learned class token as version 3 writes it.
- Versions 1 to 3 had no `kept_heads` in meta.json: every head is kept.

Letter legend: T tokens, W words.
"""

import pandas as pd

from inspection.attention_file.format import FORMAT_VERSION, MANIFEST_COLUMNS
from inspection.token_schemes import WORD_LEVEL
from inspection.word_pieces import word_sums

ROLLOUT = "rollout"


def upgraded_export(meta, rows):
    """`(meta, rows)` of an export in the current format, from an older export's meta.json
    (dict) and manifest.jsonl rows (dicts); None when it is current already.

    Example:
    >>> meta = {"format_version": 3, "num_layers": 1, "num_heads": 2, "pooling": "mean"}
    >>> new_meta, new_rows = upgraded_export(meta, [])
    >>> new_meta["format_version"], new_meta["kept_heads"]
    (4, [[0, 1]])
    >>> upgraded_export(new_meta, []) is None
    True
    """
    version = meta["format_version"]
    if version == FORMAT_VERSION:
        return None
    meta = {
        **meta,
        "format_version": FORMAT_VERSION,
        "kept_heads": [list(range(meta["num_heads"]))] * meta["num_layers"],
    }
    if version < 3:
        meta.update(
            attribution_methods=[ROLLOUT], attribution_seconds_per_example=None, faithfulness=None
        )
        if rows:
            manifest = upgraded_manifest(
                pd.DataFrame(rows), version, meta.get("pooling", "mean"), MANIFEST_COLUMNS
            )
            # The columns each row had stay as written; the new ones come from `manifest`.
            rows = [
                {
                    column: row[column] if column in row else manifest.loc[number, column]
                    for column in MANIFEST_COLUMNS
                }
                for number, row in enumerate(rows)
            ]
    return meta, rows


def upgraded_manifest(manifest, version, pooling, columns):
    """A version 1 or 2 manifest (pandas.DataFrame) with the version 3 `columns`, in order.

    Example:
    >>> import pandas as pd
    >>> old = pd.DataFrame({"tokens": [["[CLS]", "good", "film"]],
    ...                     "rollout_importance": [[0.5, 0.3, 0.2]]})
    >>> new = upgraded_manifest(old, 1, "cls", ["tokens", "words", "attributions"])
    >>> new.loc[0, "words"], new.loc[0, "attributions"]
    (['good', 'film'], {'rollout': [0.0, 0.3, 0.2]})
    """
    manifest = manifest.copy()
    if version == 1:
        manifest = _with_word_columns(manifest, pooling)
    token_scores, word_scores = [], []
    for importance, indices in zip(
        manifest["rollout_importance"], manifest["word_index"], strict=True
    ):
        special = [index is None for index in indices]
        rollout = [float(value) for value in importance]  # (T,)
        if _learned_class_token(pooling, special):
            rollout[0] = 0.0
        token_scores.append({ROLLOUT: rollout})
        word_scores.append({ROLLOUT: word_sums(rollout, indices).tolist()})  # (W,)
    manifest["attributions"] = token_scores
    manifest["word_attributions"] = word_scores
    return manifest[list(columns)]


def _with_word_columns(manifest, pooling):
    """Version 2's word columns: version 1 exports came from word-level models only, each
    token a word but the class token of `pooling: cls`."""
    indices = [
        WORD_LEVEL.word_index(list(tokens), class_token=pooling == "cls")
        for tokens in manifest["tokens"]
    ]
    manifest["word_index"] = indices
    manifest["special"] = [[index is None for index in row] for row in indices]
    manifest["words"] = [
        WORD_LEVEL.words(list(tokens), row)
        for tokens, row in zip(manifest["tokens"], indices, strict=True)
    ]
    manifest["word_importance"] = [
        word_sums(importance, row).tolist()
        for importance, row in zip(manifest["rollout_importance"], indices, strict=True)
    ]
    return manifest


def _learned_class_token(pooling, special):
    """Whether token 0 is a word-level model's learned class token, which no method scores.

    `pooling: cls` puts one first when the text has no "[CLS]" of its own; a WordPiece text
    has its own and always ends with a special "[SEP]", a word-level one with none.

    Example:
    >>> _learned_class_token("cls", [True, False]), _learned_class_token("cls", [True, True])
    (True, False)
    """
    return pooling == "cls" and bool(special) and special[0] and not any(special[1:])
