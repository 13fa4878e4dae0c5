"""The data sections of the config schema: where the text comes from (`dataset`) and how it
becomes token ids (`text`), the two sections the data layer takes.

Part of the one schema: `config/schema.py` assembles these with the model, training, pretraining and
output sections and exports them; import them from there. Every field has a default and a
comment; a section checks itself when it is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from config.typed import FRACTION, POSITIVE, ConfigError, Section, fail, option

BUILTIN_DATASETS = ("rotten_tomatoes", "reuters_r8", "reuters_r52", "twenty_newsgroups", "bbc_news")
# The three ways to name a dataset; a config gives exactly one.
DATASET_SOURCES = ("name", "tfds_name", "train_file")
# How missing validation/test splits are carved out of train (data/splitting/hashed.py).
SPLIT_METHODS = ("auto", "stratified", "hash")
STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation", "none")


@dataclass(frozen=True)
class DatasetConfig(Section):
    section: ClassVar[str] = "dataset"
    # A built-in dataset: rotten_tomatoes, reuters_r8, reuters_r52, twenty_newsgroups,
    # bbc_news. No default: a config names its data here, in tfds_name or in train_file.
    name: str | None = option(None, choices=BUILTIN_DATASETS)
    # Where TFDS datasets are cached; null uses TFDS_DATA_DIR or ~/tensorflow_datasets.
    data_dir: str | None = None
    # Your own .csv, .tsv, .jsonl or .parquet files instead of a named dataset: one file,
    # a glob of shards ("data/*.parquet") or a folder of them. Without
    # validation_file/test_file, those splits are carved out of the training data.
    train_file: str | None = None
    validation_file: str | None = None
    test_file: str | None = None
    # Any dataset of the TFDS catalog by name ("imdb_reviews", "ag_news_subset"), for
    # machines that can download it or already have it in data_dir.
    tfds_name: str | None = None
    # Its split names; a null validation/test split is carved out of train (fractions
    # below); built-in datasets ship a validation split. Slices like "train[:50%]" work.
    train_split: str = "train"
    validation_split: str | None = None
    test_split: str | None = "test"
    # Column names in the files above, or feature keys of the TFDS dataset. Two text
    # columns, [first, second], make each example a text pair (a question and its
    # candidate duplicate, a premise and its hypothesis): a checkpoint reads it as
    # [CLS] first [SEP] second [SEP] with its segment embeddings, from scratch the sides
    # are joined by a separator word and get segment embeddings of their own.
    text_column: str | list[str] = option(
        "text",
        (
            lambda value: isinstance(value, str) or (len(value) == 2 and value[0] != value[1]),
            "must be a column name or a list of two different ones (a text pair)",
        ),
    )
    label_column: str = "label"
    # Multi-label data (each text has a set of labels: an article's topics, a comment's
    # kinds of toxicity): the label column holds the labels joined by this separator
    # ("sports|politics"; spaces around each are stripped; an empty field is no label).
    # The model then gives each label its own probability (sigmoid), trained with binary
    # cross-entropy, and a threshold per label chosen on validation.
    label_separator: str | None = option(
        None, (lambda value: value is None or value.strip() != "", "must not be blank")
    )
    # Multi-label data as one 0/1 column per label, named here in order (instead of
    # label_column and label_separator).
    label_columns: list[str] = field(default_factory=list)
    # Other columns of your files (a genre, a source) whose values `evaluate.py --slices`
    # measures the model on, each value of enough examples a slice; read only from the
    # files of the evaluated rows (the split's own, train's when it was carved out of
    # train, or --data FILE), never in training.
    slice_columns: list[str] = field(default_factory=list)
    # Fractions of the training data held out (split_method below) when a split is
    # missing. The test split is never used for model selection.
    validation_fraction: float = option(0.1, FRACTION)
    test_fraction: float = option(0.1, FRACTION)
    # Seed of the held-out splits and of the vocabulary sample: separate from
    # training.seed so that every training seed is scored on the same test examples.
    split_seed: int = 0
    # How missing splits are carved: stratified (each label's exact share; needs every
    # row in memory), hash (a stable hash of the text picks its split: the same text
    # lands in the same split on every run, worker and shard order, duplicates
    # together; label shares only on average) or auto (hash when streaming, else
    # stratified).
    split_method: str = option("auto", choices=SPLIT_METHODS)
    # The class names, in id order; any other label is an error naming its file and
    # row. null: the training data's labels, found in one streaming pass (sorted, as
    # numbers when all are integers). Not for TFDS ClassLabel features (theirs are used).
    labels: list[str] | None = None
    # Read the data in record batches into a tf.data stream, not into memory, so that
    # memory does not grow with the rows: true, false, or auto (streamed when the
    # training files or TFDS split are over 64 MB; printed at the start).
    streaming: bool | str = option(
        "auto",
        (lambda value: isinstance(value, bool) or value == "auto", "must be true, false or auto"),
    )
    # A streamed training split is shuffled in a buffer of this many texts, with a new
    # file order each pass (in memory, the whole split is shuffled).
    shuffle_buffer: int = option(100_000, POSITIVE)

    def check_together(self):
        sources = {key: getattr(self, key) for key in DATASET_SOURCES}
        given = {key: value for key, value in sources.items() if value is not None}
        if not given:
            raise ConfigError(
                "dataset.name: no dataset given: set dataset.name to a built-in dataset "
                f"({', '.join(BUILTIN_DATASETS)}), dataset.tfds_name to a TFDS catalog name or "
                "dataset.train_file to a CSV/TSV/JSONL/Parquet file"
            )
        if len(given) > 1:
            raise ConfigError(
                f"dataset.{list(given)[1]}: give one of dataset.name, dataset.tfds_name or "
                f"dataset.train_file, not several "
                f"({', '.join(f'{key}={value!r}' for key, value in given.items())})"
            )
        if self.validation_fraction + self.test_fraction >= 1.0:
            fail(
                "dataset.test_fraction",
                "validation_fraction + test_fraction must be < 1",
                self.test_fraction,
            )
        if self.labels is not None and (
            len(set(self.labels)) < 2 or len(set(self.labels)) != len(self.labels)
        ):
            fail("dataset.labels", "must name two labels or more, each once", self.labels)
        if self.train_file is not None:
            carving = self.validation_file is None or self.test_file is None
        else:  # Built-in datasets ship a validation split.
            carving = self.test_split is None or (
                self.validation_split is None and self.name is None
            )
        if self.label_separator is not None and self.label_columns:
            raise ConfigError(
                "dataset.label_columns: give the labels as one column of label sets "
                "(dataset.label_separator) or as 0/1 columns (dataset.label_columns), not both"
            )
        if self.label_columns and (
            len(self.label_columns) < 2 or len(set(self.label_columns)) != len(self.label_columns)
        ):
            fail(
                "dataset.label_columns",
                "must name two columns or more, each once",
                self.label_columns,
            )
        if self.is_multi_label and self.train_file is None:
            raise ConfigError(
                "dataset.label_separator: multi-label data is read from your own files "
                "(dataset.train_file); a TFDS dataset's labels are one per text"
            )
        if (self.is_pair or self.is_multi_label) and self.streaming is True:
            raise ConfigError(
                "dataset.streaming: text pairs and multi-label data are read into memory; "
                "set dataset.streaming to false or auto"
            )
        if self.streaming is True and self.split_method == "stratified" and carving:
            raise ConfigError(
                "dataset.split_method: stratified needs every row in memory; use hash (or "
                "auto) with dataset.streaming: true, or set dataset.streaming to false"
            )

    @property
    def is_pair(self) -> bool:
        """Each example is a pair of texts (two text columns)."""
        return not isinstance(self.text_column, str)

    @property
    def is_multi_label(self) -> bool:
        """Each example has a set of labels (`label_separator` or `label_columns`)."""
        return self.label_separator is not None or bool(self.label_columns)

    @property
    def tfds_builder_name(self) -> str | None:
        """The TFDS builder to load (built-in or catalog), or None for the user's files."""
        return self.name or self.tfds_name


@dataclass(frozen=True)
class TextConfig(Section):
    section: ClassVar[str] = "text"
    # Vocabulary of the TextVectorization layer, counting the padding (0) and OOV (1) ids.
    vocabulary_size: int = option(
        20000, (lambda value: value >= 3, "must be at least 3 (padding, OOV and one token)")
    )
    # Most tokens per example (longer texts keep their first ones); batches are padded to
    # their longest text only. auto: the 99th percentile of the training texts' token
    # counts, rounded up to a multiple of 8, between 8 and 512 (printed, and saved in the
    # run's config.yaml).
    sequence_length: int | str = option(
        "auto",
        (
            lambda value: value == "auto" if isinstance(value, str) else value > 0,
            "must be a positive integer or auto",
        ),
    )
    # TextVectorization standardisation: lower_and_strip_punctuation, lower,
    # strip_punctuation or none (the text as it is).
    standardize: str = option("lower_and_strip_punctuation", choices=STANDARDIZE)
    # english: also drop scikit-learn's 318 English stop words ("the", "of", "not", ...)
    # after lower_and_strip_punctuation. A third to half of a news text's tokens, so
    # shorter sequences; topics survive it, sentiment may not ("not").
    stop_words: str = option("none", choices=("none", "english"))
    # The vocabulary and the auto cap come from a seeded sample of about this many
    # training texts (all of them when there are fewer), chosen by a hash of each text
    # and dataset.split_seed and streamed, never held in memory whole.
    adapt_sample: int = option(1_000_000, POSITIVE)

    def check_together(self):
        if self.stop_words != "none" and self.standardize != "lower_and_strip_punctuation":
            raise ConfigError(
                f"text.stop_words: {self.stop_words} needs text.standardize: "
                f"lower_and_strip_punctuation, got {self.standardize!r}; change one of them"
            )
