"""Whether a dataset is read into memory or streamed, and how its missing splits are carved.

`dataset.streaming: auto` streams a training source over `STREAMING_AUTO_BYTES` on disk
(files, or the TFDS split's records). In memory, a split is cached as token ids and
shuffled whole: fastest while it fits (6 MB of CSV: 42k rows/s, the stream 23k), but 104 MB
took 122 s and 2.6 GB to the first batch, the stream 7 s and 1.7 GB. The split method follows
(`split_method: auto`): hash when streaming (no global pass), else stratified, so the same
files give the same splits whichever path reads them.
"""

import dataclasses

from config import DatasetConfig
from data.reading.shards import human_size

STREAMING_AUTO_BYTES = 64 * 2**20


@dataclasses.dataclass(frozen=True)
class ReadPlan:
    streamed: bool
    split_method: str  # "hash" or "stratified"
    size_bytes: int

    def describe(self, dataset: DatasetConfig) -> str:
        """The line train.py prints: which path, and why.

        Example:
        >>> ReadPlan(True, "hash", 3 * 2**30).describe(DatasetConfig(train_file="x.csv"))
        'Streaming the data (3.0 GiB on disk, over the 64 MiB of dataset.streaming: auto)'
        """
        size = f"{human_size(self.size_bytes)} on disk"
        if dataset.streaming != "auto":
            why = f"dataset.streaming: {str(dataset.streaming).lower()}"
        elif dataset.is_pair or dataset.is_multi_label:
            why = "text pairs and label sets are read into memory"
        elif (
            not self.streamed
            and self.split_method == "stratified"
            and dataset.split_method == "stratified"
        ):
            why = "dataset.split_method: stratified needs the rows in memory"
        else:
            side = "over" if self.streamed else "under"
            why = f"{side} the {STREAMING_AUTO_BYTES / 2**20:.0f} MiB of dataset.streaming: auto"
        action = "Streaming the data" if self.streamed else "Reading the data into memory"
        return f"{action} ({size}, {why})"


def read_plan(dataset: DatasetConfig, size_bytes: int) -> ReadPlan:
    """The plan for a training source of `size_bytes`.

    Example:
    >>> read_plan(DatasetConfig(train_file="x.csv"), 10 * 2**20)
    ReadPlan(streamed=False, split_method='stratified', size_bytes=10485760)
    """
    if dataset.streaming != "auto":
        streamed = bool(dataset.streaming)
    elif dataset.is_pair or dataset.is_multi_label:  # The stream reads a text and a label.
        streamed = False
    else:
        # An explicit stratified split wants every row in memory: honoured, and printed.
        streamed = dataset.split_method != "stratified" and size_bytes > STREAMING_AUTO_BYTES
    method = dataset.split_method
    if method == "auto":
        method = "hash" if streamed else "stratified"
    return ReadPlan(streamed=streamed, split_method=method, size_bytes=size_bytes)
