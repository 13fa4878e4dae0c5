"""The summary of bench/bench_accuracy.py's runs and its table (bench/results/accuracy.md):
per dataset and model, the mean and spread over seeds, the wall time and the throughput."""

import statistics


def summarize(runs, peak):
    """Mean and standard deviation over seeds, wall time and throughput of one model."""
    runs = [run for run in runs if run is not None]
    if not runs:
        return None

    def spread(values):
        values = [100 * value for value in values]
        return {
            "mean": statistics.fmean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        }

    summary = {
        "seeds": len(runs),
        "test_accuracy": spread([run["test"]["accuracy"] for run in runs]),
        "test_macro_f1": spread([run["test"]["macro_f1"] for run in runs]),
        "validation_accuracy": spread([run["validation"]["accuracy"] for run in runs]),
        "wall_time_s": statistics.fmean(run["wall_time_s"] for run in runs),
        "epochs": [run.get("epochs") for run in runs],
    }
    if "epoch_seconds" in runs[0]:
        # The median epoch: the first one also traces the step for its shapes.
        seconds = statistics.median(s for run in runs for s in run["epoch_seconds"])
        summary["real_tokens_per_s"] = runs[0]["real_tokens_per_epoch"] / seconds
        summary["train_flops_per_s"] = runs[0]["train_flops_per_epoch"] / seconds
        summary["share_of_peak"] = summary["train_flops_per_s"] / peak
    return summary


def format_table(summaries):
    header = (
        "dataset",
        "model",
        "test accuracy %",
        "test macro-F1 %",
        "epochs",
        "wall time / run",
        "real tokens/s",
        "train GFLOP/s (share of peak)",
    )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for dataset, by_model in summaries.items():
        for model, summary in by_model.items():
            if summary is None:
                continue

            def spread(key, summary=summary):
                value = summary[key]
                return (
                    f"{value['mean']:.2f}"
                    if summary["seeds"] == 1
                    else f"{value['mean']:.2f} ± {value['std']:.2f}"
                )

            epochs = [epoch for epoch in summary["epochs"] if epoch is not None]
            throughput = "-"
            if "real_tokens_per_s" in summary:
                throughput = (
                    f"{summary['train_flops_per_s'] / 1e9:.1f} ({summary['share_of_peak']:.1%})"
                )
            lines.append(
                "| "
                + " | ".join(
                    (
                        dataset,
                        model.replace("_", " "),
                        spread("test_accuracy"),
                        spread("test_macro_f1"),
                        "/".join(map(str, epochs)) or "-",
                        f"{summary['wall_time_s']:.0f} s",
                        f"{summary['real_tokens_per_s']:,.0f}"
                        if "real_tokens_per_s" in summary
                        else "-",
                        throughput,
                    )
                )
                + " |"
            )
    return "\n".join(lines)
