"""A Ctrl-C at a chosen point of training, for the resume tests."""

import keras


class InterruptAfterEpoch(keras.callbacks.Callback):
    """Raises KeyboardInterrupt when epoch `epoch` (0-based) ends, after the callbacks
    before it (the backup for a resume among them) have run."""

    def __init__(self, epoch=0):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt
