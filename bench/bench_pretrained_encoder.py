"""Speed of our pretrained encoder against keras-hub's backbone of its family, same weights.

Usage:
    python bench/bench_pretrained_encoder.py [--checkpoint all_minilm_l6_v2] [--batch 32]
        [--lengths 64 256] [--repeats 10] [--dropout 0.1] [--keras-hub-gelu exact]
    python bench/bench_pretrained_encoder.py --family roberta --random-checkpoint base
    python bench/bench_pretrained_encoder.py --quick   # small shapes, to check the script

Both encoders hold the same checkpoint: all-MiniLM-L6-v2 by default, a Hugging Face
folder (`--checkpoint`), or a randomly initialised one (`--random-checkpoint base|tiny`,
written by `transformers` into a temporary folder: bench/random_checkpoint.py). Ours is
built from token ids and filled by `starting_weights.checkpoints`' weight table; keras-hub's
by `<Backbone>.from_preset(<the folder>)`, its own Hugging Face converter
(bench/keras_hub_families.py): BertBackbone for BERT, DistilBertBackbone for DistilBERT,
RobertaBackbone for RoBERTa (fed the checkpoint's ids: ours have 0 and RoBERTa's padding id
swapped). ELECTRA is not benched: keras-hub has no converter of its Hugging Face folders
(keras-hub issue #2989).

The checkpoints compute the exact (erf) GELU, as ours does. keras-hub's BertBackbone
hard-codes the tanh approximation, which moves MiniLM's outputs by about 3e-3, so its
feed-forward activation is set to the exact GELU (DistilBertBackbone and RobertaBackbone
ship the exact one). The bench first checks that both compute the same function: the
largest difference of the last hidden states at real tokens, on real text and on the timed
batches, must be within 1e-4, else it exits 1 (`--keras-hub-gelu tanh` times keras-hub
with the tanh GELU; the check stays on the exact one).

Timed, on batches of random token ids with no padding (so both do the same work):
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
from keras_hub_families import (  # noqa: E402
    KERAS_HUB_FAMILIES,
    build_keras_hub,
    encoder_ids,
    forward_functions,
    set_gelu,
    trainable_weights,
)
from pretrained_encoder_args import DEFAULT_CHECKPOINT, parse_args  # noqa: E402
from train_cost import forward_flops, matmul_peak_flops  # noqa: E402

from config import ModelConfig  # noqa: E402
from engine.training.starting_weights.pretrained_encoder import encoder_from_token_ids  # noqa: E402

TOLERANCE = 1e-4  # largest |ours - keras-hub| of a hidden state allowed
NUM_CLASSES, LEARNING_RATE, WEIGHT_DECAY = 2, 1e-4, 0.01
ENCODERS = ("ours", "keras-hub")
MODES = ("inference", "train step")
# Real text for the equality check, in words both the MiniLM and the tests' tiny vocabulary
# know (and the random checkpoints' tokenizers are made to spell); padded to the longest,
# so the padding masks are exercised too.
SENTENCES = (
    "The film was very good!",
    "A bad movie, not the plot.",
    "Acting in the cafe's play was not very good, the plot was.",
)


def build_ours(checkpoint, dropout):
    """Our encoder, token ids (B, T) -> last hidden states (B, T, D), with the weights."""
    return encoder_from_token_ids(checkpoint, dropout=dropout, attention_dropout=dropout)


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
    """Largest |a - b| over the hidden states (B, T, D) of real tokens (our id != 0)."""
    real = np.asarray(token_ids) != 0
    return float(np.abs(np.asarray(a) - np.asarray(b))[real].max())


def sentence_ids(checkpoint):
    """SENTENCES as our token ids (B, T), padded with 0 to the longest."""
    return tf.cast(checkpoint.tokenizer()(tf.constant(SENTENCES)), tf.int32)


def random_ids(vocabulary_size, batch, length):
    """(batch, length) ids drawn from the vocabulary, never 0: every token is real."""
    rng = np.random.default_rng(length)
    return tf.constant(rng.integers(1, vocabulary_size, size=(batch, length)), tf.int32)


def inference_functions(forwards):
    """{encoder: a `tf.function` token_ids (B, T) -> last hidden states, training=False}."""
    return {
        name: tf.function(lambda token_ids, f=forward: f(token_ids, training=False))
        for name, forward in forwards.items()
    }


def largest_difference(checkpoint, backbone, forwards, batches):
    """The largest |ours - keras-hub| with the exact GELU, on SENTENCES and the timed
    `batches` ({length: {encoder: ids}}; this traces the inference steps), printed with
    keras-hub as shipped."""
    text = sentence_ids(checkpoint)
    ids = encoder_ids(checkpoint, text)

    def difference(functions, ids):
        states = {name: functions[name](ids[name]) for name in ENCODERS}
        return max_difference(states["ours"], states["keras-hub"], ids["ours"])

    eager = {name: (lambda x, f=forward: f(x, False)) for name, forward in forwards.items()}
    shipped = difference(eager, ids)  # before any activation is set: as keras-hub builds it
    set_gelu(backbone, approximate=False)
    inference = inference_functions(forwards)
    largest = max([difference(eager, ids)] + [difference(inference, b) for b in batches.values()])
    shipped_gelu = KERAS_HUB_FAMILIES[checkpoint.family.model_type].shipped_gelu
    print(
        f"max |ours - keras-hub| of the last hidden states, real tokens: {largest:.1e} "
        f"(exact GELU; {text.shape[0]} sentences and the timed batches; tolerance "
        f"{TOLERANCE:.0e}); keras-hub as shipped ({shipped_gelu} GELU): {shipped:.1e}"
    )
    return largest


def print_timings(args, checkpoint, batches, inference, train, peak):
    """The setup, then a table row per (length, mode): medians, ratio, FLOP/s, share of peak."""
    family = checkpoint.family.title
    source = (
        f"random {args.random_checkpoint} checkpoint"
        if args.random_checkpoint
        else os.path.basename(os.path.normpath(args.checkpoint or DEFAULT_CHECKPOINT))
    )
    print(
        f"{family}, {source}: {checkpoint.num_layers} blocks, d_model {checkpoint.d_model}, "
        f"{checkpoint.num_heads} heads, intermediate {checkpoint.intermediate_dim}, "
        f"{len(checkpoint.vocabulary)} tokens; batch {args.batch}, no padding, dropout "
        f"{args.dropout} in the train step, AdamW; keras-hub's "
        f"{KERAS_HUB_FAMILIES[args.family].backbone.__name__} with the {args.keras_hub_gelu} GELU"
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
        "| family | length | mode | ours (ms) | keras-hub (ms) | ours / keras-hub "
        "| ours (GFLOP/s) | share of peak |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|", flush=True)
    labels = tf.constant(np.arange(args.batch) % NUM_CLASSES)
    for length, ids in batches.items():
        steps = {
            "inference": {name: (lambda f=inference[name], x=ids[name]: f(x)) for name in ENCODERS},
            "train step": {
                name: (lambda f=train[name], x=ids[name]: f(x, labels)) for name in train
            },
        }
        flops = step_flops(checkpoint, args.batch, length)
        for mode in [mode for mode in MODES if mode.split()[0] in args.modes]:
            ms = interleaved_medians_ms(steps[mode], args.repeats, args.warmups)
            rate = flops[mode] / (ms["ours"] / 1000)
            print(
                f"| {family} | {length} | {mode} | {ms['ours']:.1f} | {ms['keras-hub']:.1f} | "
                # 3 significant digits: a tiny --quick model on a busy CPU runs well
                # under 0.1 GFLOP/s, which one decimal printed as 0.0.
                f"{ms['ours'] / ms['keras-hub']:.2f} | {rate / 1e9:.3g} | {rate / peak:.1%} |",
                flush=True,
            )


def run(args, checkpoint):
    """Checks the two encoders compute the same function, then times them; the exit code."""
    keras.utils.set_random_seed(0)
    ours, backbone = build_ours(checkpoint, args.dropout), build_keras_hub(checkpoint, args.dropout)
    forwards = forward_functions(ours, backbone, checkpoint)
    batches = {
        length: encoder_ids(checkpoint, random_ids(len(checkpoint.vocabulary), args.batch, length))
        for length in args.lengths
    }

    # 1. The same function: keras-hub as shipped, then with the exact GELU.
    difference = largest_difference(checkpoint, backbone, forwards, batches)
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
        if "train" in args.modes
    }
    print_timings(args, checkpoint, batches, inference, train, peak)
    return 0


def main(argv=None):
    args, checkpoint = parse_args(argv, __doc__.splitlines()[0], SENTENCES)
    try:
        return run(args, checkpoint)
    finally:
        if args.scratch is not None:
            args.scratch.cleanup()


if __name__ == "__main__":
    sys.exit(main())
