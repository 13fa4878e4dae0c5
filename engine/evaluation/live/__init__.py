"""The live lab (serve.py): runs answering texts typed on a page, over HTTP.

- `live_run`: `LiveRun`, a run as the lab serves it: its description, panels and answers
  (prediction, words by a method, and the viewer's example with its maps when asked).
- `api`: what one POST /api/predict may ask and cost (`RequestLimits`, `check_texts`),
  each refusal a one-line `RequestError`, and its JSON answer (`answer_request`).
- `lab_server`: `LabServer`, the HTTP server: the page, /api/runs and /api/predict, with
  bounded workers, a socket timeout, a Host allow list and a hashed script policy.
"""

from engine.evaluation.live.api import (
    MAX_CHARACTERS,
    MAX_TEXTS,
    MIB,
    RequestError,
    RequestLimits,
    RequestTooLarge,
    answer_request,
    check_texts,
)
from engine.evaluation.live.lab_server import MAX_BODY_BYTES, LabServer
from engine.evaluation.live.live_run import PREDICTION_BATCH, LiveRun, page_data, run_names

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_CHARACTERS",
    "MAX_TEXTS",
    "MIB",
    "PREDICTION_BATCH",
    "LabServer",
    "LiveRun",
    "RequestError",
    "RequestLimits",
    "RequestTooLarge",
    "answer_request",
    "check_texts",
    "page_data",
    "run_names",
]
