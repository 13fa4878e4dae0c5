"""The live lab: type a text, see the prediction, every layer and head, and the words' scores.

Usage:
    python serve.py runs/default                        # http://127.0.0.1:8000/
    python serve.py runs/default runs/default_int8      # two runs, side by side
    python serve.py runs/default --port 8001
    python serve.py runs/default --host 0.0.0.0         # other machines too (a warning)

Loads each run once (Keras safe mode), answers one text as the page first asks before it
says it is ready (the graphs are traced then, not on the first request), and serves the
viewer in live mode and its JSON API (docs/live_lab.md):

    GET  /                the page
    GET  /api/runs        the runs: names, classes, heads, methods
    POST /api/predict     {"run", "texts": [...], "method", "attention": bool}

The standard library's `ThreadingHTTPServer` serves it: one process, no dependency, a
thread per connection; a run answers one request at a time (`engine.evaluation.live`).
Nothing a request names reaches the file system: the page is rendered once at the start,
and the runs are the ones given here. Binds 127.0.0.1 unless `--host` says otherwise, and
answers only requests addressed to this machine or to that host (`allowed_hosts`; any,
with `--host 0.0.0.0`); a POST must be `application/json`
(which a page of another site cannot send without this server's consent) and at most
`MAX_BODY_BYTES`. Ctrl-C stops it.

Exit codes: 0 stopped with Ctrl-C, 2 a missing or unreadable run, a port in use.
"""

import argparse
import json
import sys
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from engine import cli, runs, saved_run

# engine.evaluation.live and inspection's viewer load TensorFlow, which takes seconds: the functions
# import them, so that `main` reports a bad argument at once, before that wait.

MAX_BODY_BYTES = 2 * 1024 * 1024  # 64 texts of 10,000 characters, JSON-escaped, fit
LOOPBACK = ("127.0.0.1", "localhost")
# Addresses that bind every interface: the Host a client sends could be any of its names.
EVERY_INTERFACE = ("0.0.0.0", "")
# Sent with every answer, over the page's own (`LIVE_PAGE_POLICY`: its inline script and
# style, data: images, requests to this server): what only a header can say.
HEADER_POLICY = "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def parse_args(argv):
    parser = argparse.ArgumentParser(
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
    return parser.parse_args(argv)


class LabServer(ThreadingHTTPServer):
    """The HTTP server, holding the page and the runs its handlers answer from."""

    daemon_threads = True  # Ctrl-C does not wait for open connections

    def __init__(self, address, labs, page, allowed_hosts):
        super().__init__(address, LabHandler)
        self.labs = {lab.name: lab for lab in labs}
        self.page = page.encode("utf-8")
        self.allowed_hosts = allowed_hosts  # None: any Host header
        from inspection.rendering.viewer import LIVE_PAGE_POLICY

        self.policy = LIVE_PAGE_POLICY + HEADER_POLICY


class LabHandler(BaseHTTPRequestHandler):
    server_version = "keras-attention-lab"
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's name)
        if not self._host_allowed():
            return
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/runs":
            self._json(
                HTTPStatus.OK, {"runs": [lab.describe() for lab in self.server.labs.values()]}
            )
        else:
            self._error(
                HTTPStatus.NOT_FOUND,
                "no such page: the lab serves /, /api/runs and POST /api/predict",
            )

    def do_POST(self):  # noqa: N802
        # Until the body is read, an error ends the connection: the unread body would be
        # read as the next request.
        keep_alive, self.close_connection = not self.close_connection, True
        if not self._host_allowed():
            return
        if self.path.split("?", 1)[0] != "/api/predict":
            return self._error(HTTPStatus.NOT_FOUND, "POST goes to /api/predict")
        length = self.headers.get("Content-Length") or ""
        if not (length.isascii() and length.isdigit()):
            return self._error(HTTPStatus.LENGTH_REQUIRED, "send a Content-Length header")
        if int(length) > MAX_BODY_BYTES:
            return self._error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body has {int(length)} bytes; the lab takes at most "
                f"{MAX_BODY_BYTES}: send fewer or shorter texts",
            )
        if self.headers.get_content_type() != "application/json":
            return self._error(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the body as Content-Type: application/json"
            )
        body = self.rfile.read(int(length))
        self.close_connection = not keep_alive
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return self._error(HTTPStatus.BAD_REQUEST, "the body is not JSON")
        from engine.evaluation.live import RequestError

        try:
            answer = self._answer(request)
        except RequestError as error:
            return self._error(HTTPStatus.BAD_REQUEST, str(error))
        except Exception as error:  # noqa: BLE001 (the lab keeps serving; the client hears why)
            traceback.print_exc()
            return self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"the lab failed on this request ({type(error).__name__}: "
                f"{error}); serve.py's terminal shows where",
            )
        self._send(HTTPStatus.OK, answer, "application/json")

    def _answer(self, request):
        """The JSON answer, as bytes, to a POST /api/predict body."""
        from engine.evaluation.live import RequestError, check_texts

        if not isinstance(request, dict):
            raise RequestError('the body must be a JSON object: {"run", "texts", ...}')
        unknown = sorted(set(request) - {"run", "texts", "method", "attention"})
        if unknown:
            raise RequestError(
                f"unknown fields {unknown}: the lab takes run, texts, method and attention"
            )
        lab = self._lab(request.get("run"))
        if not isinstance(request.get("attention", False), bool):
            raise RequestError("attention must be true or false")
        started = time.perf_counter()
        answers = lab.answer(
            check_texts(request.get("texts")),
            request.get("method", "default"),
            request.get("attention", False),
        )
        return json.dumps(
            {
                "run": lab.name,
                "class_names": lab.run.class_names,
                "seconds": round(time.perf_counter() - started, 4),
                "answers": answers,
            },
            allow_nan=False,
        ).encode("utf-8")

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request, a method other than GET and POST)
        as the lab's: JSON, under its policy."""
        self.close_connection = True
        self._error(code, message or HTTPStatus(code).phrase)

    def _lab(self, name):
        from engine.evaluation.live import RequestError

        labs = self.server.labs
        if name is None and len(labs) == 1:
            return next(iter(labs.values()))
        if not isinstance(name, str) or name not in labs:
            raise RequestError(f"run must be one of {sorted(labs)}; got {name!r}")
        return labs[name]

    def _host_allowed(self):
        """Refuses a request addressed to another host name (a DNS rebinding page)."""
        allowed = self.server.allowed_hosts
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        if allowed is None or host in allowed:
            return True
        self._error(
            HTTPStatus.FORBIDDEN,
            f"the lab answers requests to {', '.join(allowed)}, not to {host!r}",
        )
        return False

    def _json(self, status, data):
        self._send(status, json.dumps(data, allow_nan=False).encode("utf-8"), "application/json")

    def _error(self, status, message):
        self._json(status, {"error": message})

    def _send(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", self.server.policy)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        pass  # One line per request would bury the start message; errors go in the answers.


def allowed_hosts(host):
    """The host names a request may be addressed to: this machine's, and `host`; None
    (any) when the lab listens on every interface.

    Example:
    >>> allowed_hosts("127.0.0.1"), allowed_hosts("192.168.1.5"), allowed_hosts("0.0.0.0")
    (('127.0.0.1', 'localhost'), ('127.0.0.1', 'localhost', '192.168.1.5'), None)
    """
    if host in EVERY_INTERFACE:
        return None
    return LOOPBACK if host in LOOPBACK else LOOPBACK + (host,)


def start_labs(run_dirs):
    """Loads each run and answers a text with each, so that its graphs are traced."""
    from engine.evaluation.live import LiveRun, run_names

    labs = [
        LiveRun(name, saved_run.load_run(run_dir))
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


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("serve.py")
    if not 0 <= args.port <= 65535:
        return fail(f"--port must be between 0 and 65535, got {args.port}")
    if args.host not in LOOPBACK:
        print(
            f"serve.py: warning: --host {args.host} lets other machines reach the lab, and "
            "it has no login; an SSH tunnel keeps it private (docs/live_lab.md)",
            file=sys.stderr,
        )
    problem = next(filter(None, map(saved_run.run_dir_problem, args.run_dirs)), None)
    if problem:
        return fail(problem)
    cli.start_tensorflow()
    try:
        labs = start_labs(args.run_dirs)
    except runs.RunError as error:
        return fail(error)
    allowed = allowed_hosts(args.host)
    try:
        server = LabServer((args.host, args.port), labs, live_page(labs), allowed)
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
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("serve.py: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
