import csv
import os
import random
import sys
from pathlib import Path

import pytest

# Quiet TensorFlow's start-up logging in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "configs" / "tiny.yaml")


def write_reviews_fixture(path):
    """240 short 'reviews' whose label is given by two sentiment words: learnable fast."""
    rng = random.Random(0)
    positive = "good great wonderful superb fine lovely brilliant moving".split()
    negative = "bad awful boring dull terrible weak poor tedious".split()
    filler = "the a film movie plot actor story scene it was is and of".split()
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(240):
            label = index % 2
            words = rng.choices(filler, k=rng.randint(3, 12))
            words += rng.choices(positive if label else negative, k=2)
            rng.shuffle(words)
            writer.writerow([" ".join(words), "positive" if label else "negative"])
    return path


@pytest.fixture(scope="session")
def tiny_run_dir(tmp_path_factory):
    """configs/tiny.yaml trained once per session on the reviews fixture (runs/tiny).

    Shared by the evaluate.py and predict.py tests: they may add eval/ and attention/
    folders to it, but must not change or remove what train.py wrote. It also logs the
    attention images of 2 validation examples (`training.attention_images`).
    """
    sys.path.insert(0, str(ROOT))  # train.py lives at the repository root.
    import train

    data_file = write_reviews_fixture(tmp_path_factory.mktemp("data") / "reviews.csv")
    root = tmp_path_factory.mktemp("runs")
    assert train.main(["--config", TINY, "--set", "dataset.name=null",
                       f"dataset.train_file={data_file}", f"output.root={root}",
                       "training.attention_images=2"]) == 0
    return root / "tiny"
