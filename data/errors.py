"""The one error type for bad data input."""

import dataclasses


class DataError(ValueError):
    """Bad user data or an unavailable dataset, with a one-line message that says the fix.

    The command line tools print the message without a traceback and exit with status 2.

    Example:
    >>> str(DataError("train.csv row 3 column 'text' is empty; fill it or remove the row"))
    "train.csv row 3 column 'text' is empty; fill it or remove the row"
    """


def spec_from_mapping(spec_class, values, what):
    """`spec_class(**values)`, where an unknown key is a DataError naming it and the known ones."""
    known = {field.name for field in dataclasses.fields(spec_class)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise DataError(
            f"unknown {what} key {unknown[0]!r}; known keys: {', '.join(sorted(known))}"
        )
    return spec_class(**values)
