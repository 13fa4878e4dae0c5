"""run_folder/runs.py: the run folder is replaced whole or not at all, and a run loads or
says why."""

import pytest

from config import ConfigError
from config.files import load_config
from run_folder import runs, saved_run
from tests.helpers import TINY


def test_overwrite_replaces_a_finished_run_only_when_complete(tmp_path):
    config = load_config(TINY, [f"output.root={tmp_path}"])
    final = tmp_path / "tiny"
    final.mkdir()
    (final / "old.txt").write_text("old run")
    final_dir, partial_dir, resumed = runs.prepare_run_dir(config, overwrite=True)
    assert (final_dir, partial_dir, resumed) == (final, tmp_path / "tiny.partial", False)
    assert (final / "old.txt").exists()  # Untouched until the new run is complete.
    (partial_dir / "model.keras").write_text("new run")
    runs.replace_folder(partial_dir, final_dir)
    assert sorted(path.name for path in final.iterdir()) == ["config.yaml", "model.keras"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny"]


def test_a_finished_run_is_never_overwritten_without_asking(tmp_path):
    config = load_config(TINY, [f"output.root={tmp_path}"])
    (tmp_path / "tiny").mkdir()
    with pytest.raises(ConfigError, match="already holds a finished run; pass --overwrite"):
        runs.prepare_run_dir(config, overwrite=False)


def test_staged_folder_replaces_the_old_folder_as_a_whole(tmp_path):
    final = tmp_path / "eval" / "test"
    final.mkdir(parents=True)
    (final / "old.csv").write_text("old")
    with runs.staged_folder(final) as staging:
        assert staging == tmp_path / "eval" / "test.partial" and not any(staging.iterdir())
        (staging / "new.csv").write_text("new")
        assert (final / "old.csv").exists()  # Still the old report while writing.
    assert [path.name for path in final.iterdir()] == ["new.csv"]
    assert not staging.exists()


def test_a_failed_staged_write_leaves_the_old_folder_and_no_staging(tmp_path):
    final = tmp_path / "attention"
    final.mkdir()
    (final / "index.html").write_text("old viewer")
    with pytest.raises(RuntimeError, match="export failed"), runs.staged_folder(final) as staging:
        (staging / "index.html").write_text("half")
        raise RuntimeError("export failed")
    assert (final / "index.html").read_text() == "old viewer"
    assert not (tmp_path / "attention.partial").exists()


def test_write_json_leaves_no_temporary_file(tmp_path):
    runs.write_json(tmp_path / "metrics.json", {"accuracy": 0.5})
    assert [path.name for path in tmp_path.iterdir()] == ["metrics.json"]
    assert (tmp_path / "metrics.json").read_text() == '{\n  "accuracy": 0.5\n}\n'


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda root: None, "no such run folder"),
        (lambda root: (root / "run.partial").mkdir(), "is an unfinished run: rerun its train.py"),
        (lambda root: (root / "run").mkdir(), "model.keras: missing"),
    ],
)
def test_load_run_says_what_is_wrong(tmp_path, make, message):
    make(tmp_path)
    with pytest.raises(runs.RunError, match=message):
        saved_run.load_run(tmp_path / "run")
