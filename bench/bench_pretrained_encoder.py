"""Speed of our pretrained encoder against keras-hub's BertBackbone, same weights and shapes.

Usage:
    python bench/bench_pretrained_encoder.py [--checkpoint all_minilm_l6_v2] [--batch 32]
        [--lengths 64 256] [--repeats 10] [--dropout 0.1] [--keras-hub-gelu exact]
    python bench/bench_pretrained_encoder.py --quick   # small shapes, to check the script

Both encoders hold the same checkpoint (all-MiniLM-L6-v2 by default, or a Hugging Face
folder): ours is built from token ids and filled by `starting_weights.checkpoints`' weight table,
keras-hub's `BertBackbone.from_preset(<the folder>)` by its own `convert_bert.py`. The
checkpoint says `hidden_act: gelu`, the exact (erf) GELU that ours and Hugging Face's BERT
compute; keras-hub's BertBackbone hard-codes the tanh approximation, which moves MiniLM's
outputs by about 3e-3. So its feed-forward activation is set to the exact GELU, both compute
the same function, and the bench first checks that: the largest difference of the
last hidden states on real text and on the timed batches must be within 1e-4, else it
exits 1 (`--keras-hub-gelu tanh` times keras-hub as shipped; the check stays on the exact one).

Timed, on batches of random WordPiece ids with no padding (so both do the same work):
inference (a forward pass, training=False, to the sequence output) and a train step
(forward with dropout, mean-pooled states into a Dense head, cross-entropy, gradients and
an AdamW update of every weight the loss reaches). Each is one `tf.function`; after
warm-up (tracing) the two encoders run interleaved, one step each in turn (the order
reversed every round), and the table shows medians and the ratio ours / keras-hub.

FLOPs are counted analytically by bench/train_cost.py's `forward_flops` (2·M·N·K per
matmul; per block the Q, K, V and output projections, QKᵀ and the weighted sum of V, the
feed-forward; a train step is 3 forward passes plus the head); FLOP/s is that over the
median time, and the share of peak divides it by a float32 matmul timed the same way.
"""

import argparse
import dataclasses
import datetime
import os
import platform
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_attention import interleaved_medians_ms  # noqa: E402  (bench/ is the script's folder)
from train_cost import forward_flops, matmul_peak_flops  # noqa: E402

from config import ModelConfig  # noqa: E402
from engine.training.starting_weights.checkpoints import (  # noqa: E402
    checkpoint_folder,
    read_checkpoint,
)
from engine.training.starting_weights.pretrained_encoder import encoder_from_token_ids  # noqa: E402

TOLERANCE = 1e-4  # largest |ours - keras-hub| of a hidden state allowed
NUM_CLASSES, LEARNING_RATE, WEIGHT_DECAY = 2, 1e-4, 0.01
ENCODERS = ("ours", "keras-hub")
MODES = ("inference", "train step")
# Real text for the equality check, in words both the MiniLM and the tests' tiny vocabulary
# know; padded to the longest, so the padding masks are exercised too.
SENTENCES = (
    "The film was very good!",
    "A bad movie, not the plot.",
    "Acting in the cafe's play was not very good, the plot was.",
)
QUICK = dict(batch=2, lengths=[8, 16], repeats=3, warmups=1, peak_size=256)


def build_ours(checkpoint, dropout):
    """Our encoder, token ids (B, T) -> last hidden states (B, T, D), with the weights."""
    return encoder_from_token_ids(checkpoint, dropout=dropout, attention_dropout=dropout)


def build_keras_hub(checkpoint, dropout):
    """keras-hub's BertBackbone from the same folder (its Hugging Face converter)."""
    # dropout: embeddings, attention weights and both residual branches, as ours above.
    return keras_hub.models.BertBackbone.from_preset(str(checkpoint.folder), dropout=dropout)


def set_gelu(backbone, approximate):
    """Sets the feed-forward activation of every block of a BertBackbone.

    BertBackbone takes no activation argument (it builds `gelu_approximate`); the Dense
    layer reads `activation` when called, so setting it before tracing changes the graph.
    """
    for block in backbone.transformer_layers:
        block._feedforward_intermediate_dense.activation = lambda x: keras.activations.gelu(
            x, approximate=approximate
        )


def forward_functions(ours, backbone):
    """{encoder: (token_ids (B, T), training) -> last hidden states (B, T, D)}."""

    def keras_hub_forward(token_ids, training):
        inputs = {
            "token_ids": token_ids,
            "segment_ids": tf.zeros_like(token_ids),
            "padding_mask": tf.not_equal(token_ids, 0),
        }  # (B, T) each
        return backbone(inputs, training=training)["sequence_output"]

    return {
        "ours": lambda token_ids, training: ours(token_ids, training=training),
        "keras-hub": keras_hub_forward,
    }


def trainable_weights(ours, backbone):
    """{encoder: the variables the train step's loss reaches}: all of ours; keras-hub's
    less its pooler (a Dense on [CLS] whose output the mean-pooled head does not use)."""
    pooler = {id(variable) for variable in backbone.get_layer("pooled_dense").weights}
    return {
        "ours": list(ours.trainable_variables),
        "keras-hub": [v for v in backbone.trainable_variables if id(v) not in pooler],
    }


def make_train_step(forward, variables, d_model):
    """A `tf.function` (token_ids (B, T), labels (B,)) -> loss that updates `variables`
    and a fresh Dense head with AdamW. It retraces once per new shape."""
    head = keras.layers.Dense(NUM_CLASSES, kernel_initializer=keras.initializers.GlorotUniform(0))
    head.build((None, d_model))
    variables = [*variables, *head.trainable_variables]
    optimizer = keras.optimizers.AdamW(learning_rate=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    optimizer.build(variables)

    @tf.function
    def train_step(token_ids, labels):
        with tf.GradientTape() as tape:
            hidden = forward(token_ids, training=True)  # (B, T, D)
            logits = head(tf.reduce_mean(hidden, axis=1))  # (B, C); no padding to leave out
            loss = tf.reduce_mean(
                keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
            )
        optimizer.apply(tape.gradient(loss, variables), variables)
        return loss

    return train_step


def step_flops(checkpoint, batch, length):
    """{mode: FLOPs of one step} of the encoder on (batch, length) ids; the train step adds
    the head and counts 3 forward passes (forward, then gradients of activations and of
    weights). Embeddings, softmax, norms and the optimizer are not counted (train_cost)."""
    m = dataclasses.replace(
        checkpoint.model_config(ModelConfig()), pooling="mean", head_hidden_dim=0
    )
    return {
        "inference": forward_flops(m, 0, batch, length),
        "train step": 3 * forward_flops(m, NUM_CLASSES, batch, length),
    }


def max_difference(a, b, token_ids):
    """Largest |a - b| over the hidden states (B, T, D) of real tokens (id != 0)."""
    real = np.asarray(token_ids) != 0
    return float(np.abs(np.asarray(a) - np.asarray(b))[real].max())


def sentence_ids(checkpoint):
    """SENTENCES as WordPiece ids (B, T), padded with 0 to the longest."""
    return tf.cast(checkpoint.tokenizer()(tf.constant(SENTENCES)), tf.int32)


def random_ids(vocabulary_size, batch, length):
    """(batch, length) ids drawn from the vocabulary, never 0: every token is real."""
    rng = np.random.default_rng(length)
    return tf.constant(rng.integers(1, vocabulary_size, size=(batch, length)), tf.int32)


def parse_args(argv):
    """(arguments, checkpoint): the command line, with `warmups` and `peak_size` added and
    --quick's sizes filled in; a bad value exits 2 (argparse)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default="all_minilm_l6_v2",
        help="a registered checkpoint or a Hugging Face BERT folder",
    )
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=10)
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
        help="keras-hub's timed activation: exact (the checkpoint's GELU, "
        "the same function as ours) or tanh (BertBackbone as shipped)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"check the script: batch {QUICK['batch']}, lengths "
        f"{QUICK['lengths']}, {QUICK['repeats']} repeats, a small peak matmul",
    )
    args = parser.parse_args(argv)
    args.warmups, args.peak_size = 2, 2048
    if args.quick:
        args.batch, args.lengths, args.repeats = QUICK["batch"], QUICK["lengths"], QUICK["repeats"]
        args.warmups, args.peak_size = QUICK["warmups"], QUICK["peak_size"]
    elif args.repeats < 10:
        parser.error(
            f"--repeats must be at least 10 for stable medians (--quick to check the "
            f"script). Received: {args.repeats}"
        )
    checkpoint = read_checkpoint(checkpoint_folder(args.checkpoint))
    too_long = [length for length in args.lengths if length > checkpoint.max_positions]
    if too_long:
        parser.error(
            f"--lengths must be at most the checkpoint's {checkpoint.max_positions} "
            f"positions. Received: {too_long[0]}"
        )
    return args, checkpoint


def inference_functions(forwards):
    """{encoder: a `tf.function` token_ids (B, T) -> last hidden states, training=False}."""
    return {
        name: tf.function(lambda token_ids, f=forward: f(token_ids, training=False))
        for name, forward in forwards.items()
    }


def largest_difference(checkpoint, ours, backbone, forwards, batches):
    """The largest |ours - keras-hub| with the exact GELU, on SENTENCES and the timed
    `batches` (which traces the inference steps), printed with keras-hub as shipped."""
    text = sentence_ids(checkpoint)
    set_gelu(backbone, approximate=True)
    shipped = max_difference(ours(text), forwards["keras-hub"](text, False), text)
    set_gelu(backbone, approximate=False)
    differences = [max_difference(ours(text), forwards["keras-hub"](text, False), text)]
    inference = inference_functions(forwards)
    for token_ids in batches.values():
        differences.append(
            max_difference(*(inference[name](token_ids) for name in ENCODERS), token_ids)
        )
    difference = max(differences)
    print(
        f"max |ours - keras-hub| of the last hidden states, real tokens: {difference:.1e} "
        f"(exact GELU; {text.shape[0]} sentences and the timed batches; tolerance "
        f"{TOLERANCE:.0e}); keras-hub as shipped (tanh GELU): {shipped:.1e}"
    )
    return difference


def print_timings(args, checkpoint, batches, inference, train, peak):
    """The setup, then a table row per (length, mode): medians, ratio, FLOP/s, share of peak."""
    title = os.path.basename(os.path.normpath(args.checkpoint))
    print(
        f"{title}: {checkpoint.num_layers} blocks, d_model {checkpoint.d_model}, "
        f"{checkpoint.num_heads} heads, intermediate {checkpoint.intermediate_dim}; batch "
        f"{args.batch}, no padding, dropout {args.dropout} in the train step, AdamW; "
        f"keras-hub with the {args.keras_hub_gelu} GELU"
    )
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}, keras-hub "
        f"{keras_hub.__version__}, {datetime.date.today().isoformat()}; median of "
        f"{args.repeats} interleaved runs after {args.warmups} warm-up"
    )
    print(f"peak: float32 matmul {args.peak_size}x{args.peak_size}, {peak / 1e9:.1f} GFLOP/s")
    print()
    print(
        "| length | mode | ours (ms) | keras-hub (ms) | ours / keras-hub | ours (GFLOP/s) "
        "| share of peak |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|", flush=True)
    for length, token_ids in batches.items():
        labels = tf.constant(np.arange(args.batch) % NUM_CLASSES)
        steps = {
            "inference": {name: (lambda f=inference[name], x=token_ids: f(x)) for name in ENCODERS},
            "train step": {
                name: (lambda f=train[name], x=token_ids, y=labels: f(x, y)) for name in ENCODERS
            },
        }
        flops = step_flops(checkpoint, args.batch, length)
        for mode in MODES:
            ms = interleaved_medians_ms(steps[mode], args.repeats, args.warmups)
            rate = flops[mode] / (ms["ours"] / 1000)
            print(
                f"| {length} | {mode} | {ms['ours']:.1f} | {ms['keras-hub']:.1f} | "
                # 3 significant digits: a tiny --quick model on a busy CPU runs well
                # under 0.1 GFLOP/s, which one decimal printed as 0.0.
                f"{ms['ours'] / ms['keras-hub']:.2f} | {rate / 1e9:.3g} | {rate / peak:.1%} |",
                flush=True,
            )


def main(argv=None):
    args, checkpoint = parse_args(argv)
    keras.utils.set_random_seed(0)
    ours, backbone = build_ours(checkpoint, args.dropout), build_keras_hub(checkpoint, args.dropout)
    forwards = forward_functions(ours, backbone)
    batches = {
        length: random_ids(len(checkpoint.vocabulary), args.batch, length)
        for length in args.lengths
    }

    # 1. The same function: keras-hub as shipped (tanh GELU), then with the exact GELU.
    difference = largest_difference(checkpoint, ours, backbone, forwards, batches)
    if not difference <= TOLERANCE:  # NaN fails too
        print(
            f"bench_pretrained_encoder: the encoders differ by {difference:.1e} > "
            f"{TOLERANCE:.0e}: not the same function, nothing timed"
        )
        return 1
    set_gelu(backbone, approximate=args.keras_hub_gelu == "tanh")
    inference = inference_functions(forwards)  # traced afresh: the timed graph holds it

    # 2. The machine's matmul peak, then the interleaved timings.
    peak = matmul_peak_flops(size=args.peak_size)
    weights = trainable_weights(ours, backbone)
    train = {
        name: make_train_step(forwards[name], weights[name], checkpoint.d_model)
        for name in ENCODERS
    }
    print_timings(args, checkpoint, batches, inference, train, peak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
