import keras
import numpy as np
import pytest

from layers.initializers import derive_seed, sublayer_initializer
from tests.layers.layer_test_case import to_numpy


def test_seeded_copies_get_a_distinct_seed_per_name_that_never_changes():
    user = keras.initializers.GlorotUniform(seed=1)
    query = sublayer_initializer(user, "query_kernel")
    key = sublayer_initializer(user, "key_kernel")
    assert isinstance(query, keras.initializers.GlorotUniform) and query is not user
    # Literal: the rule is crc32("<seed>/<name>") & 0x7FFFFFFF, the same in every process.
    assert (query.seed, key.seed) == (553614693, 1415369876)
    assert sublayer_initializer(user, "query_kernel").seed == query.seed
    assert derive_seed(2, "query_kernel") != derive_seed(1, "query_kernel")
    assert user.seed == 1 and user.get_config()["seed"] == 1
    shape = (4, 4)
    np.testing.assert_array_equal(
        to_numpy(query(shape)), to_numpy(sublayer_initializer(user, "query_kernel")(shape))
    )
    assert not np.allclose(to_numpy(query(shape)), to_numpy(key(shape)))


def test_the_other_arguments_are_kept():
    user = keras.initializers.RandomNormal(mean=2.0, stddev=0.5, seed=7)
    copy = sublayer_initializer(user, "token_embedding")
    assert (copy.mean, copy.stddev) == (2.0, 0.5)
    assert copy.get_config() == {**user.get_config(), "seed": derive_seed(7, "token_embedding")}


def test_unseeded_copies_draw_their_own_seeds():
    user = keras.initializers.GlorotUniform()
    first, second = (sublayer_initializer(user, name) for name in ("query", "key"))
    assert first is not user and first.get_config()["seed"] is None
    assert len({user.seed, first.seed, second.seed}) == 3


@pytest.mark.parametrize("identifier", ["zeros", "glorot_uniform"])
def test_names_are_resolved_to_fresh_instances(identifier):
    copy = sublayer_initializer(identifier, "query_bias")
    assert isinstance(copy, type(keras.initializers.get(identifier)))


def test_a_seed_generator_is_shared_not_restarted():
    user = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(3))
    assert sublayer_initializer(user, "query_kernel") is user


def test_functions_and_none_are_returned_as_is():
    def ones(shape, dtype=None):
        return keras.ops.ones(shape, dtype)

    assert sublayer_initializer(ones, "query_kernel") is ones
    assert sublayer_initializer(None, "query_kernel") is None
