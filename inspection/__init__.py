"""Looking inside a trained classifier: attention export, rollout, heatmaps, offline viewer.

The entry point is `export_attention`, its settings `ScoringOptions` and `WritingOptions`
(`engine.evaluation.export_run_attention` for a run folder); `load_attention` reads what it
writes; `show` puts the viewer of some texts inline in a notebook. Inside:

- `methods/`: what the numbers are: the attribution methods, attention rollout, their
  faithfulness, the attention heads' statistics and importance, predict's token ranking.
- `attention_file/`: the export's file format (docs/attention_format.md), its record of one
  example, its reader, writer and the upgrade of older versions.
- `rendering/`: what people look at: heatmap PNGs, the offline viewer (`viewer_page/`),
  the same viewer inline in a notebook (`show`), BertViz JSON and the TensorBoard images
  callback.
- `attention_export` (with `export_attributions` and `export_checks`): the export itself,
  from a classifier and texts to a folder.

Attention plumbing (trimming to real tokens, the class token, stacking the blocks' scores)
lives in `attention_tokens`; which word each of a tokenizer's pieces belongs to, and which
tokens are special, in `token_schemes`. Nothing here writes a run folder: the drivers that
do are `engine.evaluation`'s (`show` loads a run by its path through `run_folder`).
"""

from inspection.attention_export import (
    ScoringOptions,
    WritingOptions,
    export_attention,
    find_text_vectorization,
)
from inspection.attention_file.format import FORMAT_VERSION
from inspection.attention_file.reader import AttentionFile, load_attention, save_attention
from inspection.attention_file.record import AttentionRecord
from inspection.attention_file.writer import AttentionFileWriter
from inspection.methods.rollout import attention_rollout, rollout_importance
from inspection.methods.token_ranking import Prediction, RankedWord, rank_tokens
from inspection.rendering.attention_images_callback import AttentionImagesCallback
from inspection.rendering.bertviz_export import BERTVIZ_SNIPPET, write_bertviz_json
from inspection.rendering.heatmaps import (
    attention_image_size,
    plot_attention_heads,
    plot_layer_averages,
)
from inspection.rendering.notebook import NotebookView, show
from inspection.rendering.viewer import write_viewer
from inspection.token_schemes import TokenScheme, known_token_counts, token_scheme

__all__ = [
    "FORMAT_VERSION",
    "AttentionFile",
    "AttentionFileWriter",
    "AttentionImagesCallback",
    "AttentionRecord",
    "NotebookView",
    "Prediction",
    "RankedWord",
    "ScoringOptions",
    "TokenScheme",
    "WritingOptions",
    "BERTVIZ_SNIPPET",
    "attention_image_size",
    "attention_rollout",
    "export_attention",
    "find_text_vectorization",
    "known_token_counts",
    "load_attention",
    "plot_attention_heads",
    "plot_layer_averages",
    "rank_tokens",
    "rollout_importance",
    "save_attention",
    "show",
    "token_scheme",
    "write_bertviz_json",
    "write_viewer",
]
