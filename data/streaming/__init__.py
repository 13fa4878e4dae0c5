"""Streamed splits, never held whole: the driver (`streams`), a split's rows as a stream from
the user's shards or a TFDS split (`sources`), and the one pass that counts labels before
training (`scan`). Their tf.data pipelines are `data.pipelines.streamed`."""
