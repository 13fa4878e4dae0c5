"""Looking inside a trained classifier: attention export, rollout, heatmaps, offline viewer.

The entry point is `export_attention` (`export_run_attention` for a run folder);
`load_attention` reads what it writes. Attention plumbing (trimming to real tokens, the
class token, stacking the blocks' scores) lives in `attention_tokens`; which word each
WordPiece piece belongs to, and which tokens are special, in `word_pieces`.
"""

from inspection.attention_file import AttentionFile, load_attention, save_attention
from inspection.attention_file_writer import AttentionFileWriter
from inspection.attention_format import FORMAT_VERSION
from inspection.attention_images_callback import AttentionImagesCallback
from inspection.attention_record import AttentionRecord
from inspection.bertviz_export import BERTVIZ_SNIPPET, write_bertviz_json
from inspection.export import export_attention, find_text_vectorization
from inspection.heatmaps import (
    attention_image_size,
    plot_attention_heads,
    plot_layer_averages,
)
from inspection.rollout import attention_rollout, rollout_importance
from inspection.run_export import (
    ExportError,
    check_example_ids,
    check_export_target,
    export_dir,
    export_evaluation_attention,
    export_run_attention,
    export_texts_attention,
)
from inspection.token_ranking import RankedWord, rank_tokens
from inspection.viewer import write_viewer
from inspection.word_pieces import is_word_piece, known_token_counts, word_index, words_of

__all__ = [
    "FORMAT_VERSION",
    "AttentionFile",
    "AttentionFileWriter",
    "AttentionImagesCallback",
    "AttentionRecord",
    "ExportError",
    "RankedWord",
    "BERTVIZ_SNIPPET",
    "attention_image_size",
    "attention_rollout",
    "check_example_ids",
    "check_export_target",
    "export_dir",
    "export_evaluation_attention",
    "export_run_attention",
    "export_texts_attention",
    "export_attention",
    "find_text_vectorization",
    "is_word_piece",
    "known_token_counts",
    "load_attention",
    "plot_attention_heads",
    "plot_layer_averages",
    "rank_tokens",
    "rollout_importance",
    "save_attention",
    "word_index",
    "words_of",
    "write_bertviz_json",
    "write_viewer",
]
