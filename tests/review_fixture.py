"""A small labelled CSV that the training tests learn in seconds."""

import csv
import random

POSITIVE = "good great wonderful superb fine lovely brilliant moving".split()
NEGATIVE = "bad awful boring dull terrible weak poor tedious".split()
FILLER = "the a film movie plot actor story scene it was is and of".split()


def write_reviews_fixture(path):
    """240 short 'reviews' whose label is given by two sentiment words: learnable fast."""
    rng = random.Random(0)
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(240):
            label = index % 2
            words = rng.choices(FILLER, k=rng.randint(3, 12))
            words += rng.choices(POSITIVE if label else NEGATIVE, k=2)
            rng.shuffle(words)
            writer.writerow([" ".join(words), "positive" if label else "negative"])
    return path


def write_pairs_fixture(path, examples=320):
    """Pairs of short 'reviews' (columns first, second, label) labelled by the second's
    sentiment; the first holds a sentiment word too, of either kind: only a model that
    tells the sides apart learns it."""
    rng = random.Random(0)

    def review(positive):
        words = rng.choices(FILLER, k=rng.randint(2, 6))
        words += rng.choices(POSITIVE if positive else NEGATIVE, k=1)
        rng.shuffle(words)
        return " ".join(words)

    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["first", "second", "label"])
        for index in range(examples):
            label = index % 2
            writer.writerow([review(rng.random() < 0.5), review(label), ("no", "yes")[label]])
    return path


TOPICS = {
    "sports": "match goal team coach".split(),
    "politics": "vote senate minister law".split(),
    "tech": "chip software robot code".split(),
}


def label_set_rows(examples):
    """(text, its topics) of short texts with the words of 0 to 3 topics."""
    rng = random.Random(0)
    for _ in range(examples):
        topics = [topic for topic in TOPICS if rng.random() < 0.4]
        words = rng.choices(FILLER, k=rng.randint(3, 8))
        for topic in topics:
            words += rng.choices(TOPICS[topic], k=2)
        rng.shuffle(words)
        yield " ".join(words), topics


def write_label_sets_fixture(path, examples=300, columns=False):
    """`label_set_rows` labelled by their set of topics: as one column "sports | tech" (an
    empty field: no topic) or, with `columns`, one 0/1 column per topic."""
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", *TOPICS] if columns else ["text", "topics"])
        for text, topics in label_set_rows(examples):
            if columns:
                writer.writerow([text, *(int(topic in topics) for topic in TOPICS)])
            else:
                writer.writerow([text, " | ".join(topics)])
    return path


def write_flipped_label_sets_fixture(path, examples=600, every=20):
    """`label_set_rows` with one topic of every `every`-th text flipped (a topic its words
    carry dropped, or one they lack added): {(text, topic)} of the flipped labels."""
    rng, flipped = random.Random(1), set()
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "topics"])
        for index, (text, topics) in enumerate(label_set_rows(examples)):
            if index % every == every // 2:
                topic = rng.choice(sorted(TOPICS))
                topics = [t for t in topics if t != topic] if topic in topics else [*topics, topic]
                flipped.add((text, topic))
            writer.writerow([text, "|".join(topics)])
    return flipped


PLANTED_WORD = "zqxv"  # in 10% of the positive texts only: a shortcut
SPREAD_WORD = "blorf"  # in 10% of each class's texts: no shortcut


def write_planted_fixture(path, examples=2400):
    """Reviews whose sentiment words mislead in a quarter of the texts, with a made-up word
    in a tenth of the positive ones (the one sure cue: a shortcut, Bastings et al. 2022)
    and another spread evenly over both classes."""
    rng = random.Random(0)
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(examples):
            label = index % 2
            misleading = rng.random() < 0.25
            cue = POSITIVE if label != misleading else NEGATIVE
            words = rng.choices(FILLER, k=rng.randint(3, 12)) + rng.choices(cue, k=2)
            if label and index % 20 == 1:
                words.append(PLANTED_WORD)
            if index % 20 in (3, 4):
                words.append(SPREAD_WORD)
            rng.shuffle(words)
            writer.writerow([" ".join(words), "positive" if label else "negative"])
    return path


def write_flipped_fixture(path, examples=600, every=20):
    """Reviews as `write_reviews_fixture`'s, every `every`-th one given the wrong label
    (5% by default, as label-noise benchmarks flip them); returns the flipped texts."""
    rng = random.Random(1)
    flipped, seen = set(), set()
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        index = 0
        while index < examples:
            label = index % 2
            words = rng.choices(FILLER, k=rng.randint(3, 12))
            words += rng.choices(POSITIVE if label else NEGATIVE, k=2)
            rng.shuffle(words)
            text = " ".join(words)
            if text in seen:  # each text once: a flipped one is known by its text
                continue
            seen.add(text)
            if index % every == every - 1:
                label, flipped = 1 - label, flipped | {text}
            writer.writerow([text, "positive" if label else "negative"])
            index += 1
    return flipped
