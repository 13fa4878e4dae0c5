"""data.pipelines.lower_states: the frozen blocks' states computed once, beside the token ids, give
the classifier the outputs it gives on the ids alone; in memory or in files."""

import numpy as np
import pytest

from config import ModelConfig, TextConfig
from data import LowerStates, TextSplits, make_pipelines
from models import build_classifier
from tokenization import make_vectorizer

# Texts of 1 to 12 words: batches of several lengths, padding inside each.
TEXTS = np.array(
    [
        " ".join(f"w{(index * 7 + word) % 30}" for word in range(1 + index % 12))
        for index in range(40)
    ],
    dtype=object,
)


@pytest.fixture(scope="module")
def splits():
    return TextSplits(
        train=(TEXTS, np.arange(40) % 2),
        validation=(TEXTS[:13], np.arange(13) % 2),
        test=(TEXTS[:3], np.zeros(3)),
        class_names=["a", "b"],
    )


@pytest.fixture(scope="module")
def vectorizer(splits):
    return make_vectorizer(TextConfig(vocabulary_size=40, sequence_length=16), splits.train[0])


@pytest.mark.parametrize("pooling", ["mean", "cls"])  # cls: a class token adds a position
def test_the_top_blocks_on_cached_states_give_the_full_models_outputs(splits, vectorizer, pooling):
    classifier = build_classifier(
        ModelConfig(d_model=16, num_heads=2, num_layers=3, intermediate_dim=16, pooling=pooling),
        40,
        16,
        num_classes=2,
    )
    lower = LowerStates(lambda token_ids: classifier.encoder.lower_states(token_ids, 2))
    pipelines = make_pipelines(splits, vectorizer, batch_size=8, seed=0, lower_states=lower)
    seen = 0
    for split in ("train", "validation"):
        for (token_ids, states), labels in pipelines[split]:
            assert states.shape[:2] == (token_ids.shape[0], token_ids.shape[1] + (pooling == "cls"))
            np.testing.assert_allclose(
                np.asarray(classifier(token_ids, hidden_states=states, start_block=2)),
                np.asarray(classifier(token_ids)),
                atol=1e-5,
            )
            seen += len(labels)
    assert seen == 40 + 13
    token_ids, labels = next(iter(pipelines["test"]))  # Scored once: ids only.
    assert token_ids.dtype == "int64"


def test_states_past_the_budget_go_to_files_and_are_computed_once(splits, vectorizer, tmp_path):
    calls = []

    def compute(token_ids):
        calls.append(len(token_ids))
        return np.repeat(np.asarray(token_ids, np.float32)[:, :, None], 4, axis=-1)

    lower = LowerStates(compute, folder=tmp_path, memory_mb=1e-6)
    train = make_pipelines(splits, vectorizer, batch_size=8, seed=0, lower_states=lower)["train"]
    first = [(ids.numpy(), states.numpy()) for (ids, states), _ in train]
    computed = sum(calls)
    second = [(ids.numpy(), states.numpy()) for (ids, states), _ in train]
    # A probe per split (train, validation), then each training text once.
    assert computed == 1 + 1 + 40 and sum(calls) == computed
    assert (tmp_path / "train" / "states.index").is_file()
    for ids, states in first + second:
        np.testing.assert_array_equal(states[..., 0], ids)  # each text's own states
    assert sorted(map(len, (ids for ids, _ in first))) == sorted(
        map(len, (ids for ids, _ in second))
    )
