"""The live lab's speed (serve.py): start-up, one text's latency, a batch against
predict.py, and a long text's model view in Chromium, each against its goal.

Usage:
    python bench/bench_serve.py             # runs/default and runs/rotten_tomatoes_minilm
    python bench/bench_serve.py --runs runs/default --requests 50 --rounds 3
    python bench/bench_serve.py --starts 1 --requests 5 --rounds 2 --render-tokens 64

Per run, measured by a client in this process over HTTP (keep-alive):
- start: `python serve.py RUN --port 0` spawned (PYTHONPATH the checkout,
  TF_CPP_MIN_LOG_LEVEL=3), its URL read from its "serving" line, and one text posted as
  the page first asks (the run's default method, every layer's attention); seconds from
  the spawn to the answer, `--starts` times, the median; then Ctrl-C (SIGINT), which must
  exit 0. The last server stays up for the next two parts.
- latency: a text of exactly the run's cap (`sequence_length` of GET /api/runs, checked
  with the answer's `token_count`) with its prediction, conservative gradient x input and
  every layer's attention; p50 and p95 of `--requests` requests after one untimed one.
- batch: `--batch` texts, the prediction alone (`"method": null`), against
  `predict.predict(run, texts)` on the same texts in this process (`saved_run.load_run`, one
  untimed call each first), in turns, `--rounds` times; the ratio of the medians. The
  answers must agree (the largest probability difference is kept).
Then the renderer (bench/serve_render.py): a made-up `--render-tokens` text with the first
run's layers x heads, its model view timed in headless Chromium, the median of
`--renders`, after one untimed opening. Writes bench/results/serve.json and serve.md
(`--out`) and prints the table of the live lab issue's goals (the constants below).
About 5 minutes with the defaults on 2 cores. CPU-bound: run nothing else meanwhile. Run
it in the foreground: a shell starts a background job (`... &`) with SIGINT ignored, and
the servers inherit that, so the Ctrl-C part would read "still running".
"""

import argparse
import http.client
import json
import os
import platform
import select
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from serve_render import WORDS, time_model_view  # noqa: E402
from serve_report import METHOD, format_table, goals  # noqa: E402

FIRST_TEXT = "a wonderful, moving film"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        nargs="+",
        default=["runs/default", "runs/rotten_tomatoes_minilm"],
        help="finished run folders (default: the make train run and the "
        "Rotten Tomatoes MiniLM run)",
    )
    parser.add_argument("--starts", type=int, default=3, help="server starts per run")
    parser.add_argument("--requests", type=int, default=200, help="timed one-text requests")
    parser.add_argument("--batch", type=int, default=32, help="texts in the batch part")
    parser.add_argument("--rounds", type=int, default=10, help="batch rounds of each side")
    parser.add_argument("--render-tokens", type=int, default=512, help="the rendered text's tokens")
    parser.add_argument("--renders", type=int, default=3, help="timed renders")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "results",
        help="folder for serve.json and serve.md",
    )
    args = parser.parse_args(argv)
    for name in ("starts", "requests", "batch", "rounds", "render_tokens", "renders"):
        if getattr(args, name) < 1:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
            )
    return args


def _closed_by_peer(sock) -> bool:
    """Whether the other end closed `sock`: readable at once with nothing to read."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Server:
    """`python serve.py RUN_DIR --port 0` in a child process, and a keep-alive client."""

    def __init__(self, run_dir, timeout=300):
        self.started = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "serve.py"), str(run_dir), "--port", "0"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.url = self._served_url(timeout)
        self.ready_s = time.perf_counter() - self.started
        host, port = self.url.removeprefix("http://").rstrip("/").rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=timeout)

    def _served_url(self, timeout):
        """The URL of serve.py's "serving NAME at URL (Ctrl-C stops)" line."""
        output = b""
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while selector.select(max(timeout - (time.perf_counter() - self.started), 0)):
                # os.read, not readline: select cannot see a line read ahead into a buffer.
                chunk = os.read(self.process.stdout.fileno(), 4096)
                output += chunk
                for line in output.decode(errors="replace").split("\n")[:-1]:  # whole lines
                    if line.startswith("serve.py: serving ") and " at http://" in line:
                        return line.split(" at ", 1)[1].split()[0]
                if not chunk:
                    break
        self.process.kill()
        self.stderr.seek(0)
        last = (self.stderr.read().decode(errors="replace").strip().splitlines() or ["-"])[-1]
        raise RuntimeError(f"serve.py printed no URL (exit {self.process.wait()}): {last}")

    def request(self, method, path, body=None):
        """(seconds, JSON answer) of one request; fails unless 200."""
        started = time.perf_counter()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.connection.sock is not None and _closed_by_peer(self.connection.sock):
            # The server closed the idle keep-alive connection (its --timeout): a new one, as
            # a browser opens; the next connect is timed in this request.
            self.connection.close()
        self.connection.request(
            method, path, body=None if body is None else json.dumps(body), headers=headers
        )
        response = self.connection.getresponse()
        answer = response.read()
        seconds = time.perf_counter() - started
        if response.status != 200:
            raise RuntimeError(f"{method} {path} gave {response.status}: {answer[:300]!r}")
        return seconds, json.loads(answer)

    def predict(self, texts, method="default", attention=False):
        return self.request(
            "POST", "/api/predict", {"texts": texts, "method": method, "attention": attention}
        )

    def stop(self):
        """Ctrl-C: the exit code serve.py gives SIGINT."""
        self.connection.close()
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return f"still running 60 s after SIGINT: {self.process.wait()}"
        finally:
            self.process.stdout.close()
            self.stderr.close()


def start_part(run_dir, starts):
    """Seconds from the spawn to the first answer, `starts` times; the last server, running."""
    seconds, ready, exit_codes = [], [], []
    for attempt in range(starts):
        server = Server(run_dir)
        server.predict([FIRST_TEXT], attention=True)
        seconds.append(round(time.perf_counter() - server.started, 2))
        ready.append(round(server.ready_s, 2))
        print(
            f"  start {attempt + 1}: answer after {seconds[-1]:.2f} s (URL after "
            f"{ready[-1]:.2f} s)",
            flush=True,
        )
        if attempt < starts - 1:
            exit_codes.append(server.stop())
    return server, {
        "seconds": seconds,
        "ready_seconds": ready,
        "exit_codes": exit_codes,
        "median_s": statistics.median(seconds),
    }


def capped_text(server, cap):
    """A text of `cap` tokens by the server's count (a word is a token or more)."""
    words = [WORDS[index % len(WORDS)] for index in range(cap)]
    while True:
        _, answer = server.predict([" ".join(words)], method=None)
        count = answer["answers"][0]["token_count"]
        if count <= cap:
            return " ".join(words), count
        words = words[: len(words) - (count - cap)]


def latency_part(server, cap, requests):
    """p50 and p95 in ms of one capped text's prediction, METHOD and attention."""
    text, count = capped_text(server, cap)
    server.predict([text], METHOD, attention=True)  # the method's graph, traced
    client, inside = [], []
    for _ in range(requests):
        seconds, answer = server.predict([text], METHOD, attention=True)
        client.append(1000 * seconds)
        inside.append(1000 * answer["seconds"])
    return {
        "token_count": count,
        "requests": requests,
        "p50_ms": round(float(np.percentile(client, 50)), 1),
        "p95_ms": round(float(np.percentile(client, 95)), 1),
        "server_p50_ms": round(float(np.percentile(inside, 50)), 1),
        "ms": [round(value, 1) for value in client],
    }


def batch_texts(count, seed=0):
    """`count` texts of 5 to 40 words, the same for the same seed."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, rng.integers(5, 41))) for _ in range(count)]


def batch_part(server, run_dir, size, rounds):
    """The server's prediction alone against predict.predict, in turns."""
    import predict
    from run_folder import saved_run

    run, texts = saved_run.load_run(run_dir), batch_texts(size)
    server.predict(texts, method=None)  # warm-ups: the graphs, traced
    predict.predict(run, texts)
    times = {"server_s": [], "predict_s": []}
    difference = 0.0
    for turn in range(rounds):
        # In turns, each side first every other round: neither always meets a warmer cache.
        for side in ("server_s", "predict_s")[:: 1 if turn % 2 == 0 else -1]:
            started = time.perf_counter()
            if side == "server_s":
                _, answer = server.predict(texts, method=None)
            else:
                predictions = predict.predict(run, texts)
            times[side].append(round(time.perf_counter() - started, 4))
        difference = max(
            [difference]
            + [
                abs(served["probabilities"][name] - value)
                for served, prediction in zip(answer["answers"], predictions, strict=True)
                for name, value in prediction.probabilities.items()
            ]
        )
    medians = {name: round(statistics.median(values), 4) for name, values in times.items()}
    return {
        "texts": size,
        "rounds": rounds,
        **times,
        **{name.replace("_s", "_median_s"): value for name, value in medians.items()},
        "ratio": round(medians["server_s"] / medians["predict_s"], 3),
        "max_probability_difference": difference,
    }


def bench_run(run_dir, args):
    print(f"{run_dir}:", flush=True)
    server, start = start_part(Path(run_dir).resolve(), args.starts)
    try:
        _, described = server.request("GET", "/api/runs")
        [run] = described["runs"]
        latency = latency_part(server, run["sequence_length"], args.requests)
        print(f"  latency: p50 {latency['p50_ms']} ms, p95 {latency['p95_ms']} ms", flush=True)
        batch = batch_part(server, run_dir, args.batch, args.rounds)
        print(f"  batch: {batch['ratio']}x", flush=True)
    finally:
        start["exit_codes"].append(server.stop())
    return {
        "run_dir": str(run_dir),
        "name": run["name"],
        "layers": len(run["kept_heads"]),
        "heads": max(map(len, run["kept_heads"])),
        "class_names": run["class_names"],
        "sequence_length": run["sequence_length"],
        "start": start,
        "latency": latency,
        "batch": batch,
    }


def main(argv=None, browser=None):
    """Runs the bench; `browser`: a Playwright Chromium to render in (the tests' shared
    one: a process runs one Playwright), None: the render starts its own."""
    args = parse_args(argv)
    report = {
        "machine": f"{platform.processor() or platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} CPU cores",
        "date": time.strftime("%Y-%m-%d"),
        "command": " ".join(["python bench/bench_serve.py", *(argv or sys.argv[1:])]),
        "settings": {name: value for name, value in vars(args).items() if name != "out"},
        "runs": [bench_run(run_dir, args) for run_dir in args.runs],
    }
    first = report["runs"][0]
    with tempfile.TemporaryDirectory() as folder:
        report["render"] = time_model_view(
            folder,
            args.render_tokens,
            first["layers"],
            first["heads"],
            first["class_names"],
            args.renders,
            browser,
        )
    report["goals"] = [
        {"goal": goal, "measured": measured, "met": met} for goal, measured, met in goals(report)
    ]
    table = format_table(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serve.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "serve.md").write_text(table + "\n")
    print(f"\n{table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
