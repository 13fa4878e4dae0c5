"""What the live lab (serve.py) knows of the runs it serves and answers about a text.

Each run is loaded once. `LiveRun.answer` gives per text what `predict.py --json` prints
(label, probabilities, the words ranked by an attribution method) and the example as the
viewer draws it (`view`: pieces, words, the method's scores and, when asked, every layer
and head's attention), from one forward pass and the method's own pass, both compiled
once per run (`inspection.methods.attribution`). A run answers one request at a time,
under its own lock: its `RecordMaker` keeps a batch's scores between two calls, and one
request already uses every core.

Texts longer than the model reads are cut as predict.py cuts them, and the answer says
so (`truncated`, `token_count`); requests over the limits below are refused with a
`RequestError` naming the limit (docs/live_lab.md).

Example:
>>> # lab = LiveRun("default", saved_run.load_run("runs/default"))
>>> # [answer] = lab.answer(["a wonderful film"], method="rollout", attention=True)
>>> # answer["predicted_label"], answer["view"]["words"]
"""

import threading
from pathlib import Path

import numpy as np

from engine.evaluation.dataset_panel import dataset_block
from engine.evaluation.export_blocks import (
    ExportError,
    faithfulness_block,
    heads_block,
    kept_heads_of,
)
from engine.evaluation.faithfulness import explanation_method
from inspection.attention_records import RecordMaker
from inspection.attention_tokens import check_kept_heads, trimmed_to_longest
from inspection.methods.attribution import METHODS
from inspection.methods.forward_passes import probabilities
from inspection.methods.token_ranking import Prediction, ranked_words
from inspection.rendering.viewer import example_data
from inspection.word_pieces import known_token_counts

MAX_TEXTS = 64  # per request
# Texts per forward pass. The prediction alone takes them in order of length: on 2 cores 32
# texts of 5 to 40 words take 87 ms in passes of 8, 104 ms of 16 and 129 ms in one (MiniLM,
# 3 blocks).
PREDICTION_BATCH = 8
MAX_CHARACTERS = 10_000  # per text: about 2,000 words, past any model's cap (512)


class RequestError(ValueError):
    """A request the lab refuses; the message is one line, sent back as JSON."""


class LiveRun:
    """One run as the lab serves it.

    Args:
        name: what requests call it (`"run"`).
        run: a loaded `saved_run.Run`.
    """

    def __init__(self, name, run):
        self.name = name
        self.run = run
        self.kept_heads = check_kept_heads(
            kept_heads_of(run.run_dir), run.parts[1].encoder.head_counts
        )
        self.default_method, self._faithfulness_file = explanation_method(run.run_dir)
        self._makers = {}
        self._lock = threading.Lock()

    def describe(self):
        """What `GET /api/runs` says of the run."""
        maker = self._maker(None)
        return {
            "name": self.name,
            "run_dir": str(self.run.run_dir),
            "class_names": self.run.class_names,
            "pooling": self.run.pooling,
            "sequence_length": maker.sequence_length,
            "word_pieces": maker.word_pieces,
            "kept_heads": self.kept_heads,
            "methods": list(METHODS),
            "default_method": self.default_method,
        }

    def panels(self):
        """The run's measured heads, Dataset panel and methods' faithfulness for the page,
        when it has them (`evaluate.py --heads`, `--tokens`, `--suspects`, `--slices`,
        `--faithfulness`); a damaged file leaves its panel out and says why."""
        found, problems = {}, []
        for name, read in (
            ("heads", lambda: heads_block(self.run.run_dir, self.kept_heads)),
            ("dataset", lambda: dataset_block(self.run.run_dir)),
            (
                "faithfulness",
                lambda: self._faithfulness_file and faithfulness_block(self._faithfulness_file),
            ),
        ):
            try:
                found[name] = read()
            except (ExportError, ValueError) as error:
                found[name] = None
                problems.append(str(error))
        return {**found, "problems": problems}

    def answer(self, texts, method="default", attention=False):
        """Per text its prediction and, unless `method` is None, its words by `method`.

        Args:
            texts: raw strings (`check_texts`).
            method: an attribution method (`METHODS`); "default": the run's best measured
                one, as predict.py's; None: the prediction alone.
            attention: also every layer and head's maps, in `view`.

        Returns:
            A list of dicts, one per text, with predict.py --json's keys ("text",
            "predicted_label", "probabilities", "known_tokens", and with a method
            "explanation_method" and "tokens": every word, most important first) and
            "truncated", "token_count" and, with a method, "view" (the viewer's example).
        """
        if method == "default":
            method = self.default_method
        if method is not None and method not in METHODS:
            raise RequestError(
                f"method must be null or one of {', '.join(METHODS)}; got {method!r}"
            )
        with self._lock:
            maker = self._maker(method)
            token_ids = maker.token_ids(texts)  # (B, T)
            if method is None:
                rows = probabilities(
                    maker.classifier,
                    token_ids,  # (B, C)
                    batch_size=PREDICTION_BATCH,
                ).astype(np.float32)
                records = [None] * len(texts)
            else:  # A few texts a pass: every layer's maps of 64 long texts are gigabytes.
                records = [
                    record
                    for start in range(0, len(texts), PREDICTION_BATCH)
                    for record in maker.records(
                        texts[start : start + PREDICTION_BATCH],
                        [str(row) for row in range(start, start + PREDICTION_BATCH)],
                        # Cut to the longest: the cap's padding costs maps and time.
                        token_ids=trimmed_to_longest(token_ids[start : start + PREDICTION_BATCH]),
                    )
                ]
                rows = [record.probabilities for record in records]
            counts = maker.token_counts(texts)  # (B,)
        known = known_token_counts(token_ids, maker.vocabulary)  # (B,)
        names = self.run.class_names
        answers = []
        for text, row, record, count, known_count in zip(
            texts, rows, records, counts, known, strict=True
        ):
            prediction = Prediction(
                text=text,
                predicted_label=names[int(np.argmax(row))],
                probabilities={name: float(p) for name, p in zip(names, row, strict=True)},
                tokens=None
                if record is None
                else ranked_words(record.tokens, record.word_index, record.attributions[method]),
                known_tokens=int(known_count),
                word_pieces=maker.word_pieces,
                method=method,
            )
            answer = {
                **prediction.as_json(),
                "truncated": bool(count > maker.sequence_length),
                "token_count": int(count),
            }
            if record is not None:
                answer["view"] = example_data(record, names, attention=attention)
            answers.append(answer)
        return answers

    def _maker(self, method):
        if method not in self._makers:
            vectorizer, classifier = self.run.parts
            self._makers[method] = RecordMaker(
                classifier,
                vectorizer,
                self.run.class_names,
                (method,) if method else (),
                self.run.pooling,
                self.kept_heads,
            )
        return self._makers[method]


def check_texts(texts):
    """The request's `texts`: a list of 1 to `MAX_TEXTS` strings, each with more than
    white space, at most `MAX_CHARACTERS` long and valid Unicode; else a RequestError
    naming the problem.

    Example:
    >>> check_texts(["a good film"])
    ['a good film']
    >>> check_texts([""])
    Traceback (most recent call last):
    ...
    engine.evaluation.live.RequestError: text 1 is empty; give it a word or more
    """
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        raise RequestError(
            f'texts must be a list of strings, e.g. ["a good film"]; got a {type(texts).__name__}'
        )
    if not 1 <= len(texts) <= MAX_TEXTS:
        raise RequestError(f"texts must hold 1 to {MAX_TEXTS} texts; got {len(texts)}")
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            raise RequestError(f"text {number} is empty; give it a word or more")
        if len(text) > MAX_CHARACTERS:
            raise RequestError(
                f"text {number} has {len(text)} characters; the lab takes at "
                f"most {MAX_CHARACTERS} per text"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # JSON's "\ud800": half a character, no text
            raise RequestError(
                f"text {number} is not valid Unicode (a lone surrogate); send it as UTF-8"
            ) from None
    return texts


def page_data(live_runs):
    """What the live page embeds besides the viewer's own fields (the methods'
    descriptions among them): every run's description and panels."""
    return {"runs": [{**lab.describe(), **lab.panels()} for lab in live_runs]}


def run_names(run_dirs):
    """The names requests give the runs: each folder's name, or the path as given when
    two folders share a name.

    Example:
    >>> run_names(["runs/default", "runs/default_int8/"])
    ['default', 'default_int8']
    >>> run_names(["a/default", "b/default"])
    ['a/default', 'b/default']
    """
    names = [Path(run_dir).name for run_dir in run_dirs]
    return [
        name if names.count(name) == 1 else str(Path(run_dir))
        for name, run_dir in zip(names, run_dirs, strict=True)
    ]
