"""Inspection of a finished run, into its folder: the drivers that read a run (`runs`) and
write what `inspection` computes next to it, for evaluate.py, predict.py and compress.py.

- `attention`: attention exports into `RUN_DIR/attention/<source>/` (`evaluate.py
  --export-attention`), with the split's faithfulness and heads when measured.
- `export_blocks`: what an export reads from the run's other files (faithfulness.json,
  heads.json, compress.json).
- `run_evaluation`: what `evaluate.py` does once its arguments hold: each run evaluated
  into `RUN_DIR/eval/<name>/` with the measurements (`measurements`), the suspects and the
  export, then the results printed.
- `faithfulness`: every attribution method's faithfulness on a split (`evaluate.py
  --faithfulness`), and the method predict.py trusts (`explanation_method`).
- `heads`: every attention head across a split (`evaluate.py --heads`, `compress.py
  --prune-heads`).

`inspection` itself takes models, texts and arrays and writes where it is told; it never
imports this package.
"""

from engine.evaluation.attention import (
    ExportRequest,
    check_example_ids,
    check_export_target,
    export_dir,
    export_evaluation_attention,
    export_name,
    export_run_attention,
    export_texts_attention,
)
from engine.evaluation.export_blocks import ExportError

__all__ = [
    "ExportError",
    "ExportRequest",
    "check_example_ids",
    "check_export_target",
    "export_dir",
    "export_evaluation_attention",
    "export_name",
    "export_run_attention",
    "export_texts_attention",
]
