"""serve.py's API: its answers equal predict.py's, and each safety item of docs/live_lab.md
(paths, body and text limits, host names, content types, concurrent clients, Ctrl-C)."""

import base64
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import compress
import predict
import serve
from engine.evaluation.live import MAX_BODY_BYTES, MAX_CHARACTERS, MAX_TEXTS
from tests.lab_server import predict as ask
from tests.lab_server import request, running_lab

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["a wonderful, moving film", "dull and far too long", "the plot <b>never</b> lands"]
METHOD = "conservative_gradient_x_input"


@pytest.fixture(scope="module")
def lab(tiny_run_dir):
    with running_lab([tiny_run_dir]) as url:
        yield url


@pytest.fixture(scope="module")
def two_runs_lab(tiny_run_dir, tmp_path_factory):
    """The tiny run and its int8 copy: two runs whose answers differ a little."""
    run_dir = tmp_path_factory.mktemp("two") / "tiny"
    shutil.copytree(tiny_run_dir, run_dir, ignore=shutil.ignore_patterns("eval", "attention"))
    assert compress.main([str(run_dir), "--int8"]) == 0
    with running_lab([run_dir, run_dir.with_name("tiny_int8")]) as url:
        yield url


def predict_json(capsys, run_dir, texts, *options):
    capsys.readouterr()
    assert predict.main([str(run_dir), *texts, "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)["predictions"]


def test_answers_equal_predict_json(lab, tiny_run_dir, capsys):
    expected = predict_json(
        capsys, tiny_run_dir, TEXTS, "--explain", "--top", "1000", "--method", METHOD
    )
    answers = ask(lab, run="tiny", texts=TEXTS, method=METHOD)["answers"]
    for answer, wanted in zip(answers, expected, strict=True):
        assert answer["predicted_label"] == wanted["predicted_label"]
        assert answer["known_tokens"] == wanted["known_tokens"]
        assert answer["explanation_method"] == wanted["explanation_method"] == METHOD
        for name, probability in wanted["probabilities"].items():
            assert answer["probabilities"][name] == pytest.approx(probability, abs=1e-5)
        assert [(word["token"], word["position"]) for word in answer["tokens"]] == [
            (word["token"], word["position"]) for word in wanted["tokens"]
        ]
        np.testing.assert_allclose(
            [word["importance"] for word in answer["tokens"]],
            [word["importance"] for word in wanted["tokens"]],
            rtol=1e-4,
            atol=1e-6,
        )
    # Without a method: the prediction alone, as predict.py without --explain.
    plain = ask(lab, texts=TEXTS, method=None)["answers"]
    for answer, wanted in zip(plain, predict_json(capsys, tiny_run_dir, TEXTS), strict=True):
        assert "tokens" not in answer and "view" not in answer
        assert answer["predicted_label"] == wanted["predicted_label"]
        assert answer["probabilities"] == pytest.approx(wanted["probabilities"], abs=1e-5)


def test_attention_is_every_layer_and_head_and_rows_sum_to_one(lab):
    [runs_listed] = json.loads(request(lab, path="/api/runs")[2])["runs"]
    [answer] = ask(lab, texts=[TEXTS[0]], method="rollout", attention=True)["answers"]
    view = answer["view"]
    layers, heads, length = view["num_layers"], view["num_heads"], len(view["tokens"])
    assert layers == len(runs_listed["kept_heads"]) and heads == len(runs_listed["kept_heads"][0])
    weights = np.frombuffer(base64.b64decode(view["attention"]), np.uint8)
    maps = (
        weights.reshape(layers, heads, length, length) * np.array(view["scales"])[..., None, None]
    )
    np.testing.assert_allclose(maps.sum(axis=-1), 1.0, atol=0.02)  # one byte per weight
    assert list(view["methods"]) == ["rollout"]
    assert "attention" not in ask(lab, texts=[TEXTS[0]])["answers"][0]["view"]


def test_a_text_over_the_cap_is_cut_and_marked(lab, tiny_run_dir, capsys):
    cap = json.loads(request(lab, path="/api/runs")[2])["runs"][0]["sequence_length"]
    long_text = " ".join(["wonderful film"] * cap)
    [answer] = ask(lab, texts=[long_text], method=None)["answers"]
    assert answer["truncated"] and answer["token_count"] == 2 * cap
    assert not ask(lab, texts=["film"], method=None)["answers"][0]["truncated"]
    [wanted] = predict_json(capsys, tiny_run_dir, [long_text])
    assert answer["probabilities"] == pytest.approx(wanted["probabilities"], abs=1e-5)


@pytest.mark.parametrize(
    "path",
    [
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/model.keras",
        "/config.yaml",
        "/tiny/model.keras",
        "//etc/passwd",
        "/api/runs/../../config.yaml",
    ],
)
def test_no_path_reaches_the_file_system(lab, path):
    status, headers, body = request(lab, path=path)
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert json.loads(body)["error"].startswith("no such page")


def test_the_page_is_served_with_a_policy_that_allows_no_outside_source(lab):
    status, headers, body = request(lab, path="/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    policy = headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    # The page's own policy says as much (a static export's allows no request at all).
    assert b"img-src data:; connect-src 'self'\">" in body
    # The one URL of the page is SVG's namespace, a name that is never fetched.
    assert set(re.findall(rb"https?://[^\s\"'<>]*", body)) == {b"http://www.w3.org/2000/svg"}


def test_oversized_bodies_and_texts_are_refused(lab):
    # Refused on its Content-Length, before a byte of it is read.
    status, _, body = request(
        lab,
        "POST",
        "/api/predict",
        b"{}",
        {"Content-Type": "application/json", "Content-Length": str(MAX_BODY_BYTES + 1)},
    )
    assert status == 413 and "at most" in json.loads(body)["error"]
    status, _, body = request(
        lab,
        "POST",
        "/api/predict",
        b"{}",
        {"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    assert status == 411
    status, _, body = request(lab, "POST", "/api/predict", {"texts": ["a" * (MAX_CHARACTERS + 1)]})
    assert status == 400 and f"at most {MAX_CHARACTERS}" in json.loads(body)["error"]
    status, _, body = request(lab, "POST", "/api/predict", {"texts": ["film"] * (MAX_TEXTS + 1)})
    assert status == 400 and f"1 to {MAX_TEXTS}" in json.loads(body)["error"]


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b"{not json", {"Content-Type": "application/json"}, 400, "not JSON"),
        (b'{"texts": ["film"]}', {"Content-Type": "text/plain"}, 415, "application/json"),
        ({"run": "other", "texts": ["film"]}, {}, 400, "run must be one of ['tiny']"),
        ({"texts": ["film"], "method": "magic"}, {}, 400, "method must be null or one of"),
        ({"texts": "film"}, {}, 400, "texts must be a list of strings"),
        ({"texts": ["  "]}, {}, 400, "text 1 is empty"),
        ({"texts": ["film"], "attention": "yes"}, {}, 400, "attention must be true or false"),
        ({"texts": ["film"], "explain": True}, {}, 400, "unknown fields ['explain']"),
        ([1, 2], {}, 400, "must be a JSON object"),
    ],
)
def test_bad_requests_get_one_line_json_errors(lab, body, headers, status, message):
    got, _, answer = request(lab, "POST", "/api/predict", body, headers)
    assert got == status
    assert message in json.loads(answer)["error"]


def test_an_error_before_the_body_is_read_ends_the_connection(lab):
    # Else the unread body would be read as the next request of a keep-alive client.
    host, port = lab.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request(
            "POST",
            "/api/predict",
            body=b'{"texts": ["film"]}',
            headers={"Content-Type": "text/plain"},
        )
        response = connection.getresponse()
        assert response.status == 415 and response.getheader("Connection") == "close"
        response.read()
        # The client opens a new connection, and its next request is answered.
        connection.request(
            "POST",
            "/api/predict",
            body=b'{"texts": ["film"]}',
            headers={"Content-Type": "application/json"},
        )
        assert connection.getresponse().status == 200
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b'{"run": [], "texts": ["film"]}', {}, 400, "run must be one of"),
        (b'{"texts": ["\\ud800"]}', {}, 400, "lone surrogate"),
        (b"[" * 100_000 + b"]" * 100_000, {}, 400, "not JSON"),
        (b"{}", {"Content-Length": "\u00b2"}, 411, "Content-Length"),
    ],
)
def test_odd_requests_get_json_errors_not_a_dropped_connection(lab, body, headers, status, message):
    got, _, answer = request(
        lab, "POST", "/api/predict", body, {"Content-Type": "application/json", **headers}
    )
    assert got == status and message in json.loads(answer)["error"]


def test_http_servers_own_errors_are_json_too(lab):
    status, headers, body = request(lab, "DELETE", "/api/runs")
    assert status == 501 and headers["Content-Type"] == "application/json"
    assert "Unsupported method" in json.loads(body)["error"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]


def test_a_request_to_another_host_name_is_refused(lab):
    # A page of another site that rebinds its name to 127.0.0.1 sends its own Host.
    status, _, body = request(lab, path="/api/runs", headers={"Host": "attacker.example:80"})
    assert status == 403 and "attacker.example" in json.loads(body)["error"]
    assert request(lab, path="/api/runs", headers={"Host": "localhost:1"})[0] == 200


def test_script_bearing_texts_come_back_as_json_text(lab):
    text = '<script>alert("x")</script> </script><img src=x onerror=alert(1)>'
    status, headers, body = request(lab, "POST", "/api/predict", {"texts": [text]})
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body)["answers"][0]["text"] == text


def test_concurrent_clients_get_their_own_answers(two_runs_lab):
    texts = [
        f"{word} film, {index} times"
        for index, word in enumerate(
            ["wonderful", "dull", "moving", "boring", "brilliant", "awful"]
        )
    ]
    asks = [(run, text) for run in ("tiny", "tiny_int8") for text in texts]
    expected = {
        (run, text): ask(two_runs_lab, run=run, texts=[text])["answers"][0] for run, text in asks
    }
    # The two runs' answers differ, so an answer of the other run would be caught.
    assert (
        max(
            abs(
                expected["tiny", text]["probabilities"][name]
                - expected["tiny_int8", text]["probabilities"][name]
            )
            for text in texts
            for name in expected["tiny", text]["probabilities"]
        )
        > 1e-4
    )
    answers, errors = {}, []

    def client(run, text):
        try:
            for _ in range(3):
                [answer] = ask(two_runs_lab, run=run, texts=[text], attention=True)["answers"]
                answers.setdefault((run, text), []).append(answer)
        except Exception as error:  # noqa: BLE001 (reported by the assert below)
            errors.append(error)

    threads = [threading.Thread(target=client, args=pair) for pair in asks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and set(answers) == set(asks)
    for pair, got in answers.items():
        assert len(got) == 3
        for answer in got:
            assert answer["text"] == pair[1]
            assert answer["tokens"] == expected[pair]["tokens"]
            assert answer["probabilities"] == pytest.approx(
                expected[pair]["probabilities"], abs=1e-6
            )


def test_command_errors_are_one_line(tmp_path, capsys):
    assert serve.main([str(tmp_path / "nothere")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "nothere" in error
    assert serve.main(["runs/default", "--port", "70000"]) == 2
    assert "--port must be between 0 and 65535" in capsys.readouterr().err


def test_another_host_is_warned_about(tmp_path, capsys):
    assert serve.main([str(tmp_path / "nothere"), "--host", "0.0.0.0"]) == 2
    error = capsys.readouterr().err
    assert "warning: --host 0.0.0.0" in error and "SSH tunnel" in error


def test_ctrl_c_stops_the_server_cleanly(tiny_run_dir):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "serve.py"), str(tiny_run_dir), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        line = process.stdout.readline()
        assert "serving tiny at http://127.0.0.1:" in line, process.stderr.read()
        url = line.split(" at ")[1].split("/ ")[0]
        assert ask(url, texts=["a wonderful film"])["answers"][0]["predicted_label"]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        assert process.stderr.read().strip().endswith("serve.py: stopped")
    finally:
        process.kill()


@pytest.mark.skipif(shutil.which("curl") is None, reason="the docs' example is a curl command")
def test_the_docs_curl_example_runs(lab):
    page = (ROOT / "docs" / "live_lab.md").read_text(encoding="utf-8")
    [command] = re.findall(r"```sh\n(curl .*?)```", page, flags=re.DOTALL)
    command = command.replace("http://127.0.0.1:8000", lab).replace('"run": "default", ', "")
    completed = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=60, check=True
    )
    [answer] = json.loads(completed.stdout)["answers"]
    assert answer["explanation_method"] == METHOD and answer["tokens"]
