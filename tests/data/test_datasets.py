import pytest

from config import ConfigError
from data import build_datasets

ROWS = "".join(
    f"review {index} {'great' if index % 2 else 'awful'},{index % 2}\n" for index in range(60)
)


def test_build_datasets_from_config_mappings(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("text,label\n" + ROWS)
    data = build_datasets(
        {"train_file": str(path), "split_seed": 3},
        {"vocabulary_size": 100, "sequence_length": 6},
        batch_size=8,
        seed=0,
    )
    assert data.class_names == ["0", "1"]
    assert data.splits.sizes() == {"train": 48, "validation": 6, "test": 6}
    assert data.vectorizer.name == "text_vectorization"
    token_ids, labels = next(iter(data.pipelines["train"]))
    # Three words each: batches are as long as their longest text, under the cap of 6.
    assert token_ids.shape == (8, 3) and labels.shape == (8,)
    assert data.sequence_length == 6
    # The vocabulary comes from the 48 training texts only.
    train_numbers = {text.split()[1] for text in data.splits.train[0]}
    test_numbers = {text.split()[1] for text in data.splits.test[0]}
    vocabulary = set(data.vectorizer.get_vocabulary())
    assert train_numbers <= vocabulary and not test_numbers & vocabulary


@pytest.mark.parametrize(
    "values, message",
    [
        ({"name": "bbc_news", "text_col": "text"}, "dataset.text_col: unknown key"),
        ({}, "dataset.name: no dataset given"),
        (
            {"name": "bbc_news", "validation_fraction": 1.5},
            "dataset.validation_fraction: must be in \\(0, 1\\), got 1.5",
        ),
        (
            {"name": "bbc_news", "validation_fraction": 0.5, "test_fraction": 0.5},
            "validation_fraction \\+ test_fraction must be < 1",
        ),
    ],
)
def test_a_plain_mapping_is_checked_as_the_config_section_is(values, message):
    with pytest.raises(ConfigError, match=message):
        build_datasets(values, {}, batch_size=8, seed=0)
