"""One shard read in record batches with pyarrow: memory bounded by a batch, whatever the
file's size. CSV/TSV (quoted fields may hold separators and newlines), JSON Lines, Parquet.

Every error is a one-line DataError naming the shard, and the row where it is known.
"""

import pathlib
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from data.errors import DataError
from data.sources import row_name

# pyarrow's unit of reading and parsing CSV and JSON: a record batch holds about this many
# bytes of the file. Parquet batches hold this many rows.
BLOCK_BYTES = 4 << 20
PARQUET_BATCH_ROWS = 32768
# Finding a shard's columns reads its first block: a smaller one, so that checking a
# thousand shards before training does not read gigabytes.
HEADER_BLOCK_BYTES = 1 << 20


def _open(path: pathlib.Path, columns: list[str] | None, block_bytes: int | None = None):
    """An iterator of record batches (all columns when `columns` is None)."""
    block_bytes = block_bytes or BLOCK_BYTES
    if path.suffix == ".parquet":
        return pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns)
    if path.suffix == ".jsonl":
        return pa_json.open_json(path, read_options=pa_json.ReadOptions(block_size=block_bytes))
    return pa_csv.open_csv(
        path, read_options=pa_csv.ReadOptions(block_size=block_bytes),
        parse_options=pa_csv.ParseOptions(delimiter="\t" if path.suffix == ".tsv" else ",",
                                          newlines_in_values=True),
        # Everything is text: "NA", "null" or "1" are legitimate texts and labels.
        convert_options=pa_csv.ConvertOptions(
            include_columns=columns, column_types=dict.fromkeys(columns or (), pa.string())),
    )


def _read_error(path: pathlib.Path, row: int, error: Exception) -> DataError:
    message = (str(error).strip().splitlines() or [""])[0][:200]
    where = f"{path}" if row == 0 else f"{path} after row {row}"
    if "invalid UTF8" in message or "UTF-8" in message:
        return DataError(f"{where}: not valid UTF-8; save the file as UTF-8")
    return DataError(f"{where} could not be read as {path.suffix[1:]} ({type(error).__name__}: "
                     f"{message}); fix the file format or remove the shard")


def column_names(path: pathlib.Path) -> list[str]:
    """The shard's columns, from its header, first block or footer (a DataError if it cannot
    be opened: missing, unreadable or not in its format)."""
    if not path.is_file():
        raise DataError(f"{path} does not exist; check dataset.train_file, validation_file "
                        "and test_file (paths are relative to where you run the command)")
    try:
        if path.suffix == ".parquet":
            return list(pq.ParquetFile(path).schema_arrow.names)
        return list(_open(path, None, HEADER_BLOCK_BYTES).schema.names)
    except (pa.ArrowException, OSError) as error:
        raise _read_error(path, 0, error) from None


def check_columns(path: pathlib.Path, columns: dict[str, str]) -> None:
    """Raises a DataError naming the shard unless it opens and has `columns` ({role: name},
    roles as in `dataset.text_column`)."""
    present = column_names(path)
    for role, column in columns.items():
        if column not in present:
            raise DataError(f"{path} has no column '{column}' (columns: {', '.join(present)}); "
                            f"set dataset.{role} to one of them")


def read_batches(path: pathlib.Path, columns: list[str]) -> Iterator[tuple[int, list]]:
    """(first row, one pyarrow string array per column) for each record batch of the shard.

    Raises:
        DataError: the shard cannot be read (naming the rows after which it failed), or a
            value is empty or missing (naming its row and column).
    """
    row = 0
    try:
        batches = iter(_open(path, columns))
    except (pa.ArrowException, OSError) as error:
        raise _read_error(path, 0, error) from None
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as error:
            raise _read_error(path, row, error) from None
        arrays = []
        for column in columns:
            if column not in batch.schema.names:  # JSON Lines: no row of this block has it
                raise DataError(f"{row_name(path, row)}: no column '{column}' in the rows "
                                "from here; give every row its text and label")
            arrays.append(_as_text(path, row, column, batch.column(column)))
        yield row, arrays
        row += batch.num_rows


def _as_text(path, row, column, values):
    """The column as strings (numbers as they are written), checked for empty values."""
    try:
        values = pc.cast(values, pa.string()) if values.type != pa.string() else values
    except (pa.ArrowException, TypeError):
        raise DataError(f"{path} column '{column}' holds {values.type} values near row "
                        f"{row + 1}; write texts and labels as strings or numbers") from None
    empty = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0), True)
    if pc.any(empty).as_py():
        first = pc.index(empty, True).as_py()
        raise DataError(f"{row_name(path, row + first)} column '{column}' is empty; fill it or "
                        "remove the row")
    return values
