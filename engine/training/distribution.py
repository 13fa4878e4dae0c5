"""The `training.distribution` setting mapped to a `tf.distribute` strategy.

Training (train.py) runs on TensorFlow, whose tf.data pipelines feed it; these strategies
are TensorFlow's.
"""

import tensorflow as tf


def make_strategy(training):
    """Makes ops deterministic and returns `training.distribution`'s strategy."""
    if training.jit_compile:
        # Keras turns XLA off when TensorFlow's op determinism is on (not every op has a
        # deterministic XLA kernel): XLA runs are seeded but not bit-for-bit repeatable.
        print("training.jit_compile: XLA on; runs are seeded but not bit-for-bit repeatable.")
    else:
        tf.config.experimental.enable_op_determinism()
    if training.distribution == "mirrored":
        if tf.config.list_logical_devices("GPU"):
            return tf.distribute.MirroredStrategy()
        # MirroredStrategy() alone would use a single CPU; spread over all logical CPUs.
        devices = [device.name for device in tf.config.list_logical_devices("CPU")]
        if len(devices) == 1:
            print(
                "training.distribution: mirrored found no GPU and one CPU device, so it "
                "trains one replica (TensorFlow lists all cores as one device)."
            )
        return tf.distribute.MirroredStrategy(devices=devices)
    if training.distribution == "multi_worker":
        # Reads the cluster and this worker's role from the TF_CONFIG environment variable.
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()


def describe_replicas(strategy, distribution) -> str:
    """'Training on 2 replicas (mirrored): CPU:0, CPU:1', the devices of this worker."""
    replicas = strategy.num_replicas_in_sync
    if distribution == "none":  # The default strategy: TensorFlow's first GPU, else the CPU.
        names = [
            (tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU"))[0].name
        ]
    else:
        names = strategy.extended.worker_devices
    devices = ", ".join(name.split("device:")[-1] for name in names)
    plural = "replica" if replicas == 1 else "replicas"
    mode = "" if distribution == "none" else f" ({distribution})"
    return f"Training on {replicas} {plural}{mode}: {devices}"


def input_worker(strategy) -> tuple[int, int]:
    """(this worker's index, the number of workers): who reads which share of a streamed
    training split. (0, 1) in one process, mirrored or not."""
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return 0, 1
    resolver = strategy.cluster_resolver
    spec = resolver.cluster_spec()
    # A chief, when the cluster names one, counts as the first worker.
    tasks = [
        (job, index)
        for job in ("chief", "worker")
        if job in spec.jobs
        for index in range(spec.num_tasks(job))
    ]
    if (resolver.task_type, resolver.task_id) not in tasks:
        return 0, 1
    return tasks.index((resolver.task_type, resolver.task_id)), len(tasks)
