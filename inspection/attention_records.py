"""The attention records of a batch of texts: what the export writes, the notebook view
shows and the live lab (serve.py) answers, from one forward pass and each attribution
method's pass.

Letter legend: B batch, T token ids (+ 1 with a class token; real only once trimmed),
L layers, N heads, C classes.
"""

import functools

import tensorflow as tf

from inspection.attention_file.record import AttentionRecord
from inspection.attention_tokens import has_class_token, real_tokens, trim_scores
from inspection.export_attributions import BatchAttributions
from inspection.export_checks import check_rows, run_classifier
from inspection.methods.rollout import token_importance
from inspection.token_schemes import token_scheme
from tokenization import sequence_cap, token_counter


class RecordMaker:
    """Turns batches of texts into `AttentionRecord`s for one classifier and its vectorizer.

    Args:
        classifier: a `models.TransformerClassifier` (see `export_attention`).
        vectorizer: the run's text layer (`TextVectorization` or `WordPieceTokenizer`).
        class_names: the C class names.
        methods: the attribution methods each record carries (`check_methods`' result).
        pooling: the classifier's pooling, "mean", "max" or "cls".
        kept_heads: per block the original numbers of the heads it kept (`check_kept_heads`).

    Example:
    >>> # maker = RecordMaker(classifier, vectorizer, ["neg", "pos"], ("rollout",), "mean",
    >>> #                     kept_heads=[[0, 1]])
    >>> # [record] = maker.records(["a good film"], example_ids=["0"])
    """

    def __init__(self, classifier, vectorizer, class_names, methods, pooling, kept_heads):
        self.classifier = classifier
        self.vectorizer = vectorizer
        self.class_names = [str(name) for name in class_names]
        self.pooling = pooling
        self.kept_heads = kept_heads
        self.vocabulary = vectorizer.get_vocabulary()
        self.scheme = token_scheme(self.vocabulary)
        self.class_token = has_class_token(pooling, self.vocabulary)
        self.sequence_length = sequence_cap(vectorizer)  # the most ids a text gets
        self.attributions = BatchAttributions(classifier, methods, pooling)

    def token_ids(self, texts):
        """The vectorizer's ids of `texts`, int64 (B, T), padding (0) at the end."""
        return self._vectorize(tf.constant(list(texts), tf.string)).numpy()

    @functools.cached_property
    def _vectorize(self):
        # One graph: eagerly, WordPiece spends 7 ms on one text, 19 ms on 32.
        return tf.function(
            self.vectorizer, input_signature=[tf.TensorSpec((None,), tf.string)], autograph=False
        )

    def words_of(self, token_ids):
        """One example's real tokens (its ids (T,), padding at the end), each token's word
        index and the words' texts, as the tokenizer's `TokenScheme` reads them."""
        tokens = real_tokens(token_ids, self.vocabulary, self.class_token)
        indices = self.scheme.word_index(tokens, self.class_token)
        return tokens, indices, self.scheme.words(tokens, indices)

    def token_counts(self, texts):
        """Each text's token count before the cap, int (B,): one over `sequence_length`
        was read cut (a checkpoint's special tokens count in both)."""
        return self._token_counter(texts)

    @functools.cached_property
    def _token_counter(self):
        return token_counter(self.vectorizer)

    def records(self, texts, example_ids, true_indices=None, seed=0, token_ids=None):
        """One `AttentionRecord` per text, predicted class explained by every method.

        Args:
            texts: B raw strings.
            example_ids: B ids.
            true_indices: B class indices or Nones; None: every label unknown.
            seed: seeds the `random` method (the batch's first example index in an export).
            token_ids: the texts' ids if already vectorised.

        Raises:
            ValueError: the classifier's outputs do not fit the class names, or an
                attention row does not sum to 1 over the real tokens.
        """
        if token_ids is None:
            token_ids = self.token_ids(texts)
        probabilities, attention_scores = run_classifier(
            self.classifier, token_ids, len(self.class_names), self.class_token, self.kept_heads
        )  # (B, C), (B, L, N, T, T) (T + 1 with a class token)
        predicted = probabilities.argmax(axis=-1)  # (B,)
        self.attributions.compute(token_ids, predicted, seed=seed)
        true_indices = true_indices or [None] * len(texts)
        records = []
        for row, text in enumerate(texts):
            tokens, indices, word_texts = self.words_of(token_ids[row])
            scores = trim_scores(attention_scores[row], token_ids[row], self.class_token)
            check_rows(scores, example_ids[row], self.kept_heads)
            rollout = token_importance(scores, self.pooling)
            records.append(
                AttentionRecord(
                    example_id=example_ids[row],
                    text=text,
                    tokens=tokens,
                    attention_scores=scores,
                    probabilities=probabilities[row],
                    predicted_label_index=int(predicted[row]),
                    true_label_index=true_indices[row],
                    rollout_importance=rollout,
                    word_index=indices,
                    word_texts=word_texts,
                    attributions=self.attributions.of_example(
                        row, token_ids[row], rollout, self.class_token
                    ),
                )
            )
        return records
