"""Regenerates docs/viewer.png: a small model's attention export, opened in headless Chromium.

Run from the repository root (needs /usr/bin/chromium, about 30 s on a laptop CPU):

    .venv/bin/python docs/make_viewer_screenshot.py

The model is a small classifier of ours (2 blocks of 4 heads) trained for a few seconds on
toy reviews; it only has to give the viewer realistic content.
"""

import io
import pathlib
import sys
import tempfile

import numpy as np
import tensorflow as tf
from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from config import ModelConfig  # noqa: E402
from inspection import export_attention  # noqa: E402
from models import build_classifier  # noqa: E402

OUTPUT = pathlib.Path(__file__).resolve().parent / "viewer.png"
REVIEWS = [
    ("a moving story with great acting and a clever plot", 1),
    ("the plot was boring and the acting was flat", 0),
    ("i loved every minute of this wonderful film", 1),
    ("a dull and predictable film with terrible dialogue", 0),
    ("great cast, beautiful music and a story that stays with you", 1),
    ("i hated the ending, it was slow and boring", 0),
    ("not good at all, the worst film this year", 0),
    ("wonderful acting and a great script", 1),
]
SHOWN = ("honestly not the film i expected: slow start, but the acting is great and the ending "
         "is wonderful")


def main():
    texts = [text for text, _ in REVIEWS]
    labels = np.array([label for _, label in REVIEWS])
    vocabulary = sorted({word for text in texts + [SHOWN]
                         for word in tf.keras.preprocessing.text.text_to_word_sequence(text)})
    tf.keras.utils.set_random_seed(3)
    vectorizer = tf.keras.layers.TextVectorization(vocabulary=vocabulary,
                                                   output_sequence_length=24)
    config = ModelConfig(d_model=16, num_heads=4, num_layers=2, intermediate_dim=32,
                         dropout=0.0)
    classifier = build_classifier(config, vectorizer.vocabulary_size(), sequence_length=24,
                                  num_classes=2)
    token_ids = vectorizer(tf.constant(texts)).numpy()
    classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    classifier.fit(token_ids, labels, epochs=150, verbose=0)

    with tempfile.TemporaryDirectory() as directory:
        shown = [SHOWN] + texts[:3]
        export_attention(classifier, vectorizer, shown, directory, ["negative", "positive"],
                         true_labels=[1, 1, 0, 1], max_rendered_examples=0,
                         run_info={"model": "toy classifier, 2 blocks x 4 heads"},
                         verbose=0)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                 headless=True)
            page = browser.new_page(viewport={"width": 1240, "height": 940})
            page.goto((pathlib.Path(directory) / "index.html").as_uri())
            page.select_option("#layer-select", "1")
            # Gradient methods go below 0: the diverging colours show for and against.
            page.select_option("#method-select", "integrated_gradients")
            # Follow query 8, "but"; the SVG texts alternate query and key.
            page.locator("#lines text").nth(2 * 8).click()
            png = page.screenshot(full_page=False)
            browser.close()
    # A 256-colour palette keeps the file small; the page uses few colours.
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256)
    image.save(OUTPUT, optimize=True)
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
