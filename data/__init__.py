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

Importing this package loads nothing else: each name below is imported from its module on
first use (PEP 562's module `__getattr__`), so a command can import `data` for `DataError`
and report a bad argument before TensorFlow's seconds of start-up. Importing
`data.builders` (or taking `BUILTIN_BUILDERS`) registers the built-in TFDS builders, so
`tfds.load("reuters_r8")` works afterwards.

Example:
>>> # from data import build_datasets
>>> # datasets = build_datasets({"name": "bbc_news"}, {"sequence_length": 128}, 32, seed=0)
"""

from runtime.lazy_names import lazy_names

# Each public name and the module that owns it.
_OWNERS = {
    "BUILTIN_BUILDERS": "data.builders",
    "Datasets": "data.datasets",
    "build_datasets": "data.datasets",
    "make_pipelines": "data.pipelines.in_memory",
    "one_hot_labels": "data.pipelines.in_memory",
    "LowerStates": "data.pipelines.lower_states",
    "load_columns": "data.reading.labelled_files",
    "load_file_split": "data.reading.labelled_files",
    "load_file_splits": "data.reading.labelled_files",
    "load_labelled_file": "data.reading.labelled_files",
    "load_text_splits": "data.reading.loading",
    "streamed_size": "data.reading.loading",
    "check_texts": "data.reading.texts_file",
    "read_texts_file": "data.reading.texts_file",
    "TextSplits": "data.splitting.text_splits",
    "PinnedWheel": "runtime.downloads",
    "fetch_wheel": "runtime.downloads",
    "DataError": "runtime.errors",
}

__all__ = sorted(_OWNERS)


__getattr__, __dir__ = lazy_names(__name__, _OWNERS)
