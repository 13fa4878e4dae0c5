"""The lab's other paths on the checkpoint families whose tokenizers are not WordPiece
(RoBERTa's byte-level BPE, XLM-RoBERTa's SentencePiece, both with ids 0 and <pad> swapped)
and on the WordPiece families whose encoders differ from BERT's (DistilBERT, ELECTRA):
LoRA and top blocks train, int8, the SavedModel and a pruned copy predict as the run does,
the attention export shows the checkpoint's own tokens, and explanations, --tokens, the
heads and the live lab read its words and special tokens (inspection/token_schemes.py's
schemes). (tests/test_train_pretrained.py and tests/test_compress.py cover these for BERT.)"""

import json
import re

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

import compress
import evaluate
import export
import predict
import train
from models import load_end_to_end_model
from run_folder import saved_run
from tests.helpers import pretrained_args
from tests.lab_server import predict as ask
from tests.lab_server import running_lab
from tests.models.int8_round_trip import TEXTS, quantized_round_trip

# Tokenizers other than WordPiece (their words and specials are read their own way), then
# the WordPiece families whose encoders are not BERT's (DistilBERT's names, no token types;
# ELECTRA's embedding projection).
SPACE_MARKED = ["roberta", "xlm-roberta"]
FAMILIES = [*SPACE_MARKED, "distilbert", "electra"]
SPACE_MARKS = ("Ġ", "▁")
TEXT = "A truly wonderful film, loved it!"


def assert_words_of(text, words):
    """The words read from a text are its words ("film" and "," apart), one by one or the
    unknown token (the tiny WordPiece vocabulary spells few), in any case (WordPiece's
    lowercases), all of them or the first ones where the cap cut the text (the last one
    perhaps inside); none carries a space mark or is a special token."""
    expected = [word.casefold() for word in re.findall(r"\w+|[^\w\s]", text)]
    assert 0 < len(words) <= len(expected), (text, words)
    for word, wanted in zip(words[:-1], expected):
        assert word in ("[UNK]", "<unk>") or word.casefold() == wanted, (text, words)
    last, wanted = words[-1].casefold(), expected[len(words) - 1]
    assert last in ("[unk]", "<unk>") or wanted.startswith(last), (text, words)


def is_space_marked(folder):
    return json.loads((folder / "config.json").read_text())["model_type"] in SPACE_MARKED


@pytest.fixture(scope="module", params=FAMILIES)
def family_run(request, tmp_path_factory, data_file, hf_checkpoint):
    """(run folder, checkpoint folder): the tiny checkpoint fine-tuned one epoch."""
    folder = hf_checkpoint(request.param)
    root = tmp_path_factory.mktemp(request.param)
    assert train.main(pretrained_args(root, data_file, folder, "training.epochs=1")) == 0
    return root / "tiny", folder


def test_int8_and_the_saved_model_predict_as_the_run(family_run, tmp_path):
    run_dir, _ = family_run
    _, before, after, reloaded = quantized_round_trip(run_dir, tmp_path)
    np.testing.assert_allclose(after, before, atol=0.02)
    np.testing.assert_array_equal(np.asarray(reloaded(TEXTS, training=False)), after)
    assert export.main([str(run_dir), "--out", str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served"))
    outputs = served.signatures["serving_default"](tf.constant(list(TEXTS)))["probabilities"]
    expected = np.asarray(load_end_to_end_model(run_dir / "model.keras")(TEXTS, training=False))
    np.testing.assert_allclose(outputs.numpy(), expected, atol=1e-5)


def test_the_attention_export_shows_the_checkpoints_own_tokens(family_run):
    run_dir, folder = family_run
    if not is_space_marked(folder):
        pytest.skip("WordPiece words: tests/test_train_pretrained.py, on BERT")
    assert evaluate.main([str(run_dir), "--export-attention", "2", "--heads", "10"]) == 0
    manifest = pd.read_json(run_dir / "attention" / "test" / "manifest.jsonl", lines=True)
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text, tokens in zip(manifest["text"], manifest["tokens"]):
        reference.enable_truncation(len(tokens))  # the run's cap cut the text
        assert tokens == reference.encode(text).tokens  # <s> ... </s>, the checkpoint's pieces
    for text, words in zip(manifest["text"], manifest["words"]):
        assert_words_of(text, words)
    heads = json.loads((run_dir / "eval" / "test" / "heads.json").read_text())
    assert len(heads["heads"]) == 2 * 4 and all(
        np.isfinite(h["importance"]) for h in heads["heads"]
    )
    # Every text starts with <s> and ends with </s>: each head puts some weight on both.
    assert all(h["to_cls"] > 0 and h["to_sep"] > 0 for h in heads["heads"])


def test_explanations_the_live_lab_and_tokens_read_the_checkpoints_words(family_run, capsys):
    run_dir, folder = family_run
    if not is_space_marked(folder):
        pytest.skip("WordPiece words: tests/test_train_pretrained.py, on BERT")
    capsys.readouterr()
    assert predict.main([str(run_dir), TEXT, "--explain", "--top", "100", "--json"]) == 0
    [prediction] = json.loads(capsys.readouterr().out)["predictions"]
    ranked = sorted(prediction["tokens"], key=lambda word: word["position"])
    words = [word["token"] for word in ranked]
    assert len(words) == 8
    assert_words_of(TEXT, words)
    assert any(len(word["pieces"]) > 1 for word in ranked)  # a tiny vocabulary splits words
    with running_lab([run_dir]) as url:
        [answer] = ask(url, texts=[TEXT], method=prediction["explanation_method"])["answers"]
    assert answer["view"]["words"] == words
    assert [word["token"] for word in answer["tokens"]] == [
        word["token"] for word in prediction["tokens"]
    ]
    assert evaluate.main([str(run_dir), "--tokens", "--min-count", "3"]) == 0
    report = json.loads((run_dir / "eval" / "test" / "tokens.json").read_text())
    relied_on = [entry["word"] for entries in report["classes"].values() for entry in entries]
    assert relied_on and not any(word.startswith(SPACE_MARKS) or " " in word for word in relied_on)


def test_top_blocks_and_a_pruned_copy_run_on_the_family(family_run, tmp_path, data_file):
    run_dir, folder = family_run
    args = pretrained_args(
        tmp_path, data_file, folder, "model.fine_tune=top_blocks", "model.fine_tune.blocks=1"
    )
    assert train.main([*args, "--set", "training.epochs=1"]) == 0
    top = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    np.testing.assert_allclose(np.asarray(top(TEXTS)).sum(axis=1), 1.0, atol=1e-5)
    assert compress.main([str(run_dir), "--prune-heads", "2"]) == 0
    original, pruned = saved_run.load_run(run_dir), saved_run.load_run(f"{run_dir}_pruned")
    report = json.loads((pruned.run_dir / "compress.json").read_text())
    mask = np.ones((2, 4), "float32")
    for layer, head in report["pruned_heads"]:
        mask[layer, head] = 0.0
    ids = np.asarray(original.parts[0](np.array(TEXTS)))
    np.testing.assert_allclose(
        np.asarray(pruned.model(np.array(TEXTS))),
        np.asarray(original.parts[1](ids, head_mask=mask)),
        atol=1e-5,
    )


@pytest.mark.parametrize("model_type", FAMILIES)
def test_lora_adapts_the_family(tmp_path, data_file, hf_checkpoint, model_type):
    args = pretrained_args(
        tmp_path, data_file, hf_checkpoint(model_type), "model.fine_tune=lora", "training.epochs=1"
    )
    assert train.main(args) == 0
    model = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    probabilities = np.asarray(model(TEXTS, training=False))
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert (tmp_path / "tiny" / "adapter.weights.h5").is_file()
