"""What every part of a command's process shares, below `data` and `engine`: TensorFlow
started quietly (`tensorflow_start`), pinned wheels fetched with pip (`downloads`) and the
one error type of bad data (`errors`). Imports nothing of ours.
"""
