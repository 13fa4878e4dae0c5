"""Exports of earlier format versions (inspection/attention_file/upgrade.py): refused by the
reader with the command that rewrites them, and rewritten into the current version."""

import json

import numpy as np
import pytest

from inspection.attention_file.format import MANIFEST_COLUMNS
from inspection.attention_file.reader import OutdatedExportError, load_attention, save_attention
from inspection.attention_file.upgrade import upgraded_export
from tests.inspection.attention_file.records import CLASS_NAMES, make_record

# What versions 1 and 2 did not write: version 3's attributions and what meta says of them.
VERSION_3_COLUMNS = ("attributions", "word_attributions")


VERSION_3_META = (
    "attribution_methods",
    "attribution_seconds_per_example",
    "faithfulness",
    "kept_heads",
)


VERSION_2_COLUMNS = ("word_index", "special", "words", "word_importance")


def rewrite_as_version(directory, version, dropped_columns):
    """Rewrites a current export as an older version wrote it; returns the current rows."""
    rows = [json.loads(line) for line in (directory / "manifest.jsonl").read_text().splitlines()]
    (directory / "manifest.jsonl").write_text(
        "".join(
            json.dumps({key: value for key, value in row.items() if key not in dropped_columns})
            + "\n"
            for row in rows
        )
    )
    meta = json.loads((directory / "meta.json").read_text())
    meta = {key: value for key, value in meta.items() if key not in VERSION_3_META}
    (directory / "meta.json").write_text(json.dumps({**meta, "format_version": version}))
    return rows


def upgrade_in_place(directory):
    """What upgrade_run.py does to an older export, which the reader refuses in one line."""
    with pytest.raises(OutdatedExportError, match="rewrite the run with: python upgrade_run.py"):
        load_attention(directory)
    meta = json.loads((directory / "meta.json").read_text())
    rows = [json.loads(line) for line in (directory / "manifest.jsonl").read_text().splitlines()]
    meta, rows = upgraded_export(meta, rows)
    (directory / "manifest.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (directory / "meta.json").write_text(json.dumps(meta))
    assert upgraded_export(meta, rows) is None  # a second time: nothing to do


def test_version_1_exports_are_rewritten_with_each_token_a_word(tmp_path):
    record = make_record("0", 3)
    record.tokens = ["[CLS]", "good", "film"]  # a word-level pooling: cls export
    record.word_index = [None, 0, 1]  # what version 2 records of it
    save_attention(tmp_path, [record], CLASS_NAMES, pooling="cls")
    [version_2] = rewrite_as_version(tmp_path, 1, VERSION_2_COLUMNS + VERSION_3_COLUMNS)
    upgrade_in_place(tmp_path)
    with load_attention(tmp_path) as export:
        assert export.format_version == 4
        assert list(export.manifest.columns) == list(MANIFEST_COLUMNS)
        for column in VERSION_2_COLUMNS:
            assert export.manifest.loc[0, column] == version_2[column]
        assert export.record("0").words == ["good", "film"]
        # Rollout is its one method; the class token is no token id: no score.
        assert export.attribution_methods == ["rollout"] and export.faithfulness is None
        rollout = version_2["rollout_importance"]
        assert export.attributions("0")["rollout"].tolist() == [0.0] + rollout[1:]
        assert export.word_attributions("0")["rollout"].tolist() == version_2["word_importance"]


@pytest.mark.parametrize(
    "tokens, word_index, learned_class_token",
    [
        (["[CLS]", "good", "film"], [None, 0, 1], True),  # word-level, pooling: cls
        (["[CLS]", "play", "##ed", "[SEP]"], [None, 0, 0, None], False),  # WordPiece's own [CLS]
    ],
)
def test_version_2_exports_are_rewritten_with_rollout_as_their_one_method(
    tmp_path, tokens, word_index, learned_class_token
):
    record = make_record("0", len(tokens))
    record.tokens, record.word_index = tokens, word_index
    record.rollout_importance = np.array([0.4, 0.3, 0.2, 0.1][: len(tokens)])
    save_attention(tmp_path, [record, make_record("1", 2)], CLASS_NAMES, pooling="cls")
    rows = rewrite_as_version(tmp_path, 2, VERSION_3_COLUMNS)
    upgrade_in_place(tmp_path)
    with load_attention(tmp_path) as export:
        assert export.format_version == 4 and export.attribution_methods == ["rollout"]
        assert list(export.manifest.columns) == list(MANIFEST_COLUMNS)
        # No method scores a learned class token; WordPiece's [CLS] is a token id.
        rollout = export.attributions("0")["rollout"]
        assert rollout[0] == (0.0 if learned_class_token else 0.4)
        assert rollout[1:].tolist() == rows[0]["rollout_importance"][1:]
        assert export.word_attributions("0")["rollout"].tolist() == rows[0]["word_importance"]
        assert list(export.record("1").attributions) == ["rollout"]


def test_version_3_exports_are_rewritten_with_every_head_and_their_own_attributions(tmp_path):
    record = make_record("0", 3)
    record.attributions = {"rollout": [0.2, 0.3, 0.5], "random": [0.1, 0.2, 0.3]}
    save_attention(tmp_path, [record], CLASS_NAMES)
    meta = json.loads((tmp_path / "meta.json").read_text())
    del meta["kept_heads"]
    (tmp_path / "meta.json").write_text(json.dumps({**meta, "format_version": 3}))
    upgrade_in_place(tmp_path)
    with load_attention(tmp_path) as export:
        assert export.format_version == 4
        assert export.kept_heads == [[0, 1, 2], [0, 1, 2]]
        assert export.attribution_methods == ["rollout", "random"]
        assert export.attributions("0")["random"].tolist() == [0.1, 0.2, 0.3]
