"""What every part of a command's process shares, below `data` and `engine`: TensorFlow
started quietly (`tensorflow_start`), pinned wheels fetched with pip (`downloads`), the
one error type of bad data (`errors`) and packages whose names load on first use
(`lazy_names`). Imports nothing of ours.
"""
