"""bench_serve's goals and its table (bench/results/serve.md): per run, the start, the
latency of a capped text and the batch ratio against predict.py; and the renderer's time."""

START_GOAL_S, P50_GOAL_MS, P95_GOAL_MS, RATIO_GOAL, RENDER_GOAL_MS = 15.0, 150.0, 300.0, 0.5, 2000
# The attribution method each latency request asks for, beside every layer's attention.
METHOD = "conservative_gradient_x_input"


def goals(report):
    """(goal, measured, met) of every run and of the renderer."""
    rows = []
    for run in report["runs"]:
        name, start, latency, batch = run["run_dir"], run["start"], run["latency"], run["batch"]
        rows += [
            (
                f"{name}: command to first answer <= {START_GOAL_S:g} s (median of "
                f"{len(start['seconds'])})",
                f"{start['median_s']:.2f} s",
                start["median_s"] <= START_GOAL_S,
            ),
            (
                f"{name}: Ctrl-C exits 0",
                ", ".join(map(str, start["exit_codes"])),
                all(code == 0 for code in start["exit_codes"]),
            ),
            (
                f"{name}: {latency['token_count']}-token text, prediction + {METHOD} + every "
                f"layer's attention, p50 <= {P50_GOAL_MS:g} ms ({latency['requests']} requests)",
                f"{latency['p50_ms']:.1f} ms",
                latency["p50_ms"] <= P50_GOAL_MS,
            ),
            (
                f"{name}: the same, p95 <= {P95_GOAL_MS:g} ms",
                f"{latency['p95_ms']:.1f} ms",
                latency["p95_ms"] <= P95_GOAL_MS,
            ),
            (
                f"{name}: {batch['texts']} texts, prediction alone, server / predict.predict <= "
                f"{RATIO_GOAL:g}x (medians of {batch['rounds']} rounds)",
                f"{batch['ratio']:.2f}x ({1000 * batch['server_median_s']:.0f} / "
                f"{1000 * batch['predict_median_s']:.0f} ms)",
                batch["ratio"] <= RATIO_GOAL,
            ),
        ]
    render = report["render"]
    goal = (
        f"{render.get('tokens', '?')}-token text's model view in headless Chromium < "
        f"{RENDER_GOAL_MS / 1000:g} s (navigation start to the first frame painted after "
        "every thumbnail is drawn)"
    )
    if "error" in render:
        return rows + [(goal, render["error"], False)]
    return rows + [
        (
            f"{goal}, {render['layers']} x {render['heads']} heads, median of "
            f"{len(render['page_ms'])}",
            f"{render['median_ms']:.0f} ms",
            render["median_ms"] < RENDER_GOAL_MS,
        )
    ]


def format_table(report):
    lines = [
        f"{report['machine']}, {report['date']}",
        "",
        f"    {report['command']}",
        "",
        "| goal | measured | met |",
        "|---|---|---|",
    ]
    lines += [
        f"| {goal} | {measured} | {'yes' if met else 'NO'} |"
        for goal, measured, met in goals(report)
    ]
    return "\n".join(lines)
