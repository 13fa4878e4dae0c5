"""A small labelled CSV that the training tests learn in seconds."""

import csv
import random


def write_reviews_fixture(path):
    """240 short 'reviews' whose label is given by two sentiment words: learnable fast."""
    rng = random.Random(0)
    positive = "good great wonderful superb fine lovely brilliant moving".split()
    negative = "bad awful boring dull terrible weak poor tedious".split()
    filler = "the a film movie plot actor story scene it was is and of".split()
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(240):
            label = index % 2
            words = rng.choices(filler, k=rng.randint(3, 12))
            words += rng.choices(positive if label else negative, k=2)
            rng.shuffle(words)
            writer.writerow([" ".join(words), "positive" if label else "negative"])
    return path
