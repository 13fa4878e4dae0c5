"""SparseAdamW: AdamW that updates only the embedding rows a batch looked up."""

import keras
import tensorflow as tf


class SparseAdamW(keras.optimizers.AdamW):
    """AdamW whose sparse gradients update only the rows looked up (`sparse_adamw`).

    An embedding lookup's gradient is a `tf.IndexedSlices`: a few hundred rows of a table
    of tens of thousands. Keras' AdamW clips its slices, then makes it dense and decays
    and moves the whole table and both of its moment tables every step; for a 60,000-word
    vocabulary that is about a third of a short batch's step. Here, as in TF Addons'
    LazyAdam, a sparse gradient's rows are summed per index and clipped (so the norm is
    the dense gradient's; Keras takes it over the unsummed slices, a smaller norm when
    rows repeat), and only those rows of the moments, the weight decay and the variable
    are updated; rows a batch does not use keep their moments until they are used again.
    Dense gradients get Keras' AdamW unchanged. TensorFlow only, like the trainer; no
    `amsgrad` and no gradient accumulation (which would make the gradients dense).

    Example:
    >>> table = keras.Variable(tf.ones((4, 2)))
    >>> optimizer = SparseAdamW(learning_rate=0.1, weight_decay=0.0)
    >>> optimizer.apply([tf.IndexedSlices(tf.ones((2, 2)), tf.constant([1, 1]), (4, 2))],
    ...                 [table])
    >>> print(table.numpy().round(2))  # Row 1 moved (once: its two slices are summed).
    [[1.  1. ]
     [0.9 0.9]
     [1.  1. ]
     [1.  1. ]]
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("amsgrad", "gradient_accumulation_steps"):
            if getattr(self, name):
                raise ValueError(
                    f"SparseAdamW has no {name}. Received: {name}={getattr(self, name)!r}"
                )

    def _backend_apply_gradients(self, grads, trainable_variables):
        # Which variables' weight decay waits for update_step (rows touched only).
        self._sparse_keys = {
            self._var_key(variable)
            for grad, variable in zip(grads, trainable_variables)
            if isinstance(grad, tf.IndexedSlices)
        }
        super()._backend_apply_gradients(grads, trainable_variables)

    def _clip_gradients(self, grads):
        return super()._clip_gradients([
            _summed_per_row(grad) if isinstance(grad, tf.IndexedSlices) else grad
            for grad in grads
        ])  # fmt: skip

    def _apply_weight_decay(self, variables):
        sparse = getattr(self, "_sparse_keys", set())
        super()._apply_weight_decay(
            [variable for variable in variables if self._var_key(variable) not in sparse]
        )

    def update_step(self, gradient, variable, learning_rate):
        if not isinstance(gradient, tf.IndexedSlices):
            return super().update_step(gradient, variable, learning_rate)
        # One slice per row already: `_clip_gradients` runs on every path through `apply`.
        rows, values = gradient.indices, tf.cast(gradient.values, variable.dtype)
        variable = _tf_variable(variable)
        lr = tf.cast(learning_rate, variable.dtype)
        step = tf.cast(self.iterations + 1, variable.dtype)
        index = self._get_variable_index(variable)
        m, v = _tf_variable(self._momentums[index]), _tf_variable(self._velocities[index])
        m_rows = self.beta_1 * tf.gather(m, rows) + (1 - self.beta_1) * values
        v_rows = self.beta_2 * tf.gather(v, rows) + (1 - self.beta_2) * tf.square(values)
        m.scatter_update(tf.IndexedSlices(m_rows, rows))
        v.scatter_update(tf.IndexedSlices(v_rows, rows))
        alpha = lr * tf.sqrt(1 - self.beta_2**step) / (1 - self.beta_1**step)
        change = alpha * m_rows / (tf.sqrt(v_rows) + self.epsilon)
        if self.weight_decay and self._use_weight_decay(variable):
            # Decoupled decay, as AdamW applies it before the step, on these rows only.
            change += lr * self.weight_decay * tf.gather(variable, rows)
        variable.scatter_sub(tf.IndexedSlices(change, rows))


def _summed_per_row(gradient):
    """The same `tf.IndexedSlices` with one slice per row (repeated rows summed)."""
    rows, positions = tf.unique(gradient.indices)
    values = tf.math.unsorted_segment_sum(gradient.values, positions, tf.shape(rows)[0])
    return tf.IndexedSlices(values, rows, gradient.dense_shape)


def _tf_variable(variable):
    return variable.value if isinstance(variable, keras.Variable) else variable
