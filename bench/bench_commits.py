"""One benchmark at two commits: does a change keep the speed ratios it had?

Usage:
    python bench/bench_commits.py --base 76c3550 --rounds 3 bench/bench_attention.py \
        --lengths 64 256 --no-memory

Each of our benchmarks prints a table whose last ratio column (ours / the reference) was
measured in the same process, so the machine's speed cancels out of it. This script runs
the benchmark in a checkout of `--base` (a `git worktree` in a temporary folder) and in
this working tree, alternately, `--rounds` times each, the first of each round switching,
and prints the medians of each row's ratio before and after and their quotient: 1.00 means
the change kept the ratio. Runs never overlap (2 cores).
"""

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ratios(table: str) -> dict:
    """{"length | mode": ratio} of the markdown table a benchmark prints: the first column
    whose header holds " / " (e.g. "ours / Keras") of each row that starts with a number; a
    row whose ratio is not a number ("not measurable here") is left out."""
    found, column = {}, None
    for line in table.splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not cells[0][:1].isdigit():
            headers = [index for index, cell in enumerate(cells) if " / " in cell]
            column = headers[0] if headers else column
        elif column is not None and column < len(cells):
            try:
                found[" | ".join(cells[:2])] = float(cells[column])
            except ValueError:
                continue
    return found


def run(tree: Path, command: list) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree), "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, *command], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="the benchmark script and its arguments, from the repository root",
    )
    args = parser.parse_args(argv)
    measured = collections.defaultdict(lambda: {"before": [], "after": []})
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), args.base],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            for round_index in range(args.rounds):
                trees = [("before", base), ("after", ROOT)]
                for side, tree in trees[:: 1 if round_index % 2 == 0 else -1]:
                    for label, ratio in ratios(run(tree, args.command)).items():
                        measured[label][side].append(ratio)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(base)],
                cwd=ROOT,
                check=False,
                capture_output=True,
            )
    print(f"| row | ratio at {args.base} (median) | ratio now (median) | now / before |")
    print("|---|---:|---:|---:|")
    for label, sides in measured.items():
        before, after = statistics.median(sides["before"]), statistics.median(sides["after"])
        print(f"| {label} | {before:.3f} | {after:.3f} | {after / before:.3f} |")


if __name__ == "__main__":
    main()
