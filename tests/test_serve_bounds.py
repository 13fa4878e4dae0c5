"""serve.py's bounds (docs/live_lab.md#bounds): a request's tokens and maps, the socket
timeout, the workers, run names instead of paths, the Host allow list with --host 0.0.0.0
and a script policy of hashes. Each test fails when its bound is taken away."""

import base64
import hashlib
import json
import re
import socket
import threading
import time

import pytest

import serve
from engine.evaluation.live import RequestLimits, RequestTooLarge
from engine.evaluation.live import live_run as live_run_module
from engine.evaluation.live.api import maps_bytes
from inspection.attention_records import RecordMaker
from tests.lab_server import request, serving

TIMEOUT = 1.0  # seconds, the servers' below: a cut-off client is seen at once


@pytest.fixture(scope="module")
def labs(tiny_run_dir):
    return serve.start_labs([str(tiny_run_dir)])


@pytest.fixture(scope="module")
def lab(labs):
    with serving(labs, timeout=TIMEOUT) as url:
        yield url


def post(url, body):
    return request(url, "POST", "/api/predict", body)


def one_line_error(body):
    message = json.loads(body)["error"]
    assert "\n" not in message
    return message


def test_a_request_over_its_token_budget_is_refused_before_any_model_work(labs, lab, monkeypatch):
    [live_run] = labs
    cap = json.loads(request(lab, path="/api/runs")[2])["runs"][0]["sequence_length"]
    long_text = " ".join(["wonderful film"] * cap)  # cut to the cap: `cap` tokens
    monkeypatch.setattr(live_run, "limits", RequestLimits(3 * cap, 2**30))
    forward_passes = []
    for owner, name in ((live_run_module, "probabilities"), (RecordMaker, "records")):
        real = getattr(owner, name)
        monkeypatch.setattr(
            owner,
            name,
            lambda *args, real=real, **kw: forward_passes.append(1) or real(*args, **kw),
        )
    status, _, body = post(lab, {"texts": [long_text] * 4, "method": None})
    message = one_line_error(body)
    assert status == 413 and f"hold {4 * cap:,} tokens" in message
    assert f"at most {3 * cap:,}" in message and "--max-request-tokens" in message
    assert "fewer or shorter texts" in message and forward_passes == []
    # The lab answers the next request, within the budget.
    status, _, body = post(lab, {"texts": [long_text] * 3, "method": None})
    assert status == 200 and len(json.loads(body)["answers"]) == 3 and forward_passes


def test_attention_maps_over_the_memory_cap_are_refused_and_fine_without(labs, lab, monkeypatch):
    [live_run] = labs
    cap = json.loads(request(lab, path="/api/runs")[2])["runs"][0]["sequence_length"]
    long_text = " ".join(["wonderful film"] * cap)
    one_text = maps_bytes(cap, *live_run.maps_shape)  # the tiny run has no class token
    monkeypatch.setattr(live_run, "limits", RequestLimits(10**6, 2 * one_text))
    status, _, body = post(lab, {"texts": [long_text] * 3, "attention": True})
    message = one_line_error(body)
    assert status == 413 and "--max-attention-mib" in message and "without attention" in message
    assert post(lab, {"texts": [long_text] * 3, "attention": False})[0] == 200
    status, _, body = post(lab, {"texts": [long_text] * 2, "attention": True})
    assert status == 200 and all("attention" in a["view"] for a in json.loads(body)["answers"])


def test_the_issues_request_is_refused_in_one_line():
    # 64 texts of 2,000 words with attention, cut to 512 tokens, on 6 layers x 12 heads.
    limits = RequestLimits(serve.MAX_REQUEST_TOKENS, serve.MAX_ATTENTION_MIB * 2**20)
    with pytest.raises(RequestTooLarge, match=r"^the texts hold 32,768 tokens") as refused:
        limits.check([512] * 64, 6, 12, attention=True)
    assert "\n" not in str(refused.value)
    roomy = RequestLimits(10**6, serve.MAX_ATTENTION_MIB * 2**20)
    with pytest.raises(RequestTooLarge, match=r"would take 4,608 MiB \(6 layers x 12 heads"):
        roomy.check([512] * 64, 6, 12, attention=True)
    roomy.check([512] * 7, 6, 12, attention=True)  # 504 MiB
    roomy.check([512] * 64, 6, 12, attention=False)
    assert roomy.texts_per_pass(512, 6, 12, batch_size=8) == 7


def test_a_client_that_sends_headers_and_no_body_is_cut_off(lab):
    port = int(lab.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        started = time.monotonic()
        client.sendall(
            b"POST /api/predict HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        )
        answer = received_until_closed(client)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer
    assert TIMEOUT * 0.8 < elapsed < TIMEOUT + 5


def test_a_silent_or_trickling_client_is_cut_off(lab):
    port = int(lab.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        started = time.monotonic()
        assert received_until_closed(client) == b""  # sent nothing, heard nothing
        assert time.monotonic() - started < TIMEOUT + 5
    # A byte every 0.1 s beats a timeout per read; the request's deadline still holds.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        started, stop = time.monotonic(), threading.Event()
        client.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sender = threading.Thread(target=send_slowly, args=(client, b"X-Slow: " + b"a" * 300, stop))
        sender.start()
        try:
            answer = received_until_closed(client)
        finally:
            stop.set()
            sender.join()
        assert time.monotonic() - started < TIMEOUT + 5  # the trickle lasts 30 s
    # Its 408 is lost when the lab closes on bytes it never read (a reset).
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408")


def test_connections_past_the_workers_wait_for_one(labs):
    with serving(labs, timeout=TIMEOUT, workers=1) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as silent:
            started = time.monotonic()
            status = request(url, path="/api/runs")[0]  # waits for the silent one's worker
            elapsed = time.monotonic() - started
            assert received_until_closed(silent) == b""
    assert status == 200 and TIMEOUT * 0.7 < elapsed < TIMEOUT + 5


def test_api_runs_and_the_page_name_runs_never_paths(lab, tiny_run_dir):
    [run] = json.loads(request(lab, path="/api/runs")[2])["runs"]
    assert run["name"] == "tiny" and "run_dir" not in run
    assert not any("/" in value for value in run.values() if isinstance(value, str))
    assert str(tiny_run_dir).encode() not in request(lab, path="/")[2]


def test_every_interface_keeps_the_host_check(labs):
    hosts = serve.allowed_hosts("0.0.0.0", ["Lab.example"])
    with serving(labs, ("0.0.0.0", 0), hosts=hosts) as url:
        port = url.rsplit(":", 1)[1]
        status, _, body = request(url, path="/api/runs", headers={"Host": f"evil.example:{port}"})
        assert status == 403 and "--allow-host" in one_line_error(body)
        for name in ("localhost", "LOCALHOST", "127.0.0.1", socket.gethostname(), "lab.example"):
            headers = {"Host": f"{name}:{port}"}
            assert request(url, path="/api/runs", headers=headers)[0] == 200, name


def test_the_policy_allows_the_pages_own_scripts_by_hash_and_no_other(lab):
    status, headers, page = request(lab, path="/")
    assert status == 200
    policy = headers["Content-Security-Policy"]
    [script_sources] = re.findall(r"script-src ([^;]*)", policy)
    [style_sources] = re.findall(r"style-src ([^;]*)", policy)
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    text = page.decode("utf-8")
    for tag, sources in (("script", script_sources), ("style", style_sources)):
        blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", text, flags=re.DOTALL)
        assert blocks and sources.split() == [
            f"'sha256-{base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()}'"
            for block in blocks
        ]
    # The page's own policy says the same, and the JSON answers carry it too.
    assert f'content="{headers["Content-Security-Policy"].split("; base-uri")[0]}"' in text
    assert request(lab, path="/api/runs")[1]["Content-Security-Policy"] == policy


def test_bad_bound_flags_are_one_line_errors(capsys):
    for flags, message in (
        (["--workers", "0"], "argument --workers: must be at least 1, got 0"),
        (["--max-request-tokens", "many"], "not a whole number: 'many'"),
        (["--timeout", "0"], "--timeout must be a number of seconds from 0 to 3600, got 0.0"),
    ):
        assert serve.main(["runs/default", *flags]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and message in error, error


def received_until_closed(client):
    """Everything the server sends until it closes the connection (or resets it)."""
    received = b""
    try:
        while chunk := client.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def send_slowly(client, data, stop):
    for byte in data:
        if stop.wait(0.1):
            return
        try:
            client.send(bytes([byte]))
        except OSError:  # cut off
            return
