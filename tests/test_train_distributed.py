"""train.py under distribution strategies: MirroredStrategy on two logical CPUs and two
MultiWorkerMirroredStrategy workers on 127.0.0.1, each against a single-process twin."""

import json
import math
import os
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import train
from run_folder import runs
from tests.helpers import ROOT, metrics_of, tiny_args

MIRRORED = """
import sys
import tensorflow as tf
# Must happen before TensorFlow initialises its devices, hence a fresh process.
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
sys.path.insert(0, {root!r})
import train
sys.exit(train.main(sys.argv[1:]))
"""


def assert_same_training(run_dir, single_dir):
    """Distributed and single-process runs of one global batch: the same numbers, to float32
    summation order (the replicas' gradients are summed in another order)."""
    metrics, single = metrics_of(run_dir), metrics_of(single_dir)
    assert metrics["epochs"] == single["epochs"] and metrics["best_epoch"] == single["best_epoch"]
    for split in ("validation", "test"):
        for name in ("accuracy", "macro_f1"):
            assert metrics[split][name] == single[split][name], (split, name)
        assert math.isclose(metrics[split]["loss"], single[split]["loss"], abs_tol=1e-5)
    for row, single_row in zip(
        runs.read_history(run_dir), runs.read_history(single_dir), strict=True
    ):
        assert math.isclose(float(row["loss"]), float(single_row["loss"]), abs_tol=1e-5)


# Settings of the distributed runs and their single-process twin: no dropout (each replica
# draws its own masks) and a rate high enough that gradient clipping is active.
DISTRIBUTED = ("model.dropout=0", "training.epochs=3", "training.learning_rate=0.02")


@pytest.fixture(scope="module")
def single_process_twin(tmp_path_factory, data_file):
    root = tmp_path_factory.mktemp("single")
    assert train.main(tiny_args(root, data_file, *DISTRIBUTED)) == 0
    return root / "tiny"


def test_mirrored_strategy_on_two_logical_cpus(tmp_path, data_file, single_process_twin):
    args = tiny_args(tmp_path, data_file, "training.distribution=mirrored", *DISTRIBUTED)
    result = subprocess.run(
        [sys.executable, "-c", MIRRORED.format(root=str(ROOT)), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Training on 2 replicas (mirrored): CPU:0, CPU:1" in result.stdout
    assert_same_training(tmp_path / "tiny", single_process_twin)


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def run_two_workers(args):
    """Runs train.py ARGS as two workers on 127.0.0.1; [(stdout, stderr)] of each, both
    checked to exit 0."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    workers = [
        subprocess.Popen(
            [sys.executable, "train.py", *args],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={
                **os.environ,
                "TF_CONFIG": json.dumps(
                    {"cluster": cluster, "task": {"type": "worker", "index": index}}
                ),
            },
        )
        for index in range(2)
    ]
    outputs = [worker.communicate(timeout=300) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    return outputs


def test_multi_worker_training_on_two_processes(tmp_path, data_file, single_process_twin):
    # Two workers on 127.0.0.1 train, checkpoint and save; the chief writes the run folder.
    args = tiny_args(tmp_path, data_file, "training.distribution=multi_worker", *DISTRIBUTED)
    outputs = run_two_workers(args)
    assert "Training on 2 replicas (multi_worker)" in outputs[0][0]
    assert f"worker 1 done; the chief wrote the run folder {tmp_path / 'tiny'}" in outputs[1][0]
    # The chief (worker 0) wrote the run folder; worker 1 left nothing behind.
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny"]
    # The same numbers as one process training on the same global batches.
    assert_same_training(tmp_path / "tiny", single_process_twin)
    from models import load_end_to_end_model

    model = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    np.testing.assert_allclose(np.asarray(model(np.array(["a good film"]))).sum(), 1.0, rtol=1e-5)


def test_multi_worker_training_on_a_sharded_stream(tmp_path, data_file):
    # Four shards, two workers: each trains on two of them (file sharding), the same number
    # of steps; the chief writes the run folder.
    shards = tmp_path / "shards"
    shards.mkdir()
    table = pd.read_csv(data_file)
    for index in range(4):
        table.iloc[index::4].to_csv(shards / f"part-{index}.csv", index=False)
    args = tiny_args(
        tmp_path / "runs",
        shards,
        "dataset.streaming=true",
        "training.distribution=multi_worker",
        *DISTRIBUTED,
    )
    outputs = run_two_workers(args)
    for index, (out, _) in enumerate(outputs):
        assert f"worker {index} of 2 trains on 2 of the 4 shards" in out
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == ["tiny"]
    metrics = metrics_of(tmp_path / "runs" / "tiny")
    assert metrics["epochs"] == 3 and 0.0 <= metrics["test"]["accuracy"] <= 1.0
    assert [int(row["epoch"]) for row in runs.read_history(tmp_path / "runs" / "tiny")] == [1, 2, 3]
