"""Attention heatmap PNGs: a layers x heads grid and a head-averaged row per example.

Letter legend: L layers, N heads, T real tokens, Q query tokens and K key tokens in a window.

Images have a fixed pixel layout (see `attention_image_size`): each panel gives every
token `PIXELS_PER_TOKEN` pixels, so token labels stay readable up to `WINDOW_SIZE` tokens.
Longer examples are cut into windows of `WINDOW_SIZE` queries x `WINDOW_SIZE` keys, one
PNG per pair of windows, so no attention weight is left out. A grid too big for
`MAX_IMAGE_PIXELS` at that size (MiniLM's 6 layers x 12 heads past about 50 tokens) gets
fewer pixels a token, and no token labels below `MIN_LABELLED_PIXELS`: the head-averaged
PNG, one panel per layer, keeps them.

Layers and heads count from 0, as in heads.json and compress.json; a pruned model's removed
heads (maps of 0) are titled so and left out of the layer averages.
"""

import io
import pathlib

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from inspection.methods.rollout import head_average
from tokenization.pairs import PAIR_MARK

WINDOW_SIZE = 128
DPI = 100
PIXELS_PER_TOKEN = 10
MIN_PANEL_PIXELS = 160
# Margins in pixels: left and bottom hold the token labels, top the titles.
MARGIN_LEFT = 120
MARGIN_BOTTOM = 120
MARGIN_TOP = 60
MARGIN_RIGHT = 20
PANEL_GAP = 30
MAX_LABEL_CHARACTERS = 14
# About 64 MB of RGBA while drawing: 2 layers x 4 heads at 128 tokens (5350 x 2770) still
# gets PIXELS_PER_TOKEN; 6 x 12 at 128 tokens gets 3 (5078 x 2634).
MAX_IMAGE_PIXELS = 16_000_000
# Labels at 0.9 of a token's pixels in points are unreadable below about 4 points.
MIN_LABELLED_PIXELS = 6


def attention_image_size(num_rows, num_columns, num_queries, num_keys):
    """Returns the (width, height) in pixels of a grid of attention panels.

    Example:
    >>> attention_image_size(2, 3, 5, 5)
    (680, 530)
    >>> attention_image_size(6, 12, 128, 128)  # MiniLM's heads: 3 pixels a token
    (5078, 2634)
    """
    pixels = pixels_per_token(num_rows, num_columns, num_queries, num_keys)
    return _layout(num_rows, num_columns, num_queries, num_keys, pixels)[:2]


def pixels_per_token(num_rows, num_columns, num_queries, num_keys):
    """Pixels a token gets in each panel: `PIXELS_PER_TOKEN`, fewer for a grid whose image
    would have more than `MAX_IMAGE_PIXELS` (at least 1).

    Example:
    >>> pixels_per_token(2, 4, 128, 128), pixels_per_token(6, 12, 64, 64)
    (10, 6)
    """
    for pixels in range(PIXELS_PER_TOKEN, 1, -1):
        width, height, _, _ = _layout(num_rows, num_columns, num_queries, num_keys, pixels)
        if width * height <= MAX_IMAGE_PIXELS:
            return pixels
    return 1


def _layout(num_rows, num_columns, num_queries, num_keys, pixels):
    """(width, height, panel_width, panel_height) in pixels at `pixels` a token."""
    panel_width = max(MIN_PANEL_PIXELS, num_keys * pixels)
    panel_height = max(MIN_PANEL_PIXELS, num_queries * pixels)
    width = MARGIN_LEFT + num_columns * panel_width + (num_columns - 1) * PANEL_GAP + MARGIN_RIGHT
    height = MARGIN_TOP + num_rows * panel_height + (num_rows - 1) * PANEL_GAP + MARGIN_BOTTOM
    return width, height, panel_width, panel_height


def token_windows(num_tokens, window_size=WINDOW_SIZE):
    """Splits `range(num_tokens)` into (start, stop) windows of at most `window_size`.

    Example:
    >>> token_windows(200)
    [(0, 128), (128, 200)]
    """
    starts = range(0, num_tokens, window_size)
    return [(start, min(start + window_size, num_tokens)) for start in starts]


def render_attention_png(matrices, query_tokens, key_tokens, panel_titles, title=""):
    """Draws a grid of attention panels and returns the PNG bytes.

    Args:
        matrices: float array (rows, columns, Q, K).
        query_tokens: Q labels for the y axis (left column only).
        key_tokens: K labels for the x axis (bottom row only).
        panel_titles: nested list (rows, columns) of str.
        title: figure title.

    Returns:
        PNG bytes of size `attention_image_size(rows, columns, Q, K)`; token labels only
        when a token gets at least `MIN_LABELLED_PIXELS` (see `pixels_per_token`).
    """
    matrices = np.asarray(matrices, dtype=np.float32)
    # The pair mark as the separator it stands for: the plots' font has no glyph for it.
    query_tokens, key_tokens = (
        [str(token).replace(PAIR_MARK, "[SEP]") for token in tokens]
        for tokens in (query_tokens, key_tokens)
    )
    num_rows, num_columns, num_queries, num_keys = matrices.shape
    pixels = pixels_per_token(num_rows, num_columns, num_queries, num_keys)
    width, height, panel_width, panel_height = _layout(
        num_rows, num_columns, num_queries, num_keys, pixels
    )
    # About 90% of the pixels a token gets, in points, capped for short sequences.
    label_points = min(
        8.0,
        0.9 * min(panel_width / max(num_keys, 1), panel_height / max(num_queries, 1)) * 72 / DPI,
    )
    labelled = pixels >= MIN_LABELLED_PIXELS

    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.suptitle(title, fontsize=10, y=1 - 6 / height, va="top")
    figure.text(
        0.5,
        1 - 24 / height,
        "rows: query tokens, columns: key tokens; colour from 0 to each panel's largest weight",
        fontsize=7,
        ha="center",
        va="top",
    )
    for row in range(num_rows):
        for column in range(num_columns):
            left = MARGIN_LEFT + column * (panel_width + PANEL_GAP)
            top = MARGIN_TOP + row * (panel_height + PANEL_GAP)
            axes = figure.add_axes(
                (
                    left / width,
                    1 - (top + panel_height) / height,
                    panel_width / width,
                    panel_height / height,
                )
            )
            matrix = matrices[row, column]
            # Each panel uses its own scale: long sequences spread weight thinly, and a shared
            # 0..1 scale would hide their structure.
            axes.imshow(
                matrix,
                cmap="viridis",
                vmin=0.0,
                vmax=max(float(matrix.max()), 1e-9),
                aspect="auto",
                interpolation="nearest",
            )
            axes.set_title(panel_titles[row][column], fontsize=7, pad=3)
            # Labels only on the outer panels: ticks are slow to draw and the panels share tokens.
            _label_axes(
                axes,
                matrix.shape,
                query_tokens if column == 0 and labelled else None,
                key_tokens if row == num_rows - 1 and labelled else None,
                label_points,
            )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _label_axes(axes, shape, query_tokens, key_tokens, label_points):
    """Token labels on the y (queries) and x (keys) axes of a panel of `shape` (Q, K); None:
    no ticks on that axis."""
    num_queries, num_keys = shape
    if query_tokens is not None:
        axes.set_yticks(
            range(num_queries),
            [_short(token) for token in query_tokens],
            fontsize=label_points,
        )
    else:
        axes.set_yticks([])
    if key_tokens is not None:
        axes.set_xticks(
            range(num_keys),
            [_short(token) for token in key_tokens],
            fontsize=label_points,
            rotation=90,
        )
    else:
        axes.set_xticks([])
    axes.tick_params(length=0, pad=1)


def plot_attention_heads(attention_scores, tokens, path_prefix, title="", window_size=WINDOW_SIZE):
    """Writes the layers x heads grid of one example, one PNG per pair of windows.

    Args:
        attention_scores: float array (L, N, T, T) over real tokens.
        tokens: T token strings.
        path_prefix: path without extension, e.g. `heatmaps/00012`; files are
            `<prefix>_heads.png`, or `<prefix>_heads_q<a>-<b>_k<c>-<d>.png` when T
            is longer than `window_size`.
        title: figure title.
        window_size: tokens per window.

    Returns:
        The list of written paths.

    Example:
    >>> plot_attention_heads(np.full((2, 3, 2, 2), 0.5), ["a", "b"], "/tmp/x")  # doctest: +SKIP
    [PosixPath('/tmp/x_heads.png')]
    """
    scores = _check_scores(attention_scores, tokens)
    present = scores.any(axis=(2, 3)) | (scores.shape[2] == 0)  # (L, N); removed: all 0
    panel_titles = [
        [
            f"layer {layer} head {head}" + ("" if real else " (pruned)")
            for head, real in enumerate(heads)
        ]
        for layer, heads in enumerate(present)
    ]
    return _write_windows(scores, tokens, panel_titles, path_prefix, "heads", title, window_size)


def plot_layer_averages(attention_scores, tokens, path_prefix, title="", window_size=WINDOW_SIZE):
    """Writes one row of head-averaged maps, one panel per layer, as `<prefix>_layers*.png`.

    Args and returns as `plot_attention_heads`.
    """
    scores = _check_scores(attention_scores, tokens)
    averaged = head_average(scores)[np.newaxis]  # (1, L, T, T)
    panel_titles = [[f"layer {layer}, mean of heads" for layer in range(scores.shape[0])]]
    return _write_windows(averaged, tokens, panel_titles, path_prefix, "layers", title, window_size)


def _write_windows(grid, tokens, panel_titles, path_prefix, kind, title, window_size):
    path_prefix = pathlib.Path(path_prefix)
    path_prefix.parent.mkdir(parents=True, exist_ok=True)
    windows = token_windows(len(tokens), window_size)
    paths = []
    for query_start, query_stop in windows:
        for key_start, key_stop in windows:
            tile = grid[:, :, query_start:query_stop, key_start:key_stop]  # (rows, cols, Q, K)
            if len(windows) == 1:
                path = path_prefix.parent / f"{path_prefix.name}_{kind}.png"
                tile_title = title
            else:
                window_name = f"q{query_start}-{query_stop}_k{key_start}-{key_stop}"
                path = path_prefix.parent / f"{path_prefix.name}_{kind}_{window_name}.png"
                tile_title = (
                    f"{title}  (queries {query_start}-{query_stop - 1}, "
                    f"keys {key_start}-{key_stop - 1})"
                )
            path.write_bytes(
                render_attention_png(
                    tile,
                    tokens[query_start:query_stop],
                    tokens[key_start:key_stop],
                    panel_titles,
                    tile_title,
                )
            )
            paths.append(path)
    return paths


def _check_scores(attention_scores, tokens):
    scores = np.asarray(attention_scores, dtype=np.float32)
    if scores.ndim != 4 or scores.shape[2:] != (len(tokens), len(tokens)):
        raise ValueError(
            f"attention_scores must have shape (num_layers, num_heads, {len(tokens)}, "
            f"{len(tokens)}) for the {len(tokens)} tokens. Received: shape={scores.shape}"
        )
    return scores


def _short(token):
    token = str(token)
    if len(token) > MAX_LABEL_CHARACTERS:
        return token[: MAX_LABEL_CHARACTERS - 1] + "…"
    return token
