"""TokenDropout: drops whole words of a text while training (word dropout).

Shapes: B batch, T query (sequence) length.
"""

import keras
from keras import ops

from layers.argument_checks import check_rate


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TokenDropout(keras.layers.Layer):
    """Sets each real token id `(B, T)` to padding (0) with probability `rate` in training.

    The dropped words leave the text as if they had never been there: a masking
    embedding (`mask_zero=True`; without it they become the padding vector) hides them
    from attention and pooling, so the model must
    classify from the words that remain, as in the word dropout of deep averaging networks
    (Iyyer et al., 2015). Unlike `Dropout`, nothing is rescaled: a word is either seen or
    not. Padding stays padding, and outside training the ids pass through unchanged.

    Masking: the ids themselves carry the padding (0); the layer makes no Keras mask.

    Args:
        rate: the share of real tokens dropped, in [0, 1).
        seed: seed of the drops (a `keras.random.SeedGenerator`); None draws one.
        **kwargs: base layer arguments (`name`, ...).

    Call arguments:
        token_ids: `(B, T)` integer tensor, 0 for padding.
        training: drop only when True.

    Returns:
        `(B, T)` token ids of the same dtype.

    Example:

    >>> import numpy as np
    >>> token_ids = np.array([[5, 6, 7, 0]])
    >>> ops.convert_to_numpy(TokenDropout(0.5)(token_ids)).tolist()  # inference: unchanged
    [[5, 6, 7, 0]]
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_rate("rate", rate)
        self.rate = rate
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, token_ids, training=False):
        if not training or self.rate == 0:
            return token_ids
        kept = keras.random.uniform(ops.shape(token_ids), seed=self.seed_generator) >= self.rate
        return ops.where(kept, token_ids, ops.zeros_like(token_ids))

    def compute_output_spec(self, token_ids, training=False):
        # Ids stay ids: Keras would give a layer's symbolic output its float compute dtype.
        return keras.KerasTensor(token_ids.shape, dtype=token_ids.dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed})
        return config
