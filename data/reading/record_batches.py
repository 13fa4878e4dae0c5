"""The one reader of the user's files: a shard read in record batches with pyarrow, memory
bounded by a batch whatever the file's size. CSV/TSV (quoted fields may hold separators and
newlines), JSON Lines, Parquet. The in-memory path (`labelled_files`) collects the batches, the
stream consumes them, so both parse alike and fail with the same one-line DataError: the
shard, the row where it can be found, what is wrong.
"""

import csv
import pathlib
import re
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from data.reading.shards import row_name
from runtime.errors import DataError

# pyarrow's unit of reading and parsing CSV and JSON: a record batch holds about this many
# bytes of the file. Parquet batches hold this many rows.
BLOCK_BYTES = 4 << 20
PARQUET_BATCH_ROWS = 32768
# Finding a shard's columns reads its first block: a smaller one, so that checking a
# thousand shards before training does not read gigabytes.
HEADER_BLOCK_BYTES = 1 << 20
_DELIMITERS = {".csv": ",", ".tsv": "\t"}
# pyarrow's JSON errors name the row within the block that failed.
_JSON_TYPE_CHANGE = re.compile(r"Column\(/(.+)\) changed from (\w+) to (\w+) in row (\d+)")
_JSON_ROW = re.compile(r"(.*) in row (\d+)$")


def _open(path: pathlib.Path, columns: list[str] | None, block_bytes: int | None = None):
    """An iterator of record batches (all columns when `columns` is None)."""
    block_bytes = block_bytes or BLOCK_BYTES
    if path.suffix == ".parquet":
        return pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns)
    if path.suffix == ".jsonl":
        options = pa_json.ReadOptions(block_size=block_bytes)
        if columns is None:
            return pa_json.open_json(path, read_options=options)
        # pyarrow would turn "2020-01-01" into a timestamp ("2020-01-01 00:00:00"): keep the
        # first block's numbers, read the rest as written, and skip the other keys.
        first = pa_json.open_json(path, read_options=options).schema
        found = dict(zip(first.names, first.types, strict=True))
        kinds = [found.get(column, pa.null()) for column in columns]
        schema = pa.schema(
            [
                (
                    column,
                    pa.string() if pa.types.is_timestamp(kind) or pa.types.is_null(kind) else kind,
                )
                for column, kind in zip(columns, kinds, strict=True)
            ]
        )
        return pa_json.open_json(
            path,
            read_options=options,
            parse_options=pa_json.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="ignore"
            ),
        )
    return pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(block_size=block_bytes),
        parse_options=pa_csv.ParseOptions(
            delimiter=_DELIMITERS[path.suffix], newlines_in_values=True
        ),
        # Everything is text: "NA", "null" or "1" are legitimate texts and labels. UTF-8 is
        # checked per column afterwards (`_as_text`), where the failing row can be named.
        convert_options=pa_csv.ConvertOptions(
            include_columns=columns,
            column_types=dict.fromkeys(columns or (), pa.string()),
            check_utf8=False,
        ),
    )


def _bad_csv_row(path: pathlib.Path) -> int | None:
    """The first row whose fields do not match the header's, found with Python's csv module
    (pyarrow's parse error quotes the row but not its number); read only on an error."""
    try:
        with path.open(newline="", encoding="utf-8-sig", errors="replace") as file:
            reader = csv.reader(file, delimiter=_DELIMITERS[path.suffix])
            records = (fields for fields in reader if fields)  # pyarrow skips blank lines
            header = next(records, [])
            return next(
                (row for row, fields in enumerate(records) if len(fields) != len(header)), None
            )
    except csv.Error:  # A field over csv's size limit: the row stays unnamed.
        return None


def _read_error(path: pathlib.Path, row: int, error: Exception) -> DataError:
    """The DataError of a shard that failed after `row` rows were read."""
    message = (str(error).strip().splitlines() or [""])[0][:200]
    where = f"{path}" if row == 0 else f"{path} after row {row}"
    if path.suffix == ".jsonl" and (change := _JSON_TYPE_CHANGE.search(message)):
        column, before, after, in_block = change.groups()
        return DataError(
            f"{row_name(path, row + int(in_block))} column '{column}' holds a "
            f"{after} where the rows above hold {before}s; write every value of "
            "a column the same way, all numbers or all strings"
        )
    if path.suffix == ".jsonl" and (located := _JSON_ROW.match(message)):
        message, where = located.group(1), row_name(path, row + int(located.group(2)))
    elif path.suffix in (".csv", ".tsv") and "CSV parse error" in message:
        bad = _bad_csv_row(path)
        where = where if bad is None else row_name(path, bad)
    return DataError(
        f"{where} could not be read as {path.suffix[1:]} ({type(error).__name__}: "
        f"{message}); fix the file format"
    )


def column_names(path: pathlib.Path) -> list[str]:
    """The shard's columns, from its header, first block or footer (a DataError if it cannot
    be opened: missing, unreadable or not in its format)."""
    if not path.is_file():
        raise DataError(
            f"{path} does not exist; check dataset.train_file, validation_file "
            "and test_file (paths are relative to where you run the command)"
        )
    try:
        if path.suffix == ".parquet":
            return list(pq.ParquetFile(path).schema_arrow.names)
        return list(_open(path, None, HEADER_BLOCK_BYTES).schema.names)
    except (pa.ArrowException, OSError) as error:
        raise _read_error(path, 0, error) from None
    except UnicodeDecodeError:  # In a column name: the header, or a key of the first rows.
        where = "column names" if path.suffix == ".jsonl" else "line 1"
        raise DataError(f"{path} {where} is not valid UTF-8; save the file as UTF-8") from None


def check_columns(path: pathlib.Path, columns: dict[str, str]) -> None:
    """Raises a DataError naming the shard unless it opens and has `columns` ({role: name},
    roles as in `dataset.text_column`)."""
    present = column_names(path)
    for role, column in columns.items():
        if column not in present:
            raise DataError(
                f"{path} has no column '{column}' (columns: {', '.join(present)}); "
                f"set dataset.{role} to one of them"
            )


def read_batches(
    path: pathlib.Path, columns: list[str], may_be_empty=()
) -> Iterator[tuple[int, list]]:
    """(first row, one pyarrow string array per column) for each record batch of the shard;
    the columns in `may_be_empty` may hold empty values (read as "").

    Raises:
        DataError: the shard cannot be read, a value is not UTF-8, empty or missing, or a
            JSON column changes type; the message names the row where it can be found.
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
        yield (
            row,
            [
                _as_text(path, row, column, batch.column(column), column in may_be_empty)
                for column in columns
            ],
        )
        row += batch.num_rows


def _as_text(path, row, column, values, may_be_empty=False):
    """The column as UTF-8 strings (numbers as they are written), checked for empty values
    unless they `may_be_empty` (then read as "")."""
    empty = pc.is_nan(values) if pa.types.is_floating(values.type) else None  # NaN: no value
    if pa.types.is_string(values.type) or pa.types.is_binary(values.type):
        _check_utf8(path, row, column, values)  # Numbers cast to valid UTF-8.
    try:
        values = pc.cast(values, pa.string()) if values.type != pa.string() else values
    except (pa.ArrowException, TypeError):
        raise DataError(
            f"{path} column '{column}' holds {values.type} values near row "
            f"{row + 1}; write texts and labels as strings or numbers"
        ) from None
    if may_be_empty:
        return pc.fill_null(values, "")
    blank = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0)
    empty = pc.fill_null(blank if empty is None else pc.or_kleene(empty, blank), True)
    if pc.any(empty).as_py():
        first = pc.index(empty, True).as_py()
        raise DataError(
            f"{row_name(path, row + first)} column '{column}' is empty; fill it or remove the row"
        )
    return values


def _check_utf8(path, row, column, values) -> None:
    """Raises a DataError naming the first value that is not UTF-8 (CSV and JSON are read
    unchecked, Parquet may hold bytes)."""
    try:
        return pc.cast(values, pa.string()).validate(full=True)
    except pa.ArrowInvalid:  # Find the row, in Python: only on an error.
        pass
    for index, value in enumerate(pc.cast(values, pa.binary()).to_pylist()):
        try:
            (value or b"").decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(
                f"{row_name(path, row + index)} column '{column}' is not valid "
                "UTF-8; save the file as UTF-8"
            ) from None
