"""Time and disk size of an attention export of a trained run; prints a markdown table.

Usage:
    python bench/bench_export.py                    # runs/default, 1,000 test examples
    python bench/bench_export.py runs/reuters_r8 --num-examples 500 --split validation
    python bench/bench_export.py runs/default --rendered 1000   # PNG heatmaps for all

Loads the run, predicts the examples on the fast path (what evaluate.py computes anyway),
then times `export_attention` on them: the attention model in batches of 32, the check
against the fast path, rollout, `attention.npz` + `manifest.jsonl`, PNG heatmaps and
BertViz JSON for the first `--rendered` examples (default 8, as evaluate.py
--export-attention), the attribution methods (all, as evaluate.py, or `--methods`) and the
offline viewer (first 32 examples). The export goes to a
temporary folder, deleted afterwards unless `--keep DIR` is given. Target: 1,000 examples
in under a minute on 2 CPU cores.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bench_export.py", description=__doc__.split("\n")[0])
    parser.add_argument(
        "run_dir",
        nargs="?",
        default="runs/default",
        metavar="RUN_DIR",
        help="train.py run folder (default: runs/default)",
    )
    parser.add_argument(
        "--num-examples",
        type=int,
        default=1000,
        help="examples to export, the first of the split (default 1000)",
    )
    parser.add_argument("--split", choices=("test", "validation"), default="test")
    parser.add_argument(
        "--rendered",
        type=int,
        default=8,
        help="examples that get PNG heatmaps and BertViz JSON (default 8)",
    )
    parser.add_argument("--keep", metavar="DIR", help="write the export here and keep it")
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        help="attribution methods to store (default: all, as evaluate.py)",
    )
    return parser.parse_args(argv)


def folder_size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def mib(size: int) -> str:
    return f"{size / 2**20:.2f} MiB"


def time_export(run, texts, labels, out_dir, args) -> dict:
    """Exports `texts` to `out_dir` and reads every example back: the seconds of each, the
    model's shape, the mean real tokens and the files' sizes."""
    from inspection import ScoringOptions, WritingOptions, export_attention, load_attention
    from inspection.attention_tokens import ATTENTION_BATCH_SIZE

    start = time.perf_counter()
    export = export_attention(
        run.parts[1],
        run.parts[0],
        texts,
        out_dir,
        run.class_names,
        true_labels=labels,
        scoring=ScoringOptions(args.methods, run.pooling, batch_size=ATTENTION_BATCH_SIZE),
        writing=WritingOptions(
            run_info={"run_dir": str(run.run_dir)}, heatmap_examples=args.rendered, verbose=0
        ),
    )
    export_seconds = time.perf_counter() - start
    export.close()

    start = time.perf_counter()
    with load_attention(out_dir) as loaded:
        for example_id in loaded.example_ids:
            loaded.attention_scores(example_id)
        shape = (loaded.num_layers, loaded.num_heads)
        mean_tokens = float(loaded.manifest.num_tokens.mean())
    read_seconds = time.perf_counter() - start

    sizes = {
        "attention.npz": (out_dir / "attention.npz").stat().st_size,
        "manifest.jsonl": (out_dir / "manifest.jsonl").stat().st_size,
        "heatmaps/ (PNG)": folder_size(out_dir / "heatmaps"),
        "bertviz/ (JSON)": folder_size(out_dir / "bertviz"),
        "index.html (viewer)": (out_dir / "index.html").stat().st_size,
    }
    return {
        "export_seconds": export_seconds,
        "read_seconds": read_seconds,
        "shape": shape,
        "mean_tokens": mean_tokens,
        "sizes": sizes,
        "total": folder_size(out_dir),
    }


def report_rows(run, args, count, load_seconds, predict_seconds, measured) -> list:
    """The table's (what, value) rows."""
    num_layers, num_heads = measured["shape"]
    export_seconds, total = measured["export_seconds"], measured["total"]
    rendered = min(args.rendered, count)
    return [
        ("run", f"`{run.run_dir}` ({args.split} split, pooling {run.pooling})"),
        (
            "examples exported",
            f"{count:,} ({measured['mean_tokens']:.1f} real tokens on average; "
            f"{num_layers} layers x {num_heads} heads)",
        ),
        (
            "PNG heatmaps + BertViz JSON",
            f"first {rendered} examples" + (" (the export default)" if args.rendered == 8 else ""),
        ),
        ("load run + split", f"{load_seconds:.1f} s"),
        ("fast-path predict (evaluation)", f"{predict_seconds:.1f} s"),
        (
            "**export** (forward pass with scores, rollout, files, viewer)",
            f"**{export_seconds:.1f} s** ({1000 * export_seconds / max(count, 1):.1f} ms/example)",
        ),
        ("read back every example (`load_attention`)", f"{measured['read_seconds']:.1f} s"),
        *((f"size: {name}", mib(size)) for name, size in measured["sizes"].items()),
        (
            "**size on disk, total**",
            f"**{mib(total)}** ({total / max(count, 1) / 1024:.1f} KiB/example)",
        ),
        ("CPU cores available", str(os.cpu_count())),
    ]


def main(argv=None):
    args = parse_args(argv)
    from data import DataError
    from models import predict_texts
    from run_folder.runs import RunError
    from run_folder.saved_run import load_run

    start = time.perf_counter()
    try:
        run = load_run(args.run_dir)
        texts, labels = run.load_split(args.split)
    except (RunError, DataError) as error:
        print(f"bench_export.py: error: {error}", file=sys.stderr)
        return 2
    load_seconds = time.perf_counter() - start
    texts = [str(text) for text in texts[: args.num_examples]]
    labels = labels[: args.num_examples]

    start = time.perf_counter()
    predict_texts(run.model, texts)
    predict_seconds = time.perf_counter() - start

    out_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_export_"))
    try:
        measured = time_export(run, texts, labels, out_dir, args)
    finally:
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)

    rows = report_rows(run, args, len(texts), load_seconds, predict_seconds, measured)
    width = max(len(name) for name, _ in rows)
    print(f"| {'what'.ljust(width)} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
