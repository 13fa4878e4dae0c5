"""reliance.ClassReliance: the per-class means over the texts of the other classes, the
control subtracted, the pull toward the other classes subtracted, and the intervals."""

import numpy as np
import pytest

from inspection.methods.reliance import ClassReliance

LABELS = np.array([0, 0, 1, 1, 2, 2])


def test_the_means_are_over_the_texts_of_the_other_classes():
    rng = np.random.default_rng(0)
    changes, control = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)) * 0.1
    summary = ClassReliance(LABELS, 3, resamples=200)(changes, control)
    for label in range(3):
        others = LABELS != label
        assert summary["insertion"][label] == pytest.approx(changes[others, label].mean())
        assert summary["control"][label] == pytest.approx(control[others, label].mean())
    net = summary["insertion"] - summary["control"]
    np.testing.assert_allclose(summary["net"], net)
    for label in range(3):
        rest = np.delete(net, label).mean()
        assert summary["reliance"][label] == pytest.approx(net[label] - rest)
    for name in ("insertion", "control", "net", "reliance"):
        low, high = summary[f"{name}_ci"].T
        assert np.all(low <= summary[name] + 1e-12) and np.all(summary[name] <= high + 1e-12)


def test_a_word_that_pulls_toward_every_class_alike_relies_on_none():
    # Inserted anywhere it takes 0.2 from the text's own class and gives 0.1 to each other:
    # every class's net rise is 0.1, and no class relies on it.
    changes = np.where(LABELS[:, None] == np.arange(3), -0.2, 0.1)
    summary = ClassReliance(LABELS, 3)(changes, np.zeros((6, 3)))
    np.testing.assert_allclose(summary["net"], 0.1)
    np.testing.assert_allclose(summary["reliance"], 0.0, atol=1e-12)
    # The same rise from the control's random words: nothing is left of it.
    summary = ClassReliance(LABELS, 3)(changes, changes)
    np.testing.assert_allclose(summary["net"], 0.0)


def test_a_word_that_pulls_toward_one_class_relies_on_it():
    changes = np.zeros((6, 3))
    changes[LABELS != 2] = [[-0.25, -0.25, 0.5]] * 4
    changes[LABELS == 2, 2] = 0.0
    summary = ClassReliance(LABELS, 3)(changes, np.zeros((6, 3)))
    assert summary["insertion"][2] == pytest.approx(0.5)
    # Toward class 0 the word takes 0.25 on class 1's texts and gives nothing on class 2's.
    assert summary["insertion"][0] == pytest.approx(-0.125)
    assert summary["reliance"][2] == pytest.approx(0.5 + 0.125)
    assert summary["reliance_ci"][2][0] > 0 > summary["reliance_ci"][0][1]
