"""The accuracy bench's cost accounting: analytic FLOPs, real tokens, the summary table."""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from config import ModelConfig, TextConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import accuracy_report  # noqa: E402
import bench_accuracy  # noqa: E402
from train_cost import epoch_cost, forward_flops  # noqa: E402

MODEL = ModelConfig(d_model=4, num_heads=2, num_layers=1, intermediate_dim=8)


def test_forward_flops_counts_the_matmuls_by_hand():
    # T=3, D=4, N·K=4, I=8: projections 8·3·4·4 = 384, scores and weighted sum 4·4·9 = 144,
    # feed-forward 4·3·4·8 = 384; head 2·4·2 = 16. Per example 928.
    assert forward_flops(MODEL, num_classes=2, batch=1, length=3) == 928
    assert forward_flops(MODEL, 2, batch=5, length=3) == 5 * 928
    # Attention is quadratic in the length, the rest linear.
    two_layers = ModelConfig(d_model=4, num_heads=2, num_layers=2, intermediate_dim=8)
    assert forward_flops(two_layers, 2, 1, 3) == 2 * 912 + 16
    # The class token is one more position.
    cls = ModelConfig(d_model=4, num_heads=2, num_layers=1, intermediate_dim=8, pooling="cls")
    assert forward_flops(cls, 2, 1, 2) == forward_flops(MODEL, 2, 1, 3)
    # Local attention, blocks of 2 over T=3: T'=4 positions through the attention,
    # projections 8·4·4·4 = 512, scores and weighted sum 4·4·4·2 = 128, feed-forward 384.
    blocks = dataclasses.replace(MODEL, attention_block_size=2)
    assert forward_flops(blocks, 2, 1, 3) == 512 + 128 + 384 + 16
    # A text no longer than a block is one block: full attention's cost.
    assert forward_flops(dataclasses.replace(MODEL, attention_block_size=8), 2, 1, 3) == 928


def test_epoch_cost_counts_real_tokens_and_padded_shapes():
    batches = [(np.array([[5, 6, 0], [7, 0, 0]]), None), (np.array([[1, 2, 3, 4]]), None)]
    tokens, flops = epoch_cost(batches, MODEL, num_classes=2)
    assert tokens == 3 + 4
    assert flops == 3 * (forward_flops(MODEL, 2, 2, 3) + forward_flops(MODEL, 2, 1, 4))


def run(accuracy, seconds, wall):
    return {
        "test": {"accuracy": accuracy, "macro_f1": accuracy - 0.1},
        "validation": {"accuracy": accuracy},
        "wall_time_s": wall,
        "epochs": 2,
        "epoch_seconds": seconds,
        "real_tokens_per_epoch": 1000,
        "train_flops_per_epoch": 4e9,
    }


def test_summary_gives_mean_std_and_the_median_epoch_throughput():
    summary = accuracy_report.summarize(
        [run(0.90, [1.0, 3.0], 60), run(0.92, [2.0, 9.0], 120), None], peak=8e9
    )
    assert summary["seeds"] == 2
    assert summary["test_accuracy"]["mean"] == pytest.approx(91.0)
    assert summary["test_accuracy"]["std"] == pytest.approx(np.std([90, 92], ddof=1))
    assert summary["wall_time_s"] == 90
    assert summary["real_tokens_per_s"] == pytest.approx(1000 / 2.5)  # median of 1, 2, 3, 9
    assert summary["share_of_peak"] == pytest.approx(4e9 / 2.5 / 8e9)
    table = accuracy_report.format_table({"bbc_news": {"ours": summary, "keras_io_example": None}})
    assert (
        "| bbc_news | ours | 91.00 ± 1.41 | 81.00 ± 1.41 | 2/2 | 90 s | 400 | 1.6 (20.0%) |"
        in table
    )
    assert accuracy_report.summarize([None], peak=1.0) is None


def test_the_keras_io_example_sets_every_text_and_model_field_so_no_recipe_leaks_in():
    set_fields = {override.split("=")[0] for override in bench_accuracy.KERAS_IO_EXAMPLE}
    for section in (TextConfig, ModelConfig):
        assert {
            f"{section.section}.{item.name}" for item in dataclasses.fields(section)
        } <= set_fields
