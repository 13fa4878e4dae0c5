"""Small labelled files in shards, in every format the data layer reads."""

import json

import pandas as pd


def review_rows(count, start=0):
    """`count` distinct rows: two sentiment words give the label, 1 in 4 negative."""
    return [
        {
            "text": f"review {index} {'awful dull' if index % 4 == 0 else 'great fine'}",
            "label": "neg" if index % 4 == 0 else "pos",
        }
        for index in range(start, start + count)
    ]


def write_rows(path, rows):
    """Writes `rows` ({column: value} dicts) in the format of `path`'s extension."""
    table = pd.DataFrame(rows)
    if path.suffix == ".csv":
        table.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        table.to_csv(path, index=False, sep="\t")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        table.to_parquet(path)
    return path


def write_shards(folder, rows, count, suffix=".csv"):
    """`rows` dealt round robin into `count` shards `part-<i><suffix>` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_rows(folder / f"part-{index}{suffix}", rows[index::count]) for index in range(count)
    ]
