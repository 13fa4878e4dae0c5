"""The one error type for bad data input: raised by `data`, `downloads` and
`starting_weights.checkpoints`, which share it from here, below all three."""


class DataError(ValueError):
    """Bad user data or an unavailable dataset, with a one-line message that says the fix.

    The command line tools print the message without a traceback and exit with status 2.

    Example:
    >>> str(DataError("train.csv row 3 column 'text' is empty; fill it or remove the row"))
    "train.csv row 3 column 'text' is empty; fill it or remove the row"
    """
