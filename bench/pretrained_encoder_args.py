"""bench_pretrained_encoder.py's command line: which checkpoint (a registered name, a
Hugging Face folder, or a random one written for `--family`), the shapes, and --quick's.

A checkpoint's family is read from its config.json; `--family` names it when the
checkpoint is random, and must agree with a given one. ELECTRA is refused with the reason:
keras-hub cannot load its folders (keras_hub_families.NOT_BENCHED).
"""

import argparse
import tempfile

from keras_hub_families import KERAS_HUB_FAMILIES, NOT_BENCHED

# Cheap to import: random_checkpoint loads torch and transformers only to write one.
from random_checkpoint import SIZES, write_random_checkpoint

from engine.training.starting_weights.checkpoints import checkpoint_folder, read_checkpoint

FAMILIES = (*KERAS_HUB_FAMILIES, *NOT_BENCHED)
DEFAULT_CHECKPOINT = "all_minilm_l6_v2"  # the default family's (BERT)
QUICK = dict(batch=2, lengths=[8, 16], repeats=3, warmups=1, peak_size=256)


def argument_parser(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--family",
        choices=FAMILIES,
        help="the checkpoint family (default: the checkpoint's; bert, with "
        f"{DEFAULT_CHECKPOINT}, when no checkpoint is given); electra is refused, keras-hub "
        "cannot load it",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--checkpoint",
        help=f"a registered checkpoint or a Hugging Face folder (default {DEFAULT_CHECKPOINT})",
    )
    source.add_argument(
        "--random-checkpoint",
        choices=tuple(SIZES),
        metavar="SIZE",
        help="bench a randomly initialised checkpoint of --family written with transformers "
        "into a temporary folder: base (BERT-base's shape, DistilBERT's 6 layers, RoBERTa's "
        "50265 tokens) or tiny (2 layers, 32 wide)",
    )
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=("inference", "train"),
        default=["inference", "train"],
        help="what to time: inference, the train step, or both (a base-sized train step at "
        "batch 32 and 256 tokens takes about a minute here)",
    )
    parser.add_argument(
        "--dropout",
        type=float,
        default=0.1,
        help="dropout of both encoders in the train step (BERT's 0.1)",
    )
    parser.add_argument(
        "--keras-hub-gelu",
        choices=("exact", "tanh"),
        default="exact",
        help="keras-hub's timed activation: exact (the checkpoint's GELU, the same function "
        "as ours; DistilBERT's and RoBERTa's backbones as shipped) or tanh (BertBackbone "
        "as shipped)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"check the script: batch {QUICK['batch']}, lengths "
        f"{QUICK['lengths']}, {QUICK['repeats']} repeats, a small peak matmul",
    )
    return parser


def parse_args(argv, description, sentences):
    """(arguments, checkpoint): the command line, with `warmups`, `peak_size` and `scratch`
    (the random checkpoint's temporary folder, or None) added and --quick's sizes filled
    in; a bad value exits 2 (argparse). `sentences`: the texts a random checkpoint's
    tokenizer is made to spell."""
    parser = argument_parser(description)
    args = parser.parse_args(argv)
    args.warmups, args.peak_size, args.scratch = 2, 2048, None
    if args.quick:
        args.batch, args.lengths, args.repeats = QUICK["batch"], QUICK["lengths"], QUICK["repeats"]
        args.warmups, args.peak_size = QUICK["warmups"], QUICK["peak_size"]
    elif args.repeats < 10:
        parser.error(
            f"--repeats must be at least 10 for stable medians (--quick to check the "
            f"script). Received: {args.repeats}"
        )
    if args.family in NOT_BENCHED:
        parser.error(f"--family {args.family}: {NOT_BENCHED[args.family]}")
    if args.random_checkpoint:
        args.scratch = tempfile.TemporaryDirectory(prefix="bench_pretrained_encoder.")
        args.family = args.family or "bert"
        folder = write_random_checkpoint(
            args.scratch.name, args.family, args.random_checkpoint, sentences
        )
    elif args.checkpoint is None and args.family not in (None, "bert"):
        parser.error(
            f"--family {args.family} needs --checkpoint FOLDER or --random-checkpoint SIZE "
            f"({DEFAULT_CHECKPOINT} is a BERT checkpoint)"
        )
    else:
        folder = checkpoint_folder(args.checkpoint or DEFAULT_CHECKPOINT)
    checkpoint = read_checkpoint(folder)
    family = checkpoint.family.model_type
    if family in NOT_BENCHED:
        parser.error(f"{args.checkpoint} is an {family} checkpoint: {NOT_BENCHED[family]}")
    if args.family not in (None, family):
        parser.error(f"--family {args.family}, but {args.checkpoint} is a {family} checkpoint")
    args.family = family
    too_long = [length for length in args.lengths if length > checkpoint.max_positions]
    if too_long:
        parser.error(
            f"--lengths must be at most the checkpoint's {checkpoint.max_positions} "
            f"positions. Received: {too_long[0]}"
        )
    return args, checkpoint
