"""bench/bench_pretrained_encoder.py on tiny checkpoints (BERT written by hand, DistilBERT
and RoBERTa randomly initialised by `transformers`): the equality gate, the table's rows,
the FLOP count, and its command line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.training.starting_weights.checkpoints import read_checkpoint
from engine.training.starting_weights.tokenizer_files import read_tokenizer
from tests.models.bert_reference import write_tiny_checkpoint

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import bench_pretrained_encoder as bench  # noqa: E402
import random_checkpoint  # noqa: E402

DIFFERENCE = re.compile(
    r"max \|ours - keras-hub\| of the last hidden states, real tokens: "
    r"(\S+) .*as shipped \((\w+) GELU\): (\S+)"
)


def table_rows(output):
    """The timing table's rows, each as its cells (family, length, mode, ours, ...)."""
    rows = [
        line.split("|")[1:-1] for line in output.splitlines() if re.match(r"\| \w+ \| \d+ \|", line)
    ]
    return [[cell.strip() for cell in row] for row in rows]


def check_rows(rows, family):
    """A row per (length, mode) of --quick, naming `family`, with consistent numbers."""
    assert [(row[0], int(row[1]), row[2]) for row in rows] == [
        (family, 8, "inference"),
        (family, 8, "train step"),
        (family, 16, "inference"),
        (family, 16, "train step"),
    ]
    for _, _, _, ours, theirs, ratio, rate, share in rows:
        ours, theirs, ratio = float(ours), float(theirs), float(ratio)
        assert ours > 0 and theirs > 0 and float(rate) > 0 and share.endswith("%")
        # The ratio of the unrounded medians: within the milliseconds' rounding (0.05).
        assert (
            (ours - 0.05) / (theirs + 0.05) - 0.005
            <= ratio
            <= (ours + 0.05) / (theirs - 0.05) + 0.005
        )


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("bert"), num_layers=2)


def test_quick_run_checks_the_encoders_agree_and_prints_a_row_per_length_and_mode(folder, capsys):
    assert bench.main(["--quick", "--checkpoint", str(folder)]) == 0
    output = capsys.readouterr().out
    difference, shipped_gelu, shipped = DIFFERENCE.search(output).groups()
    assert float(difference) <= bench.TOLERANCE
    # keras-hub's own tanh GELU is another function: the reason it is swapped for the exact.
    assert shipped_gelu == "tanh" and float(shipped) > bench.TOLERANCE
    check_rows(table_rows(output), "BERT")
    assert f"BERT, {folder.name}: 2 blocks" in output and "keras-hub's BertBackbone" in output
    assert "CPU cores, TensorFlow" in output and "peak: float32 matmul 256x256" in output


@pytest.mark.parametrize(
    ("family", "title", "backbone"),
    [("distilbert", "DistilBERT", "DistilBertBackbone"), ("roberta", "RoBERTa", "RobertaBackbone")],
)
def test_quick_run_of_a_random_checkpoint_compares_the_familys_backbone(
    family, title, backbone, capsys
):
    assert bench.main(["--quick", "--family", family, "--random-checkpoint", "tiny"]) == 0
    output = capsys.readouterr().out
    difference, shipped_gelu, shipped = DIFFERENCE.search(output).groups()
    # These backbones ship the exact GELU: the same function without any change.
    assert shipped_gelu == "exact" and float(shipped) <= bench.TOLERANCE
    assert float(difference) <= bench.TOLERANCE
    assert f"{title}, random tiny checkpoint: 2 blocks, d_model 32" in output
    assert f"keras-hub's {backbone} with the exact GELU" in output
    check_rows(table_rows(output), title)


def test_roberta_ids_fed_to_keras_hub_unmapped_fail_the_check(capsys, monkeypatch):
    # Our id 0 is RoBERTa's <pad> (1): keras-hub fed our ids reads padding and <s> wrongly.
    monkeypatch.setattr(
        bench, "encoder_ids", lambda checkpoint, ids: dict.fromkeys(bench.ENCODERS, ids)
    )
    assert bench.main(["--quick", "--family", "roberta", "--random-checkpoint", "tiny"]) == 1
    output = capsys.readouterr().out
    assert "not the same function, nothing timed" in output and "| length |" not in output


def test_encoders_that_differ_stop_the_bench_before_any_timing(folder, capsys, monkeypatch):
    # Left with keras-hub's tanh GELU, the two no longer compute the same function.
    monkeypatch.setattr(bench, "set_gelu", lambda backbone, approximate: None)
    assert bench.main(["--quick", "--checkpoint", str(folder)]) == 1
    output = capsys.readouterr().out
    assert "not the same function, nothing timed" in output
    assert "| length |" not in output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--family", "electra"], "keras-hub has no converter of ELECTRA's Hugging Face folders"),
        (
            ["--family", "roberta"],
            "--family roberta needs --checkpoint FOLDER or --random-checkpoint",
        ),
        (["--family", "distilbert", "--checkpoint", "{folder}"], "is a bert checkpoint"),
    ],
)
def test_a_family_keras_hub_cannot_compare_is_refused(folder, capsys, arguments, message):
    with pytest.raises(SystemExit) as stopped:
        bench.main([argument.format(folder=folder) for argument in arguments])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_a_base_vocabulary_is_filled_to_size_and_spells_the_sentences(tmp_path, family):
    # The tokenizer alone (no 110M-weight model): the size sets the embedding's, and the
    # equality check's sentences must be real tokens, not unknowns.
    wanted = random_checkpoint.SIZES["base"]["vocabulary"][family]
    if family == "roberta":
        size = random_checkpoint._write_bpe_tokenizer(tmp_path, bench.SENTENCES, wanted)
    else:
        size = random_checkpoint._write_word_piece(tmp_path, bench.SENTENCES, wanted)
    kind = "ByteLevelBPE" if family == "roberta" else "WordPiece"
    vocabulary, _ = read_tokenizer(tmp_path, kind)
    assert size == len(vocabulary) == wanted
    assert len(set(vocabulary)) == wanted
    known = {"the", "film", "cafe", "!", "'"} if family == "bert" else {"Ġthe", "Ġfilm"}
    assert known <= set(vocabulary)


def test_step_flops_counts_the_matmuls_by_hand(folder):
    # L=2, D=16, N·H=16, I=32, T=8: projections 8·8·16·16 = 16384, scores and weighted sum
    # 4·16·8² = 4096, feed-forward 4·8·16·32 = 16384; per block 36864. Head 2·16·2 = 64.
    flops = bench.step_flops(read_checkpoint(folder), batch=3, length=8)
    assert flops == {"inference": 3 * 2 * 36864, "train step": 3 * (3 * 2 * 36864 + 3 * 64)}


def test_a_length_past_the_checkpoints_positions_is_refused(folder, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench.main(["--checkpoint", str(folder), "--lengths", "65"])
    assert stopped.value.code == 2
    assert (
        "--lengths must be at most the checkpoint's 64 positions. Received: 65"
        in capsys.readouterr().err
    )


def test_help_runs_as_a_script():
    result = subprocess.run(
        [sys.executable, "bench/bench_pretrained_encoder.py", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "--keras-hub-gelu" in result.stdout
    assert "--family" in result.stdout and "--random-checkpoint" in result.stdout
