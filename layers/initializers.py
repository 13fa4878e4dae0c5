"""Private to `layers/`: one fresh initializer per sublayer or weight.

Keras initializers are stateless: an instance seeded with an integer, and an
unseeded one too (it draws its integer seed once, when it is created), returns
the same values at every call for a given shape. Shared by the query, key and
value kernels, one instance would make them identical, and so would
`clone()` of a seeded instance (`keras.layers.MultiHeadAttention` clones, and
its seeded Q, K and V kernels are identical). `sublayer_initializer` gives
each weight its own copy instead, with its own seed.

Example:

>>> import keras
>>> seeded = keras.initializers.GlorotUniform(seed=1)
>>> sublayer_initializer(seeded, "query_kernel").seed  # derive_seed(1, "query_kernel")
553614693
>>> sublayer_initializer(seeded, "key_kernel").seed
1415369876
>>> seeded.seed  # the user's initializer is left as it was
1
"""

import zlib

import keras

# Derived seeds stay non-negative int32 values, which every backend's seed type holds.
_SEED_MASK = 0x7FFFFFFF


def sublayer_initializer(initializer, name):
    """A fresh copy of `initializer` for the sublayer or weight called `name`.

    - An integer seed `s` becomes `derive_seed(s, name)`: different for each
      name, the same in every process and on every backend, so two layers made
      with the same seeded initializer get identical weights, while the weights
      inside one layer differ.
    - No seed (`seed=None`): a copy that draws its own random seed, as
      `keras.layers.MultiHeadAttention` does.
    - A `keras.random.SeedGenerator` seed: the same instance. The generator
      advances at each draw, so the weights already differ, and a copy would
      restart it from the same state.
    - A plain function, or None: returned as is; there is no config to copy.

    The layer keeps the user's initializer for `get_config`; only the copies go
    to the weights.

    Args:
        initializer: anything `keras.initializers.get` accepts.
        name: the sublayer or weight name, e.g. "query_kernel".

    Returns:
        An initializer (or what `keras.initializers.get` returned).
    """
    initializer = keras.initializers.get(initializer)
    if not isinstance(initializer, keras.initializers.Initializer):
        return initializer
    if isinstance(getattr(initializer, "seed", None), keras.random.SeedGenerator):
        return initializer
    config = initializer.get_config()
    seed = config.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        config["seed"] = derive_seed(seed, name)
    return initializer.__class__.from_config(config)


def derive_seed(seed, name):
    """`crc32("<seed>/<name>")`, kept to 31 bits.

    A hash, not `seed + index`: with offsets, the layer seeded 2 would reuse
    the kernels of the layer seeded 1, shifted by one weight. crc32, not
    Python's `hash()`, which changes from process to process for strings.

    >>> derive_seed(1, "query_kernel")
    553614693
    """
    return zlib.crc32(f"{seed}/{name}".encode()) & _SEED_MASK
