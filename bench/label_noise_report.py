"""The tables of bench/bench_label_noise.py's report (bench/results/label_noise.md)."""

import numpy as np
from scipy import stats


def mean_interval(values):
    """ "mean ± half-width of the 95% t-interval", in points, of fractions `values`.

    Example:
    >>> mean_interval([0.9, 0.92, 0.94])
    '92.00 ± 4.97'
    """
    values = 100 * np.asarray(values, dtype=float)
    if len(values) < 2:
        return f"{values.mean():.2f}"
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.2f} ± {half:.2f}"


def recovery_summary(rows):
    """Per dataset over its seeds: each accuracy, the points lost to the noise and won
    back by removing the suspects (mean ± 95% t-interval), and the share won back."""
    lines = [
        "| dataset | clean | noisy | noisy, top 5% removed | lost to noise | recovered | "
        "share recovered |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in dict.fromkeys(row["dataset"] for row in rows):
        chosen = [row for row in rows if row["dataset"] == dataset]
        clean, noisy, cleaned = (
            np.array([row[name] for row in chosen]) for name in ("clean", "noisy", "cleaned")
        )
        lost, won = clean - noisy, cleaned - noisy
        share = f"{won.mean() / lost.mean():.2f}" if lost.mean() > 0 else "-"
        lines.append(
            f"| {dataset} | {mean_interval(clean)} | {mean_interval(noisy)} | "
            f"{mean_interval(cleaned)} | {mean_interval(lost)} | {mean_interval(won)} "
            f"| {share} |"
        )
    return "\n".join(lines)


def format_tables(report):
    """The three Markdown tables of `report`."""
    from inspection.methods.data_map import SCORES

    lines = [
        "| dataset | recipe | seed | test acc. (noisy) | "
        + " | ".join(f"{score} recall / AUROC" for score in SCORES)
        + " | cleanlab recall / AUROC | random |",
        "|---" * (6 + len(SCORES)) + "|",
    ]
    for row in report["detection"]:
        cells = [  # "-": a row measured before the score existed
            f"{100 * row[name]['recall']:.1f}% / {row[name]['auroc']:.3f}" if name in row else "-"
            for name in (*SCORES, "cleanlab")
        ]
        lines.append(
            f"| {row['dataset']} | {row['recipe']} | {row['seed']} | "
            f"{100 * row['test_accuracy']:.2f} | " + " | ".join(cells) + " | 5.0% |"
        )
    lines += [
        "",
        "| dataset | seed | clean | noisy | top 5% removed | share recovered |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["recovery"]:
        lost = row["clean"] - row["noisy"]
        recovered = f"{(row['cleaned'] - row['noisy']) / lost:.2f}" if lost > 0 else "-"
        lines.append(
            f"| {row['dataset']} | {row['seed']} | {100 * row['clean']:.2f} | "
            f"{100 * row['noisy']:.2f} | {100 * row['cleaned']:.2f} | {recovered} |"
        )
    lines += ["", recovery_summary(report["recovery"])]
    lines += ["", "| recipe | dynamics off, s | on, s | overhead (medians) |", "|---|---|---|---|"]
    for row in report["cost"]:
        lines.append(
            f"| {row['recipe']} | {row['off_s']} | {row['on_s']} | {100 * row['overhead']:+.1f}% |"
        )
    return "\n".join(lines + ["", format_slice(report.get("slice"))])


def format_slice(rows):
    """One sentence per dataset on the planted slice."""
    sentences = []
    for row in rows or []:
        listed = "; ".join(
            f"{entry['slice']} ({entry['size']} texts, accuracy "
            f"{100 * entry['accuracy']:.1f}%, {entry['excess_errors']:.1f} "
            "excess errors)"
            for entry in row["first"]
        )
        sentences.append(
            f"Planted slice, {row['dataset']}: the first weak slices of {row['weak']} (of "
            f"{row['candidates']} candidates; overall accuracy {100 * row['accuracy']:.2f}%): "
            f"{listed}. Goal met: {'yes' if row['met'] else 'NO'}."
        )
    return "\n".join(sentences)


def merged(rows, previous):
    """`rows`, after the `previous` rows of runs not measured again (by dataset, recipe,
    seed)."""

    def key(row):
        return row.get("dataset"), row.get("recipe"), row.get("seed")

    again = {key(row) for row in rows}
    return [row for row in previous if key(row) not in again] + rows
