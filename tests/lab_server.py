"""The live lab (serve.py) in a thread of the test process, for the API and page tests."""

import contextlib
import http.client
import json
import threading

import serve


@contextlib.contextmanager
def running_lab(run_dirs, **options):
    """Yields the lab's base URL ("http://127.0.0.1:PORT") serving `run_dirs` on a free
    port, as `serve.main` serves them; stops it afterwards. `options`: `serving`'s."""
    with serving(serve.start_labs([str(run_dir) for run_dir in run_dirs]), **options) as url:
        yield url


@contextlib.contextmanager
def serving(labs, address=("127.0.0.1", 0), **options):
    """Yields the base URL, on 127.0.0.1, of `serve.lab_server(labs, address, **options)`
    (hosts, timeout, workers) serving in a thread; stops it afterwards."""
    server = serve.lab_server(labs, address, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def request(url, method="GET", path="/", body=None, headers=None):
    """(status, headers, body bytes) of one request to the lab at `url`; a dict `body` is
    sent as JSON."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    headers = dict(headers or {})
    if isinstance(body, dict | list):
        body = json.dumps(body).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def predict(url, **fields):
    """The lab's JSON answer to POST /api/predict with `fields`; fails unless 200."""
    status, _, body = request(url, "POST", "/api/predict", fields)
    assert status == 200, body
    return json.loads(body)
