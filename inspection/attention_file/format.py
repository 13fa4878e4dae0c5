"""The attention export's format (docs/attention_format.md): its version, file names, array
keys, example ids and manifest columns, which the reader (`reader`) and the writer (`writer`)
share. It sits below both and imports nothing of ours.
"""

import re

# 2 added the words: word_index, special, words and word_importance in the manifest.
# 3 added every attribution method's scores (attributions, word_attributions) and, in
# meta.json, the methods, their cost and their faithfulness.
# 4 added kept_heads in meta.json: a pruned model's maps sit at the heads' original
# numbers, a removed head's all 0, so a reader of 3 would average those in.
FORMAT_VERSION = 4
META_FILENAME = "meta.json"
MANIFEST_FILENAME = "manifest.jsonl"
ARRAYS_FILENAME = "attention.npz"
VIEWER_FILENAME = "index.html"
ARRAY_KEY_PREFIX = "attention_"
# Example ids become npz keys and file names, so they are kept to a portable alphabet.
EXAMPLE_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")

MANIFEST_COLUMNS = (
    "example_id",
    "text",
    "tokens",
    "num_tokens",
    "true_label",
    "true_label_index",
    "predicted_label",
    "predicted_label_index",
    "correct",
    "probabilities",
    "probability_difference",
    "rollout_importance",
    "word_index",
    "special",
    "words",
    "word_importance",
    "attributions",
    "word_attributions",
)


def check_example_id(example_id):
    """Raises ValueError unless `example_id` is a str usable as a file name.

    Example:
    >>> check_example_id("00012")
    >>> check_example_id("a/b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: example_id must be a non-empty str of letters, ... Received: example_id='a/b'
    """
    if not isinstance(example_id, str) or not EXAMPLE_ID_PATTERN.match(example_id):
        raise ValueError(
            "example_id must be a non-empty str of letters, digits, '_', '-' or '.'. "
            f"Received: example_id={example_id!r}"
        )
