"""bench_scale's inputs: synthetic reviews written once as CSV or Parquet shards.

Each review is Zipf-distributed filler words and one cue word that gives the label, so a
model learns it in a few steps and the bench measures the data path, not the task.
"""

import json
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "results" / "scale_data"
ROWS_PER_SHARD, CHUNK_ROWS = 1_000_000, 100_000
VOCABULARY = 30_000
CUES = {"neg": ("awful", "dull", "boring", "weak"), "pos": ("great", "moving", "superb", "fine")}


def synthetic_rows(count: int, seed: int) -> tuple[list[str], list[str]]:
    """`count` (texts, labels) of 7 to 20 words, the same for the same seed."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{index}" for index in range(VOCABULARY)], dtype=object)
    lengths = rng.integers(6, 20, count)
    filler = words[np.minimum(rng.zipf(1.3, int(lengths.sum())), VOCABULARY) - 1]
    labels = np.where(rng.integers(0, 2, count) == 1, "pos", "neg")
    cues = rng.integers(0, 4, count)
    texts = [
        " ".join(row) + " " + CUES[label][cue]
        for row, label, cue in zip(
            np.split(filler, np.cumsum(lengths)[:-1]), labels, cues, strict=True
        )
    ]
    return texts, labels.tolist()


def shard_sizes(rows: int, per_shard: int = ROWS_PER_SHARD) -> list[int]:
    """Rows of each shard: full shards, then the rest.

    Example:
    >>> shard_sizes(2_500_000)
    [1000000, 1000000, 500000]
    """
    return [per_shard] * (rows // per_shard) + ([rows % per_shard] if rows % per_shard else [])


def write_dataset(rows: int, file_format: str, folder: Path = DATA_DIR) -> str:
    """The glob of `rows` synthetic rows in `file_format` shards, written unless already there."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    target = folder / f"{file_format}-{rows}"
    marker = target / "written.json"
    if marker.exists() and json.loads(marker.read_text()) == {"rows": rows}:
        return str(target / f"*.{file_format}")
    target.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("text", pa.string()), ("label", pa.string())])
    for shard, size in enumerate(shard_sizes(rows, ROWS_PER_SHARD)):
        path = target / f"part-{shard:03d}.{file_format}"
        writer = (
            pq.ParquetWriter(path, schema)
            if file_format == "parquet"
            else pa_csv.CSVWriter(path, schema)
        )
        with writer:
            for start in range(0, size, CHUNK_ROWS):
                texts, labels = synthetic_rows(
                    min(CHUNK_ROWS, size - start), seed=shard * 1000 + start // CHUNK_ROWS
                )
                writer.write_table(pa.table({"text": texts, "label": labels}, schema=schema))
    marker.write_text(json.dumps({"rows": rows}))
    return str(target / f"*.{file_format}")
