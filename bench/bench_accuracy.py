"""Our recipes against the keras.io example and TF-IDF + LR on every dataset; prints the table.

Usage:
    make bench-accuracy                                   # all five datasets, 3 seeds
    python bench/bench_accuracy.py --datasets bbc_news reuters_r8 --seeds 0
    python bench/bench_accuracy.py --models minilm --datasets rotten_tomatoes --reuse
    python bench/bench_accuracy.py --reuse                # reuse finished runs, train the rest
    python bench/bench_accuracy.py --reuse --no-train     # only print the table

For each dataset, on the same splits and in the same run:
- ours: `configs/<dataset>.yaml`, trained from scratch with each seed;
- minilm: `configs/<dataset>_minilm.yaml`, the pretrained all-MiniLM-L6-v2 encoder in our
  layers fine-tuned with each seed (same splits, the recipe's own epoch budget and early
  stopping on validation);
- the keras.io "Text classification with Transformer" model (one block, embed 32, 2 heads
  of size 32, ff 32, learned positions, average pooling over all positions, Dense(20) head;
  Adam 1e-3, batch 32, 20k vocabulary, 200 tokens), with each seed, through the same
  train.py code and under the same protocol as ours: the recipe's epoch budget, early
  stopping on the recipe's validation metric, best epoch restored;
- TF-IDF (word 1-2 grams) + logistic regression, C chosen on validation (deterministic,
  fitted once).
The table gives the mean and standard deviation over seeds of test accuracy and macro-F1,
the wall time of one run (data, training, evaluation, saving), training throughput in real
(non-padding) tokens per second, and the train step's FLOP/s (analytic count of the shapes
it runs, bench/train_cost.py) as a share of this machine's float32 matmul rate, measured at
the start of the same run. Runs go to bench/results/runs/; the table is written to
bench/results/accuracy.md and .json. It is CPU-bound: run nothing else meanwhile.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from accuracy_report import format_table, summarize  # noqa: E402

from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
DATASETS = ("reuters_r8", "reuters_r52", "twenty_newsgroups", "rotten_tomatoes", "bbc_news")

# Published test accuracies (%) of from-scratch models: Text GCN (Yao et al., AAAI 2019,
# Table 2) for R8/R52/20NG, Kim (2014) CNN-rand for MR; the naive Bayes and linear SVM
# figures are the reference points for our splits of Rotten Tomatoes and BBC News.
ANCHORS = {
    "reuters_r8": "TF-IDF+LR 93.7, CNN 94.0, fastText 96.1, Text GCN 97.1",
    "reuters_r52": "TF-IDF+LR 87.0, CNN 85.4, fastText 92.8, Text GCN 93.6",
    "twenty_newsgroups": "TF-IDF+LR 83.2, CNN 76.9, fastText 79.4, Text GCN 86.3",
    "rotten_tomatoes": "CNN-rand 76.1, multinomial NB ~78.6",
    "bbc_news": "TF-IDF + linear SVM ~98",
}

# The keras.io example model, expressed in our schema: every text and model field, so nothing
# of our recipe's tokenisation or model leaks into it (tests/bench checks). mask_zero=false:
# the example's embedding does not mask, so its average pooling includes padding. Its own
# hyperparameters, but our protocol: the recipe's epoch budget, early stopping and
# best-epoch restore (the example itself trains a fixed 2 epochs).
KERAS_IO_EXAMPLE = [
    "text.vocabulary_size=20000",
    "text.sequence_length=200",
    "text.standardize=lower_and_strip_punctuation",
    "text.stop_words=none",
    # The example adapts its vocabulary on every training text: more than any built-in
    # dataset has.
    "text.adapt_sample=1000000",
    "model.d_model=32",
    "model.num_heads=2",
    "model.key_dim=32",
    "model.num_layers=1",
    "model.intermediate_dim=32",
    "model.dropout=0.1",
    "model.token_dropout=0",
    "model.attention_dropout=0.0",
    "model.attention_block_size=null",
    "model.activation=relu",
    "model.positional_encoding=learned",
    "model.mask_zero=false",
    "model.norm_first=false",
    "model.layer_norm_epsilon=1e-6",
    "model.pooling=mean",
    "model.head_hidden_dim=20",
    "model.pretrained_embeddings=null",
    "model.init_from=null",
    "model.pretrained=null",
    "model.pretrained_layers=null",
    "model.fine_tune=full",
    "training.batch_size=32",
    "training.optimizer=adam",
    "training.learning_rate=1e-3",
    "training.weight_decay=0",
    "training.warmup_fraction=0",
    "training.schedule=constant",
    "training.clipnorm=null",
    "training.label_smoothing=0",
]


NEURAL_MODELS = ("ours", "minilm", "keras_io_example")
MODELS = (*NEURAL_MODELS, "tfidf_logistic_regression")
BENCH_FILE = "bench.json"  # per run: epoch training seconds, real tokens and FLOPs per epoch


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    # The MiniLM rows cost about 10 to 40 minutes a run here: asked for by name only.
    parser.add_argument(
        "--models",
        nargs="+",
        choices=MODELS,
        default=["ours", "keras_io_example", "tfidf_logistic_regression"],
        help="which rows to train or read back (default: all but minilm)",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[0, 1, 2],
        help="training seeds of the neural models (default: 0 1 2)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reuse finished runs in bench/results/runs instead of retraining",
    )
    parser.add_argument(
        "--no-train", action="store_true", help="train nothing; report the finished runs only"
    )
    return parser.parse_args(argv)


def neural_config(dataset, model, seed):
    from config.files import load_config

    suffix = {"ours": "", "minilm": "_minilm", "keras_io_example": "_kerasio"}[model]
    overrides = [
        f"output.root={RESULTS / 'runs'}",
        f"output.name={dataset}{suffix}_seed{seed}",
        f"training.seed={seed}",
    ]
    if model == "keras_io_example":
        overrides += KERAS_IO_EXAMPLE
    recipe = f"{dataset}_minilm" if model == "minilm" else dataset
    return load_config(ROOT / "configs" / f"{recipe}.yaml", overrides)


def neural_run(config, cost, reuse, no_train):
    """Metrics of one run, with its epoch timings (trained now, or read back); None when
    absent and not trained. `cost` is (real tokens, training FLOPs) of one epoch."""
    from train_cost import epoch_timer

    from run_folder.runs import METRICS_FILE
    from train import run_training

    run_dir = RESULTS / "runs" / config.output.name
    if (reuse or no_train) and (run_dir / BENCH_FILE).exists():
        return {
            **json.loads((run_dir / METRICS_FILE).read_text()),
            **json.loads((run_dir / BENCH_FILE).read_text()),
        }
    if no_train:
        return None
    print(f"\n=== {config.output.name} ===", flush=True)
    timer = epoch_timer()
    result = run_training(config, overwrite=True, callbacks=[timer])
    timings = {
        "epoch_seconds": [round(seconds, 3) for seconds in timer.seconds],
        "real_tokens_per_epoch": cost[0],
        "train_flops_per_epoch": cost[1],
    }
    (result.run_dir / BENCH_FILE).write_text(json.dumps(timings, indent=2) + "\n")
    return {**result.metrics, **timings}


def epoch_cost_of(config):
    """(real tokens, training FLOPs) of one training epoch of `config` (its seed's batches)."""
    from train_cost import epoch_cost

    from engine.training.starting_weights import starting_weights
    from train import load_data

    weights = starting_weights(config)
    data, pipelines, _ = load_data(weights.config, weights)
    model = config.model
    if weights.checkpoint:  # The encoder's own shape, not the config's fields.
        model = weights.checkpoint.model_config(model, model.pretrained_layers)
    return epoch_cost(pipelines["train"], model, len(data.class_names))


def tfidf_baseline(dataset, reuse, no_train):
    """TF-IDF + logistic regression (`baselines.tfidf_lr`) on the recipe's splits."""
    from baselines import tfidf_lr

    from config.files import load_config
    from data import load_text_splits

    path = RESULTS / "runs" / f"{dataset}_tfidf" / runs.METRICS_FILE
    if (reuse or no_train) and path.exists():
        return json.loads(path.read_text())
    if no_train:
        return None
    print(f"\n=== {dataset}_tfidf ===", flush=True)
    metrics = tfidf_lr(load_text_splits(load_config(ROOT / "configs" / f"{dataset}.yaml").dataset))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def main(argv=None):
    args = parse_args(argv)
    from train_cost import matmul_peak_flops

    peak = matmul_peak_flops()
    print(f"float32 matmul peak of this machine: {peak / 1e9:.1f} GFLOP/s", flush=True)
    results, summaries = {}, {}
    for dataset in args.datasets:
        results[dataset] = {}
        configs = {
            model: [neural_config(dataset, model, seed) for seed in args.seeds]
            for model in NEURAL_MODELS
            if model in args.models
        }
        # Seed 0's epoch stands for every seed's: the same texts, shuffled otherwise.
        costs = {
            model: None if args.no_train else epoch_cost_of(runs[0])
            for model, runs in configs.items()
        }
        # Seed by seed, ours then the keras.io example: this shared machine's speed drifts
        # over minutes, and the two models' times are compared.
        for model in configs:
            results[dataset][model] = []
        for index in range(len(args.seeds)):
            for model, model_runs in configs.items():
                results[dataset][model].append(
                    neural_run(model_runs[index], costs[model], args.reuse, args.no_train)
                )
        if "tfidf_logistic_regression" in args.models:
            results[dataset]["tfidf_logistic_regression"] = [
                tfidf_baseline(dataset, args.reuse, args.no_train)
            ]
        summaries[dataset] = {
            model: summarize(runs, peak) for model, runs in results[dataset].items()
        }
    table = format_table(summaries)
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"float32 matmul peak {peak / 1e9:.1f} GFLOP/s, {time.strftime('%Y-%m-%d')}, "
        f"seeds {' '.join(map(str, args.seeds))}"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "accuracy.md").write_text(f"{machine}\n\n{table}\n")
    (RESULTS / "accuracy.json").write_text(
        json.dumps(
            {"machine": machine, "peak_flops_per_s": peak, "summaries": summaries, "runs": results},
            indent=2,
        )
        + "\n"
    )
    print(f"\n{machine}\n\n{table}\n\npublished anchors (test accuracy %):")
    for dataset in args.datasets:
        print(f"  {dataset}: {ANCHORS[dataset]}")
    print(f"\nwritten: {RESULTS / 'accuracy.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
