import numpy as np
import pytest
from PIL import Image

from inspection.rendering.heatmaps import (
    MAX_IMAGE_PIXELS,
    attention_image_size,
    pixels_per_token,
    plot_attention_heads,
    plot_layer_averages,
    token_windows,
)


def random_scores(num_layers, num_heads, num_tokens, seed=0):
    scores = np.random.default_rng(seed).random((num_layers, num_heads, num_tokens, num_tokens))
    return scores / scores.sum(axis=-1, keepdims=True)


def test_image_size_literal_values():
    # 120 + 3 panels of 160 + 2 gaps of 30 + 20 = 680; 60 + 2 * 160 + 30 + 120 = 530.
    assert attention_image_size(2, 3, 5, 5) == (680, 530)
    # 128 tokens get 10 pixels each: 120 + 1280 + 20, 60 + 1280 + 120.
    assert attention_image_size(1, 1, 128, 128) == (1420, 1460)


def test_grid_and_layer_average_pngs_have_the_expected_size(tmp_path):
    tokens = ["the", "film", "<b>was</b>", "good", "a-very-long-token-name"]
    heads = plot_attention_heads(random_scores(2, 3, 5), tokens, tmp_path / "x", title="x")
    layers = plot_layer_averages(random_scores(2, 3, 5), tokens, tmp_path / "x")
    assert [path.name for path in heads + layers] == ["x_heads.png", "x_layers.png"]
    assert Image.open(heads[0]).size == (680, 530)  # 2 layers x 3 heads
    assert Image.open(layers[0]).size == attention_image_size(1, 2, 5, 5) == (490, 340)


def test_long_examples_are_cut_into_windows(tmp_path):
    paths = plot_attention_heads(
        random_scores(1, 2, 6), [f"t{i}" for i in range(6)], tmp_path / "long", window_size=4
    )
    assert [path.name for path in paths] == [
        "long_heads_q0-4_k0-4.png",
        "long_heads_q0-4_k4-6.png",
        "long_heads_q4-6_k0-4.png",
        "long_heads_q4-6_k4-6.png",
    ]
    assert Image.open(paths[1]).size == attention_image_size(1, 2, 4, 2)


def test_token_windows():
    assert token_windows(128) == [(0, 128)]
    assert token_windows(300) == [(0, 128), (128, 256), (256, 300)]
    assert token_windows(0) == []


def test_scores_must_match_tokens(tmp_path):
    with pytest.raises(ValueError, match="for the 2 tokens"):
        plot_attention_heads(random_scores(1, 1, 3), ["a", "b"], tmp_path / "x")


def test_many_heads_get_fewer_pixels_a_token_within_the_budget():
    # 2 x 4 heads keep 10 pixels a token up to a full 128-token window (5350 x 2770).
    assert pixels_per_token(2, 4, 128, 128) == 10
    assert attention_image_size(2, 4, 128, 128) == (5350, 2770)
    # MiniLM's 6 x 12: short texts keep 10, longer ones get fewer, and never past the budget.
    assert pixels_per_token(6, 12, 20, 20) == 10
    assert attention_image_size(6, 12, 20, 20) == (2870, 1530)
    assert pixels_per_token(6, 12, 64, 64) == 6
    assert pixels_per_token(6, 12, 128, 128) == 3
    # 120 + 12 * 384 + 11 * 30 + 20 = 5078; 60 + 6 * 384 + 5 * 30 + 120 = 2634.
    assert attention_image_size(6, 12, 128, 128) == (5078, 2634)
    for length in range(1, 129, 7):
        width, height = attention_image_size(6, 12, length, length)
        assert width * height <= MAX_IMAGE_PIXELS


def test_a_grid_of_6_layers_by_12_heads_renders_at_its_size(tmp_path):
    tokens = ["[CLS]", "they", "play", "##ed", "well", "[SEP]"]
    heads = plot_attention_heads(random_scores(6, 12, 6), tokens, tmp_path / "m")
    layers = plot_layer_averages(random_scores(6, 12, 6), tokens, tmp_path / "m")
    assert Image.open(heads[0]).size == attention_image_size(6, 12, 6, 6) == (2390, 1290)
    assert Image.open(layers[0]).size == attention_image_size(1, 6, 6, 6) == (1250, 340)


def test_a_pruned_models_removed_heads_are_titled_and_left_out_of_the_layer_mean(
    tmp_path, monkeypatch
):
    from inspection.rendering import heatmaps

    scores = random_scores(2, 2, 3)
    scores[0, 0] = 0.0  # layer 0 keeps head 1 only
    drawn = []
    monkeypatch.setattr(
        heatmaps,
        "render_attention_png",
        lambda grid, rows, columns, titles, title: drawn.append((grid, titles)) or b"",
    )
    plot_attention_heads(scores, ["a", "b", "c"], tmp_path / "p")
    plot_layer_averages(scores, ["a", "b", "c"], tmp_path / "p")
    (_, head_titles), (averages, layer_titles) = drawn
    assert head_titles == [
        ["layer 0 head 0 (pruned)", "layer 0 head 1"],
        ["layer 1 head 0", "layer 1 head 1"],
    ]
    assert layer_titles == [["layer 0, mean of heads", "layer 1, mean of heads"]]
    np.testing.assert_allclose(averages[0, 0], scores[0, 1])  # head 1 alone, not half of it
    np.testing.assert_allclose(averages[0, 1], scores[1].mean(axis=0))
