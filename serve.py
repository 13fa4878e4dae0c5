"""The live lab: type a text, see the prediction, every layer and head, and the words' scores.

Usage:
    python serve.py runs/default                        # http://127.0.0.1:8000/
    python serve.py runs/default runs/default_int8      # two runs, side by side
    python serve.py runs/default --port 8001
    python serve.py runs/default --host 0.0.0.0 --allow-host gpu-box.lan   # other machines

Loads each run once (Keras safe mode), answers one text as the page first asks before it
says it is ready (the graphs are traced then, not on the first request), and serves the
viewer in live mode and its JSON API (docs/live_lab.md):

    GET  /                the page
    GET  /api/runs        the runs: names, classes, heads, methods
    POST /api/predict     {"run", "texts": [...], "method", "attention": bool}

The server is `engine.evaluation.live.LabServer` (the standard library's
`ThreadingHTTPServer`, at most `--workers` connections at once); a run answers one request
at a time. Nothing a request names reaches the file system: the page is rendered once at
the start, and the runs are the ones given here. Binds 127.0.0.1 unless `--host` says
otherwise, and answers only requests addressed to a name of this machine, that host or an
`--allow-host` (`allowed_hosts`, with `--host 0.0.0.0` too). A request's tokens and
attention maps are bounded (`--max-request-tokens`, `--max-attention-mib`), and a client
has `--timeout` seconds to send one (docs/live_lab.md#bounds). Ctrl-C stops it.

Exit codes: 0 stopped with Ctrl-C, 2 a bad argument, a missing or unreadable run, a port
in use.
"""

import signal
import socket
import sys

from engine import cli
from run_folder import runs, saved_run

# engine.evaluation.live and inspection's viewer load TensorFlow, which takes seconds: the functions
# import them, so that `main` reports a bad argument at once, before that wait.

# Seconds a client has to send a request (line, headers and body) and that an idle
# connection is kept: a silent or trickling client gives its worker back by then. A 2 MiB
# body needs 140 kB/s.
SOCKET_TIMEOUT_S = 15.0
# Tokens per request, over its texts as the model reads them (each cut to the run's cap):
# an answer's work grows with them. 64 texts of 256 tokens, or 32 at BERT's cap of 512.
MAX_REQUEST_TOKENS = 16_384
# Float32 attention maps per request (layers x heads x tokens^2 x 4 bytes, summed over its
# texts), what "attention": true makes a run hold. An answer carries them as one byte per
# weight, base64 in JSON, and a forward pass holds one batch's float maps, so the peak stays
# within a small multiple: 64 texts of 512 tokens on 6 layers x 12 heads would ask for 4.5
# GiB; seven such texts fit.
MAX_ATTENTION_MIB = 512
# Connections served at once, each on a thread; the next wait to be accepted. A run answers
# one request at a time and one request uses every core: more would only queue on its lock.
MAX_WORKERS = 8
LOOPBACK = ("127.0.0.1", "localhost")
# Addresses that bind every interface: the Host a client sends could be any of its names.
EVERY_INTERFACE = ("0.0.0.0", "")


def parse_args(argv):
    parser = cli.OneLineErrorParser(
        prog="serve.py",
        description="Serve the live lab: the viewer on texts you type.",
        epilog="Example: python serve.py runs/default  (then open http://127.0.0.1:8000/)",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="train.py run folders")
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        help="port to listen on (default 8000; 0 picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1, this machine only; see "
        "docs/live_lab.md for an SSH tunnel instead of 0.0.0.0)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients may address the lab by, besides 127.0.0.1, localhost, "
        "--host and (with --host 0.0.0.0) this machine's name; repeatable",
    )
    for flag, default, metavar, what in (
        ("--max-request-tokens", MAX_REQUEST_TOKENS, "N", "tokens a request's texts may hold"),
        ("--max-attention-mib", MAX_ATTENTION_MIB, "MIB", "float32 maps a request may ask for"),
        ("--workers", MAX_WORKERS, "N", "connections served at once"),
    ):
        parser.add_argument(
            flag,
            type=cli.at_least(1),
            default=default,
            metavar=metavar,
            help=f"{what} (default {default}; docs/live_lab.md#bounds)",
        )
    parser.add_argument(
        "--timeout",
        type=float,
        default=SOCKET_TIMEOUT_S,
        metavar="SECONDS",
        help=f"for a client to send a request (default {SOCKET_TIMEOUT_S:g})",
    )
    return parser.parse_args(argv)


def allowed_hosts(host, names=()):
    """The host names a request may be addressed to: this machine's, `host` (with an
    address of every interface, this machine's name instead), and `names`, in lower case.

    Example:
    >>> allowed_hosts("127.0.0.1"), allowed_hosts("192.168.1.5", ["Lab.example"])
    (('127.0.0.1', 'localhost'), ('127.0.0.1', 'localhost', '192.168.1.5', 'lab.example'))
    >>> hosts = allowed_hosts("0.0.0.0")
    >>> socket.gethostname().lower() in hosts, "0.0.0.0" in hosts
    (True, False)
    """
    # Any name would let a page of another site reach the lab once it rebinds its own name
    # to this machine; with 0.0.0.0 the names are those clients here are known by.
    own = socket.gethostname() if host in EVERY_INTERFACE else host
    hosts = [name.lower() for name in (*LOOPBACK, own, *names) if name]
    return tuple(dict.fromkeys(hosts))


def start_labs(run_dirs, limits=None):
    """Loads each run and answers a text with each, so that its graphs are traced; `limits`
    (`engine.evaluation.live.RequestLimits`) bound each request, by default
    `MAX_REQUEST_TOKENS` and `MAX_ATTENTION_MIB`."""
    from engine.evaluation.live import MIB, LiveRun, RequestLimits, run_names

    limits = limits or RequestLimits(MAX_REQUEST_TOKENS, MAX_ATTENTION_MIB * MIB)
    labs = [
        LiveRun(name, saved_run.load_run(run_dir), limits)
        for name, run_dir in zip(run_names(run_dirs), run_dirs, strict=True)
    ]
    for lab in labs:
        lab.answer(["warming up"], attention=True)  # what the page asks first
    return labs


def live_page(labs):
    """The page: the viewer with no example yet, the first run's panels, and the live part."""
    from engine.evaluation.live import page_data
    from inspection.rendering.viewer import LIVE_PAGE_POLICY, render_page, viewer_data

    live = page_data(labs)
    first = live["runs"][0]
    data = viewer_data(
        [],
        first["class_names"],
        meta={"kept_heads": first["kept_heads"]},
        heads=first["heads"],
        dataset=first["dataset"],
    )
    return render_page("Live lab", {**data, "live": live}, policy=LIVE_PAGE_POLICY)


def lab_server(
    labs, address=("127.0.0.1", 0), hosts=LOOPBACK, timeout=SOCKET_TIMEOUT_S, workers=MAX_WORKERS
):
    """The server of `labs` (`start_labs`) and their page, bound to `address`, answering
    requests addressed to `hosts` (`allowed_hosts`); not started (`serve_forever`)."""
    from engine.evaluation.live import LabServer

    return LabServer(address, labs, live_page(labs), hosts, timeout, workers)


def main(argv=None):
    fail = cli.error_reporter("serve.py")
    try:
        args = parse_args(argv)
    except cli.UsageError as error:
        return fail(error)
    if not 0 <= args.port <= 65535:
        return fail(f"--port must be between 0 and 65535, got {args.port}")
    if not 0 < args.timeout <= 3600:
        return fail(f"--timeout must be a number of seconds from 0 to 3600, got {args.timeout}")
    allowed = allowed_hosts(args.host, args.allow_host)
    if args.host not in LOOPBACK:
        print(
            f"serve.py: warning: --host {args.host} lets other machines reach the lab, and "
            "it has no login; an SSH tunnel keeps it private (docs/live_lab.md); it answers "
            f"requests to {', '.join(allowed)} (--allow-host adds a name)",
            file=sys.stderr,
        )
    problem = next(filter(None, map(saved_run.run_dir_problem, args.run_dirs)), None)
    if problem:
        return fail(problem)
    cli.start_tensorflow()
    from engine.evaluation.live import MIB, RequestLimits

    limits = RequestLimits(args.max_request_tokens, args.max_attention_mib * MIB)
    try:
        labs = start_labs(args.run_dirs, limits)
    except runs.RunError as error:
        return fail(error)
    try:
        server = lab_server(labs, (args.host, args.port), allowed, args.timeout, args.workers)
    except OSError as error:
        return fail(
            f"cannot listen on {args.host}:{args.port} ({error.strerror}); pick another --port"
        )
    host, port = server.server_address[:2]
    print(
        f"serve.py: serving {', '.join(lab.name for lab in labs)} at "
        f"http://{host}:{port}/ (Ctrl-C stops)",
        flush=True,
    )
    # Python turns SIGINT into KeyboardInterrupt only when it was not ignored at start; a
    # server started by a script's background job inherits it ignored. Ctrl-C (or kill
    # -INT) stops it however it was started.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("serve.py: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
