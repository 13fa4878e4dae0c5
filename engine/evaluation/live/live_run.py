"""`LiveRun`: what the live lab (serve.py) knows of a run it serves and answers about a text.

Each run is loaded once. `LiveRun.answer` gives per text what `predict.py --json` prints
(label, probabilities, the words ranked by an attribution method) and the example as the
viewer draws it (`view`: pieces, words, the method's scores and, when asked, every layer
and head's attention), from one forward pass and the method's own pass, both compiled
once per run (`inspection.methods.attribution`). A run answers one request at a time,
under its own lock: its `RecordMaker` keeps a batch's scores between two calls, and one
request already uses every core.

Texts longer than the model reads are cut as predict.py cuts them, and the answer says
so (`truncated`, `token_count`). What a request may ask, and how much it may cost, is
`api`'s: its tokens are counted and its maps sized before any model work. Maps
are computed only when asked for (`attention`) or when the method is made of them, one
forward pass of a few texts at a time.

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
from engine.evaluation.live.api import RequestError
from engine.label_sets import predicted_names
from inspection.attention_file.record import AttentionRecord
from inspection.attention_records import RecordMaker
from inspection.attention_tokens import check_kept_heads, trimmed_to_longest
from inspection.export_attributions import MAPS_METHOD
from inspection.methods.attribution import METHODS
from inspection.methods.forward_passes import probabilities
from inspection.methods.token_ranking import Prediction, ranked_words
from inspection.rendering.viewer import example_data
from inspection.token_schemes import known_token_counts
from inspection.word_pieces import PADDING_ID

# Texts per forward pass, fewer when their maps would pass the request's memory cap. The
# prediction alone takes them in order of length: on 2 cores 32 texts of 5 to 40 words take
# 87 ms in passes of 8, 104 ms of 16 and 129 ms in one (MiniLM, 3 blocks).
PREDICTION_BATCH = 8


class LiveRun:
    """One run as the lab serves it.

    Args:
        name: what requests call it (`"run"`).
        run: a loaded `saved_run.Run`.
        limits: what one request may cost (`api.RequestLimits`); None: no bound,
            for texts of one's own (serve.py gives its flags').
    """

    def __init__(self, name, run, limits=None):
        self.name = name
        self.run = run
        self.limits = limits
        self.kept_heads = check_kept_heads(
            kept_heads_of(run.run_dir), run.parts[1].encoder.head_counts
        )
        # The maps' layers and heads (L, N): a pruned head keeps its number, all 0.
        self.maps_shape = (
            len(self.kept_heads),
            1 + max((max(heads) for heads in self.kept_heads if heads), default=-1),
        )
        self.default_method, self._faithfulness_file = explanation_method(run.run_dir)
        self._makers = {}
        self._lock = threading.Lock()

    def describe(self):
        """What `GET /api/runs` says of the run: its name, never its folder's path."""
        maker = self._maker(None)
        return {
            "name": self.name,
            "class_names": self.run.class_names,
            "pooling": self.run.pooling,
            "sequence_length": maker.sequence_length,
            "word_pieces": maker.scheme.subword,
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
                found[name] = _within_run(read(), self.run.run_dir)
            except (ExportError, ValueError) as error:
                found[name] = None
                problems.append(str(error))
        return {**found, "problems": problems}

    def answer(self, texts, method="default", attention=False):
        """Per text its prediction and, unless `method` is None, its words by `method`.

        Args:
            texts: raw strings (`api.check_texts`).
            method: an attribution method (`METHODS`); "default": the run's best measured
                one, as predict.py's; None: the prediction alone.
            attention: also every layer and head's maps, in `view`.

        Returns:
            A list of dicts, one per text, with predict.py --json's keys ("text",
            "predicted_label", "probabilities", "known_tokens", and with a method
            "explanation_method" and "tokens": every word, most important first) and
            "truncated", "token_count" and, with a method, "view" (the viewer's example).

        Raises:
            RequestError: an unknown method; RequestTooLarge: over `limits`, before any
                model work.
        """
        if method == "default":
            method = self.default_method
        if method is not None and method not in METHODS:
            raise RequestError(
                f"method must be null or one of {', '.join(METHODS)}; got {method!r}"
            )
        attention = attention and method is not None  # maps come with a view
        with self._lock:
            maker = self._maker(method)
            token_ids = maker.token_ids(texts)  # (B, T)
            counts = maker.token_counts(texts)  # (B,)
            # Positions the model attends: the ids after the cap, and a class token.
            lengths = (token_ids != PADDING_ID).sum(axis=1) + int(maker.class_token)  # (B,)
            if self.limits is not None:
                self.limits.check(lengths, *self.maps_shape, attention)
            known = known_token_counts(token_ids, maker.vocabulary)  # (B,)
            if method is None:
                rows = probabilities(
                    maker.classifier, token_ids, batch_size=PREDICTION_BATCH
                ).astype(np.float32)  # (B, C)
                return [
                    self._answer_of(maker, text, row, None, count, known_count, attention)
                    for text, row, count, known_count in zip(
                        texts, rows, counts, known, strict=True
                    )
                ]
            step = (
                PREDICTION_BATCH
                if self.limits is None
                else self.limits.texts_per_pass(
                    int(lengths.max()), *self.maps_shape, PREDICTION_BATCH
                )
            )
            # Made into answers a pass at a time: only one pass's float maps are alive.
            return [
                self._answer_of(
                    maker, text, record.probabilities, record, count, known_count, attention
                )
                for start in range(0, len(texts), step)
                for text, record, count, known_count in zip(
                    texts[start : start + step],
                    self._records(maker, texts, token_ids, start, step, method, attention),
                    counts[start : start + step],
                    known[start : start + step],
                    strict=True,
                )
            ]

    def _records(self, maker, texts, token_ids, start, step, method, attention):
        """The `AttentionRecord`s of texts `start` to `start + step`, cut to the longest
        (the cap's padding costs maps and time). With maps only when asked for, or when
        the method is made of them (rollout); else the prediction pass returns none and
        the record's maps are (L, N, 0, 0), the model's layers and heads and no weight,
        which is all `example_data` reads of maps it does not send."""
        batch = texts[start : start + step]
        ids = trimmed_to_longest(token_ids[start : start + step])  # (b, T')
        example_ids = [str(row) for row in range(start, start + len(batch))]
        if attention or method == MAPS_METHOD:
            return maker.records(batch, example_ids, token_ids=ids)
        rows = probabilities(maker.classifier, ids, batch_size=len(ids)).astype(np.float32)
        predicted = rows.argmax(axis=-1)  # (b,)
        maker.attributions.compute(ids, predicted, seed=0)  # as `records` seeds `random`
        no_maps = np.zeros((*self.maps_shape, 0, 0), np.float32)
        records = []
        for row, (text, example_id) in enumerate(zip(batch, example_ids, strict=True)):
            tokens, indices, word_texts = maker.words_of(ids[row])
            records.append(
                AttentionRecord(
                    example_id=example_id,
                    text=text,
                    tokens=tokens,
                    attention_scores=no_maps,
                    probabilities=rows[row],
                    predicted_label_index=int(predicted[row]),
                    word_index=indices,
                    word_texts=word_texts,
                    attributions=maker.attributions.of_example(
                        row, ids[row], None, maker.class_token
                    ),
                )
            )
        return records

    def _answer_of(self, maker, text, row, record, count, known_count, attention):
        """One text's answer: its probabilities `row` (C,), and its `record` unless None."""
        names = self.run.class_names
        # A record carries its maker's one method's scores.
        method = None if record is None else next(iter(record.attributions))
        prediction = Prediction(
            text=text,
            predicted_label=names[int(np.argmax(row))],
            probabilities={name: float(p) for name, p in zip(names, row, strict=True)},
            tokens=None
            if record is None
            else ranked_words(
                record.tokens, record.word_index, record.attributions[method], maker.scheme
            ),
            known_tokens=int(known_count),
            word_pieces=maker.scheme.subword,
            method=method,
            predicted_labels=(
                predicted_names(row[None], self.run.thresholds, names)[0]
                if self.run.is_multi_label
                else None
            ),
        )
        answer = {
            **prediction.as_json(),
            "truncated": bool(count > maker.sequence_length),
            "token_count": int(count),
        }
        if record is not None:
            answer["view"] = example_data(record, names, attention=attention)
        return answer

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


def page_data(live_runs):
    """What the live page embeds besides the viewer's own fields (the methods'
    descriptions among them): every run's description and panels."""
    return {"runs": [{**lab.describe(), **lab.panels()} for lab in live_runs]}


def run_names(run_dirs):
    """The names requests give the runs: each folder's name or, when folders share it, the
    fewest last parts of its path that tell it apart; never an absolute path (/api/runs
    shows the names, and a client needs no folder of the server's).

    Example:
    >>> run_names(["runs/default", "runs/default_int8/"])
    ['default', 'default_int8']
    >>> run_names(["/data/a/default", "/data/b/default", "default"])
    ['a/default', 'b/default', 'default']
    """
    paths = [Path(run_dir) for run_dir in run_dirs]
    parts = [path.parts[1:] if path.is_absolute() else path.parts for path in paths]

    def tail(index, depth):
        return "/".join(parts[index][-depth:])

    names = []
    for index, own in enumerate(parts):
        depth = next(
            (
                depth
                for depth in range(1, len(own) + 1)
                if all(
                    tail(other, depth) != tail(index, depth)
                    for other in range(len(parts))
                    if other != index
                )
            ),
            len(own),  # every tail is another's too ("default" beside "a/default"): all of it
        )
        names.append(tail(index, depth))
    return names


def _within_run(block, run_dir):
    """`block` with every "source" path made relative to the run folder: the page names
    runs, never paths on the server (docs/live_lab.md)."""
    if isinstance(block, dict):
        return {
            key: (
                str(Path(value).relative_to(run_dir))
                if key == "source"
                and isinstance(value, str)
                and Path(value).is_relative_to(run_dir)
                else _within_run(value, run_dir)
            )
            for key, value in block.items()
        }
    return block
