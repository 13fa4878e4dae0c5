"""Two runs compared on the same texts, for `evaluate.py RUN --compare OTHER_RUN`.

Writes, next to RUN's evaluation reports (`RUN_DIR/eval/<split>/`), named after OTHER_RUN's
folder and a hash of its path (`compare_file`):
    compare_<other>-<hash>.json  {"run", "other", "split", "examples", "agreement",
                   "accuracy", "other_accuracy", "accuracy_difference",
                   "accuracy_difference_ci", "disagreements": [{"position", "text",
                   "label", "run_label", "run_probability", "other_label",
                   "other_probability"}, ...], "attribution_examples", "method",
                   "median_spearman", "changed_words": {LABEL: [{"word", "count",
                   "run_attribution", "other_attribution", "change"}, ...]}}
    compare_<other>-<hash>.md    the same as tables
Two multi-label runs are compared on their label sets, each at its own thresholds: a
text agrees when both give it the same set, and "accuracy" is the share of texts whose
whole set is right ("metric": "subset_accuracy"); labels are shown as "a|b". The accuracy
difference (RUN minus OTHER) has a paired bootstrap interval over the texts;
disagreements come most confident first (the larger of the two runs' probabilities of
their own label). Attributions are compared toward each text's gold label (a label
set's: RUN's most probable label) on the first
`limit` texts: per text, the Spearman correlation of the two runs' word scores over the
words both runs see (a WordPiece run and a word-level run split some words differently),
then the median; per class, the words (in at least `min_count` texts) whose mean
attribution changed most, in each run's own units (logit contributions are on the scale
of each model's logits).
"""

import hashlib
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from engine.evaluation.faithfulness import tokenize
from engine.label_sets import predicted_sets, set_names
from inspection.methods.attribution import DEFAULT_METHOD
from inspection.methods.bootstrap import paired_bootstrap
from inspection.methods.forward_passes import probabilities
from inspection.methods.word_reliance import class_word_scores, text_words, word_means
from inspection.rendering.markdown_table import markdown_cell, markdown_table
from run_folder import runs

CHANGED_WORDS = 10
PREDICTION_BATCH_SIZE = 128
TABLE_DISAGREEMENTS = 20
MIN_SHARED_WORDS = 3  # a rank correlation over fewer words says nothing


def compare_file(other_dir, suffix=".json"):
    """`compare_<other run's folder name>-<8 hex digits of its full path>.json` (or
    `.md`): two runs of one folder name in different places never share a file.

    Example:
    >>> compare_file("/a/default") != compare_file("/b/default")
    True
    >>> compare_file("/a/default").startswith("compare_default-")
    True
    """
    resolved = Path(other_dir).resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:8]
    return f"compare_{resolved.name}-{digest}{suffix}"


def check_same_labels(run, other):
    """A RunError unless the two runs predict the same classes in the same order, both
    one per text or both sets."""
    if run.is_multi_label != other.is_multi_label:
        raise runs.RunError(
            f"{run.run_dir} and {other.run_dir}: one gives each text a set of labels, the "
            "other one label; compare runs of one problem shape"
        )
    if list(run.class_names) != list(other.class_names):
        raise runs.RunError(
            f"{run.run_dir} and {other.run_dir} predict different classes "
            f"({run.class_names} against {other.class_names}): compare runs of one dataset"
        )


def compare_runs(
    run,
    other,
    texts,
    labels,
    run_probabilities,
    split,
    limit=1000,
    method=DEFAULT_METHOD,
    min_count=20,
    batch_size=32,
):
    """The comparison report (see the module docstring) of `run` and `other` on the texts."""
    check_same_labels(run, other)
    labels = np.asarray(labels, dtype=np.int64)
    other_ids = tokenize(other, list(texts))
    other_probabilities = probabilities(other.parts[1], other_ids, PREDICTION_BATCH_SIZE)
    verdict = _set_verdict if run.is_multi_label else _class_verdict
    right, shown = verdict(run, run_probabilities, labels)
    other_right, other_shown = verdict(other, other_probabilities, labels)
    summary, difference = paired_bootstrap({"run": right, "other": other_right})
    accuracy_difference = difference("run", "other")
    agree = np.array([a == b for a, b in zip(shown, other_shown)], dtype=bool)
    differing = np.flatnonzero(~agree)
    confidence = np.maximum(
        run_probabilities[differing].max(-1), other_probabilities[differing].max(-1)
    )
    truth = _shown_truth(run, labels)
    disagreements = [
        {
            "position": int(index),
            "text": str(texts[index]),
            "label": truth[index],
            "run_label": shown[index],
            "run_probability": float(run_probabilities[index].max()),
            "other_label": other_shown[index],
            "other_probability": float(other_probabilities[index].max()),
        }
        for index in differing[np.argsort(-confidence, kind="stable")]
    ]
    # Attributions toward each text's gold label; a label set's: its most probable label.
    explained = run_probabilities.argmax(-1) if run.is_multi_label else labels
    scored = [
        _word_scores(each, ids[:limit], method, batch_size)
        for each, ids in ((run, tokenize(run, list(texts[:limit]))), (other, other_ids))
    ]
    return {
        "run": str(run.run_dir),
        "other": str(other.run_dir),
        "split": split,
        "examples": len(texts),
        "metric": "subset_accuracy" if run.is_multi_label else "accuracy",
        "agreement": float(agree.mean()),
        "accuracy": summary["run"]["mean"],
        "other_accuracy": summary["other"]["mean"],
        "accuracy_difference": accuracy_difference["mean"],
        "accuracy_difference_ci": accuracy_difference["ci95"],
        "disagreements": disagreements,
        "attribution_examples": min(limit, len(texts)),
        "method": method,
        "median_spearman": _median_spearman(*scored, explained[:limit]),
        "changed_words": {
            name: _changed_words(scored[0][label], scored[1][label], min_count)
            for label, name in enumerate(run.class_names)
        },
    }


def _class_verdict(run, probabilities_, labels):
    """(right (E,), the predicted class names (E,))."""
    predicted = probabilities_.argmax(-1)
    return predicted == labels, [run.class_names[index] for index in predicted]


def _set_verdict(run, probabilities_, labels):
    """A label set run's (the whole set right (E,), the sets as "a|b" (E,)), at the run's
    own thresholds."""
    predicted = predicted_sets(probabilities_, run.thresholds)
    return (predicted == (labels > 0)).all(axis=1), set_names(predicted, run.class_names)


def _shown_truth(run, labels):
    if run.is_multi_label:
        return set_names(labels > 0, run.class_names)
    return [run.class_names[label] for label in labels]


def _word_scores(run, token_ids, method, batch_size):
    """Per class, per text, {word: attribution toward the class} under `run`'s own words
    (token ids by its vectorizer; `attribute` cuts each batch to its longest text)."""
    vectorizer, classifier = run.parts
    rows, _ = text_words(token_ids, vectorizer.get_vocabulary())
    return class_word_scores(
        classifier, token_ids, rows, run.pooling, method, len(run.class_names), batch_size
    )


def _median_spearman(run_scores, other_scores, labels):
    correlations = []
    for index, label in enumerate(labels):
        first, second = run_scores[label][index], other_scores[label][index]
        shared = sorted(set(first) & set(second))
        if len(shared) < MIN_SHARED_WORDS:
            continue
        correlation = spearmanr(
            [first[word] for word in shared], [second[word] for word in shared]
        ).statistic
        if not np.isnan(correlation):  # constant scores have no ranking
            correlations.append(correlation)
    return float(np.median(correlations)) if correlations else None


def _changed_words(run_texts, other_texts, min_count):
    first, second = word_means(run_texts, min_count), word_means(other_texts, min_count)
    changes = [
        {
            "word": word,
            "count": len(first[word][1]),
            "run_attribution": first[word][0],
            "other_attribution": second[word][0],
            "change": second[word][0] - first[word][0],
        }
        for word in set(first) & set(second)
    ]
    return sorted(changes, key=lambda entry: (-abs(entry["change"]), entry["word"]))[:CHANGED_WORDS]


def write_comparison(folder, other_dir, report):
    """Writes the report's JSON and Markdown into `folder` (a staging folder)."""
    folder = Path(folder)
    runs.write_json(folder / compare_file(other_dir), report)
    runs.write_text(folder / compare_file(other_dir, ".md"), comparison_table(report) + "\n")


def comparison_table(report, disagreements=TABLE_DISAGREEMENTS):
    """The report as Markdown: the headline, the disagreements, the changed words."""
    low, high = report["accuracy_difference_ci"]
    spearman = report["median_spearman"]
    metric = report.get("metric", "accuracy").replace("_", " ")
    lines = [
        f"# {report['run']} against {report['other']} on {report['split']}",
        "",
        f"- examples: {report['examples']}; agreement {100 * report['agreement']:.2f}%",
        f"- {metric} {100 * report['accuracy']:.2f} against "
        f"{100 * report['other_accuracy']:.2f}: difference "
        f"{100 * report['accuracy_difference']:+.2f} points [95% CI {100 * low:+.2f}, "
        f"{100 * high:+.2f}]",
        f"- median Spearman correlation of the attributions ({report['method']}, toward "
        f"the gold label, first {report['attribution_examples']} texts): "
        + ("-" if spearman is None else f"{spearman:.3f}"),
        "",
        f"## Disagreements ({len(report['disagreements'])}, most confident first)",
        "",
    ]
    rows = [
        [
            entry["position"],
            entry["label"],
            f"{entry['run_label']} ({entry['run_probability']:.2f})",
            f"{entry['other_label']} ({entry['other_probability']:.2f})",
            markdown_cell(entry["text"].replace("\n", " ")[:120]),
        ]
        for entry in report["disagreements"][:disagreements]
    ]
    lines += markdown_table(["position", "label", "run", "other", "text"], rows)
    for name, entries in report["changed_words"].items():
        rows = [
            [
                markdown_cell(entry["word"]),
                entry["count"],
                f"{entry['run_attribution']:.3f}",
                f"{entry['other_attribution']:.3f}",
                f"{entry['change']:+.3f}",
            ]
            for entry in entries
        ]
        lines += [
            "",
            f"## {name}: words whose attribution changed most",
            "",
            *markdown_table(["word", "count", "run", "other", "change"], rows),
        ]
    return "\n".join(lines)
