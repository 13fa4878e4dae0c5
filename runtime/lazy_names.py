"""A package whose names are imported from their modules on first use (PEP 562), so that
importing the package itself loads nothing else (`data`, `tokenization`): a command can
read its arguments before TensorFlow's seconds of start-up.

Example:
>>> __getattr__, __dir__ = lazy_names("runtime", {"DataError": "runtime.errors"})
>>> __getattr__("DataError").__name__, "DataError" in __dir__()
('DataError', True)
"""

import importlib
import sys


def lazy_names(package, owners):
    """The module `__getattr__` and `__dir__` of `package` (its `__name__`), whose public
    names `owners` maps to the modules that define them."""

    def __getattr__(name):
        if name not in owners:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(owners[name]), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(owners))

    return __getattr__, __dir__
