"""Inspection of a fine-tuned pretrained model (WordPiece pieces, [CLS] and [SEP] in the text):
the export, its heatmaps and BertViz files, predict.py --explain, the viewer and the
TensorBoard images, on a tiny checkpoint fine-tuned with `pooling: cls`; and the export of
a classifier on the real MiniLM (6 blocks x 12 heads)."""

import json

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

import evaluate
import predict
import train
from inspection import attention_image_size, load_attention
from run_folder import runs, saved_run
from tests.helpers import pretrained_args, read_images
from tests.inspection.viewer_browser import open_viewer

# The tiny checkpoint's vocabulary spells "acting" "act ##ing", "played" "play ##ed" and
# "films" "film ##s"; it has no "badly" ([UNK]) and strips the accent of "Café".
TEXTS = ["The film was good, acting played badly!", "bad plot", "Café films"]
TOKENS = [
    "[CLS]",
    "the",
    "film",
    "was",
    "good",
    ",",
    "act",
    "##ing",
    "play",
    "##ed",
    "[UNK]",
    "!",
    "[SEP]",
]
WORD_INDEX = [None, 0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 8, None]
WORDS = ["the", "film", "was", "good", ",", "acting", "played", "[UNK]", "!"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, data_file, tiny_checkpoint):
    """The tiny checkpoint fine-tuned with pooling cls, logging 2 validation examples'
    attention images, and the attention of TEXTS exported from it (attention/texts/)."""
    root = tmp_path_factory.mktemp("runs")
    assert (
        train.main(
            pretrained_args(
                root, data_file, tiny_checkpoint, "model.pooling=cls", "training.attention_images=2"
            )
        )
        == 0
    )
    texts_file = root / "texts.txt"
    texts_file.write_text("\n".join(TEXTS) + "\n")
    assert evaluate.main([str(root / "tiny"), "--texts-file", str(texts_file)]) == 0
    return root / "tiny"


@pytest.fixture(scope="module")
def export(run_dir):
    with load_attention(run_dir / runs.ATTENTION_DIR / "texts") as export:
        yield export


def rollout_row_0(scores):
    """float64 reference of the rollout that `pooling: cls` reads: heads averaged, half the
    identity mixed in, rows renormalised, layers multiplied; the row of token 0."""
    scores = np.asarray(scores, dtype=np.float64)
    rollout = np.eye(scores.shape[-1])
    for layer in scores:  # (N, T, T)
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(scores.shape[-1])
        rollout = (mixed / mixed.sum(axis=-1, keepdims=True)) @ rollout
    return rollout[0]


def test_the_export_keeps_the_pieces_and_records_their_words(export):
    assert export.pooling == "cls" and (export.num_layers, export.num_heads) == (2, 2)
    assert export.meta["format_version"] == 4
    first = export.record("00001")
    assert first.tokens == TOKENS
    assert first.word_index == WORD_INDEX
    assert first.special == [True] + [False] * 11 + [True]
    assert first.words == WORDS
    # The [CLS] of the text is what cls pooling reads: no extra class token position.
    assert first.attention_scores.shape == (2, 2, 13, 13)
    np.testing.assert_allclose(first.attention_scores.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(
        first.rollout_importance, rollout_row_0(first.attention_scores), atol=1e-9
    )
    row = export.manifest.set_index("example_id").loc["00001"]
    importance = first.rollout_importance
    assert row["words"] == WORDS and row["special"] == first.special
    assert row["word_importance"][6] == pytest.approx(importance[8] + importance[9], abs=1e-12)
    np.testing.assert_allclose(
        row["word_importance"],
        [
            importance[[i for i, w in enumerate(WORD_INDEX) if w == word]].sum()
            for word in range(len(WORDS))
        ],
        atol=1e-12,
    )
    assert export.record("00003").words == ["cafe", "films"]
    assert export.record("00003").tokens == ["[CLS]", "cafe", "film", "##s", "[SEP]"]


def test_the_saved_run_scores_every_method_over_the_pieces(run_dir, export):
    from inspection.methods.attribution import METHODS

    assert export.attribution_methods == list(METHODS)
    assert export.faithfulness is None  # a texts file: no split was measured
    vectorizer, classifier = saved_run.load_run(run_dir).parts
    token_ids = vectorizer(tf.constant(TEXTS)).numpy()  # (3, T)
    for record, ids in zip(export.records(), token_ids, strict=True):
        ids = ids[ids != 0]  # (T,): [CLS] ... [SEP], each a scored token id
        scores = export.attributions(record.example_id)
        assert {values.shape for values in scores.values()} == {(len(ids),)}
        # Leave-one-out is removing each token (id 0) by hand, [CLS] and [SEP] too.
        removed = np.repeat(ids[None], len(ids), axis=0)
        np.fill_diagonal(removed, 0)
        full = classifier(ids[None], training=False).numpy()[0, record.predicted_label_index]
        dropped = classifier(removed, training=False).numpy()[:, record.predicted_label_index]
        np.testing.assert_allclose(scores["leave_one_out"], full - dropped, atol=1e-5)
        for method, words in export.word_attributions(record.example_id).items():
            np.testing.assert_allclose(
                words,
                [
                    scores[method][[i for i, w in enumerate(record.word_index) if w == word]].sum()
                    for word in range(len(record.words))
                ],
                atol=1e-12,
            )


def test_heatmaps_and_bertviz_files_hold_every_piece(export):
    for record in export.records():
        count = record.num_tokens
        heads = Image.open(export.directory / "heatmaps" / f"{record.example_id}_heads.png")
        assert heads.size == attention_image_size(2, 2, count, count)
        layers = Image.open(export.directory / "heatmaps" / f"{record.example_id}_layers.png")
        assert layers.size == attention_image_size(1, 2, count, count)
        bertviz = json.loads(
            (export.directory / "bertviz" / f"{record.example_id}.json").read_text()
        )
        assert bertviz["tokens"] == record.tokens
        np.testing.assert_allclose(
            np.array(bertviz["attention"])[:, 0], record.attention_scores, atol=1e-6
        )


def test_explain_ranks_words_each_the_sum_of_its_pieces(run_dir, export, capsys):
    capsys.readouterr()
    # Rollout: what the export's rollout_importance is (the default is the best method).
    assert (
        predict.main(
            [str(run_dir), TEXTS[0], "--explain", "--method", "rollout", "--top", "20", "--json"]
        )
        == 0
    )
    [prediction] = json.loads(capsys.readouterr().out)["predictions"]
    ranked = {item["token"]: item for item in prediction["tokens"]}
    # Every word once, with its pieces; [CLS] and [SEP] are no words of the text.
    assert sorted(ranked) == sorted(WORDS)
    assert ranked["played"]["pieces"] == ["play", "##ed"]
    assert ranked["acting"]["pieces"] == ["act", "##ing"]
    assert [ranked[word]["position"] for word in WORDS] == list(range(len(WORDS)))
    importances = [item["importance"] for item in prediction["tokens"]]
    assert importances == sorted(importances, reverse=True)
    # The export of the same text (another batch, the same ids) has the pieces' shares.
    pieces = export.record("00001").rollout_importance
    assert ranked["played"]["importance"] == pytest.approx(pieces[8] + pieces[9], rel=1e-5)
    assert ranked["good"]["importance"] == pytest.approx(pieces[4], rel=1e-5)
    assert sum(importances) + pieces[0] + pieces[-1] == pytest.approx(1.0, abs=1e-5)
    assert prediction["known_tokens"] == 10  # the 13 tokens but [CLS], [UNK] and [SEP]

    assert (
        predict.main([str(run_dir), TEXTS[0], "--explain", "--method", "rollout", "--top", "3"])
        == 0
    )
    table = capsys.readouterr().out.splitlines()
    assert "    words by rollout (the sum of their pieces):" in table
    header = table.index("    word    position  importance  pieces")
    assert len(table) == header + 4


def test_the_viewer_joins_the_pieces_and_marks_the_special_tokens(browser, export):
    with open_viewer(browser, export.directory / "index.html") as (page, problems, _, _):
        assert page.locator("#head-select option").count() == 3
        assert page.locator("#rollout > span").all_text_contents() == ["[CLS]", *WORDS, "[SEP]"]
        assert page.locator("#rollout span.word").all_text_contents() == ["acting", "played"]
        assert page.locator("#rollout span.special").all_text_contents() == ["[CLS]", "[SEP]"]
        page.select_option("#example-select", "2")
        assert page.locator("#rollout span.word").all_text_contents() == ["films"]
        assert page.locator("#rollout span.word span.piece").all_text_contents() == ["film", "s"]
        assert problems == []


def test_tensorboard_images_have_a_row_per_piece(run_dir):
    run = saved_run.load_run(run_dir)
    vectorizer, _ = run.parts
    texts, _ = run.load_split("validation")
    token_ids = vectorizer(tf.constant(list(texts[:2]))).numpy()  # (2, T)
    images = read_images(run_dir / runs.ATTENTION_LOGS_DIR)
    assert sorted(images) == [
        ("attention/0", 0),
        ("attention/0", 1),
        ("attention/1", 0),
        ("attention/1", 1),
    ]
    for index, ids in enumerate(token_ids):
        count = int((ids != 0).sum())  # [CLS] ... [SEP], no extra class token position
        height, width = images[(f"attention/{index}", 1)].shape[:2]
        assert (width, height) == attention_image_size(2, 2, count, count)


def test_a_classifier_on_minilm_exports_6_blocks_of_12_heads(tmp_path, minilm_folder):
    from config import ModelConfig
    from engine.training.starting_weights import load_checkpoint_into
    from engine.training.starting_weights.checkpoints import read_checkpoint
    from inspection import ScoringOptions, WritingOptions, export_attention
    from models import build_classifier, build_end_to_end_model

    checkpoint = read_checkpoint(minilm_folder)
    config = ModelConfig(pretrained=str(minilm_folder), pooling="cls")
    classifier = build_classifier(config, None, None, num_classes=2, checkpoint=checkpoint)
    load_checkpoint_into(classifier, checkpoint)
    tokenizer = checkpoint.tokenizer(32)
    texts = ["The actors played brilliantly.", "A tedious, unwatchable mess!"]
    export = export_attention(
        classifier,
        tokenizer,
        texts,
        tmp_path,
        ["negative", "positive"],
        # Rollout alone: every method over WordPiece pieces is checked on the tiny
        # checkpoint's run above; here the export's shapes, pieces and pictures at MiniLM's
        # size (Integrated Gradients through 6 blocks cost most of this test's time).
        scoring=ScoringOptions(methods=("rollout",), pooling="cls"),
        writing=WritingOptions(verbose=0),
    )
    assert (export.num_layers, export.num_heads) == (6, 12)
    assert export.max_probability_difference is None
    expected = build_end_to_end_model(tokenizer, classifier)(tf.constant(texts))
    np.testing.assert_allclose(
        np.stack(export.manifest["probabilities"]), np.asarray(expected), atol=1e-5
    )
    first, second = export.records()
    assert first.tokens == ["[CLS]", "the", "actors", "played", "brilliant", "##ly", ".", "[SEP]"]
    assert first.words == ["the", "actors", "played", "brilliantly", "."]
    assert second.words == ["a", "tedious", ",", "unwatchable", "mess", "!"]
    assert second.word_pieces[3] == ["un", "##watch", "##able"]
    assert second.attention_scores.shape == (6, 12, 11, 11)
    heads = Image.open(export.directory / "heatmaps" / "00001_heads.png")
    assert heads.size == attention_image_size(6, 12, 11, 11) == (2390, 1290)
