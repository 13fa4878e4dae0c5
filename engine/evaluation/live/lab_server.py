"""The live lab's HTTP server (serve.py): the page, GET /api/runs and POST /api/predict,
with what one client may cost bounded (docs/live_lab.md#bounds).

The standard library's `ThreadingHTTPServer`: one process, no dependency, at most
`workers` connections at once, each on its own thread; a run answers one request at a
time (`LiveRun`). Nothing a request names reaches the file system: the page is rendered
once at the start. A request must be addressed to an allowed host name, a POST must be
`application/json` (which a page of another site cannot send without this server's
consent) and at most `MAX_BODY_BYTES`, and a client has `timeout` seconds to send it.

Example:
>>> # server = LabServer(("127.0.0.1", 8000), labs, page, ("127.0.0.1", "localhost"),
>>> #                    timeout=15, workers=8)
>>> # server.serve_forever()
"""

import json
import socket
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from engine.evaluation.live.api import RequestError, RequestTooLarge, answer_request
from inspection.rendering.viewer import policy_of

MAX_BODY_BYTES = 2 * 1024 * 1024  # 64 texts of 10,000 characters, JSON-escaped, fit
# Sent with every answer, after the page's own policy (its inline script and style by their
# hashes, data: images, requests to this server): what only a header can say.
HEADER_POLICY = "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


class LabServer(ThreadingHTTPServer):
    """The HTTP server, holding the page and the runs its handlers answer from.

    Args:
        address: (host, port) to bind.
        labs: the `LiveRun`s it answers from.
        page: the live page's HTML (`live_page`).
        allowed_hosts: the host names requests may be addressed to (`allowed_hosts`).
        timeout: seconds a client has to send a request; an idle connection is closed then.
        workers: connections served at once; the next wait to be accepted.
    """

    # Ctrl-C does not wait for open connections: their threads are daemons, and closing the
    # server does not join them (socketserver's default joins every one, a kept-alive
    # connection's too: Ctrl-C hung for a minute and more).
    daemon_threads = True
    block_on_close = False

    def __init__(self, address, labs, page, allowed_hosts, timeout, workers):
        super().__init__(address, LabHandler)
        self.labs = {lab.name: lab for lab in labs}
        self.page = page.encode("utf-8")
        self.allowed_hosts = allowed_hosts
        self.socket_timeout = timeout
        self._workers = threading.BoundedSemaphore(workers)
        self.policy = policy_of(page) + HEADER_POLICY  # the page's own, and more

    def process_request(self, request, client_address):
        # A worker per connection, at most `workers`: past them the accept loop waits here
        # and new connections in the listen queue. The timeout bounds how long a client
        # holds a worker without sending.
        self._workers.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._workers.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._workers.release()


class LabHandler(BaseHTTPRequestHandler):
    server_version = "keras-attention-lab"
    protocol_version = "HTTP/1.1"

    def setup(self):
        self.timeout = self.server.socket_timeout  # StreamRequestHandler's, per read
        super().setup()

    def handle_one_request(self):
        # The socket timeout cuts off a silent client; this deadline one that trickles a
        # byte now and then. Past it the connection stops reading, which reads as its end.
        self._late = False
        self._deadline = threading.Timer(self.timeout, self._stop_reading)
        self._deadline.daemon = True
        self._deadline.start()
        try:
            super().handle_one_request()
        finally:
            self._deadline.cancel()

    def _stop_reading(self):
        self._late = True
        try:
            self.connection.shutdown(socket.SHUT_RD)
        except OSError:  # the client is gone already
            pass

    def _request_read(self, whole=True):
        """Stops the deadline once the request is read; a 408 if it came late or cut."""
        self._deadline.cancel()
        if self._late or not whole:
            self.close_connection = True
            self._error(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the request did not arrive within {self.timeout:g} s: send it whole, at once",
            )
            return False
        return True

    def do_GET(self):  # noqa: N802 (http.server's name)
        if not (self._request_read() and self._host_allowed()):
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
        try:
            body = self.rfile.read(int(length))
        except TimeoutError:  # nothing for `timeout` seconds
            body = b""
        if not self._request_read(whole=len(body) == int(length)):
            return
        self.close_connection = not keep_alive
        try:
            request = json.loads(body)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return self._error(HTTPStatus.BAD_REQUEST, "the body is not JSON")
        try:
            answer = answer_request(self.server.labs, request)
        except RequestTooLarge as error:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(error))
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

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request, a method other than GET and POST)
        as the lab's: JSON, under its policy."""
        self.close_connection = True
        self._error(code, message or HTTPStatus(code).phrase)

    def _host_allowed(self):
        """Refuses a request addressed to another host name (a DNS rebinding page)."""
        allowed = self.server.allowed_hosts
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower()
        if host in allowed:
            return True
        self._error(
            HTTPStatus.FORBIDDEN,
            f"the lab answers requests to {', '.join(allowed)}, not to {host!r}: open one of "
            "those, or start serve.py with --allow-host NAME",
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
