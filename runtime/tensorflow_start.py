"""TensorFlow's start-up with its C++ lines hidden: the one owner of that quiet.

TensorFlow's C++ side prints its start-up lines (the absl "before InitializeLog" warning,
the oneDNN notice, "Could not find cuda drivers", CPU feature notes) straight to the
process's stderr while it is imported and while it first looks for devices, before
`TF_CPP_MIN_LOG_LEVEL` applies. A command's output should be its own, so those two steps
run with file descriptor 2 pointed at /dev/null. Numerics do not change (oneDNN stays on).
`KERAS_ATTENTION_LAB_VERBOSE=1` shows them again.

The commands start TensorFlow through `cli.start_tensorflow`; `data/__init__.py` calls it
too, because `python -m data` imports the package (and TensorFlow with it) before its
`__main__` runs. It sits below both and imports nothing of ours.
"""

import contextlib
import os
import sys

VERBOSE_ENV = "KERAS_ATTENTION_LAB_VERBOSE"

# TensorFlow's C++ log lines at run time too (level 3 keeps only fatal ones; e.g. oneDNN's
# "supports DT_BOOL only on platforms with AVX-512" note during an attention export).
# Failures still raise Python errors; KERAS_ATTENTION_LAB_VERBOSE=1 leaves the level alone.
if os.environ.get(VERBOSE_ENV, "").lower() in ("", "0", "false", "no"):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "").lower() not in ("", "0", "false", "no")


@contextlib.contextmanager
def stderr_silenced():
    """Sends what is written to file descriptor 2 (C++ included) to /dev/null meanwhile."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def start_tensorflow(find_devices: bool = True) -> None:
    """Imports TensorFlow and Keras and finds the devices, quietly unless verbose().

    `find_devices=False` leaves the devices alone: a MultiWorkerMirroredStrategy must be
    created before TensorFlow's runtime starts (the CUDA probe may then log later)."""
    with contextlib.nullcontext() if verbose() else stderr_silenced():
        import keras  # noqa: F401
        import tensorflow as tf

        if find_devices:
            tf.config.list_logical_devices()  # the CUDA probe logs here, not at import
