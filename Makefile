# Fresh machine: `make train` runs the main job, `make test` runs the tests.
# Each target creates the local virtual environment (.venv) with the pinned dependencies.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# 3: TensorFlow's C++ notes stay out of the commands' output (see tensorflow_start.py).
export TF_CPP_MIN_LOG_LEVEL ?= 3
# The code runs from the checkout: `layers`, `models`, `data`, ... are imported from here.
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
# The packages whose docstring examples `make test` runs.
DOCTEST_PATHS := layers models data tokenization inspection config runtime run_folder engine compress.py export.py upgrade_run.py serve.py

.PHONY: venv train test test-fast lint test-tensorflow test-layers-backends test-layers-torch test-layers-jax bench bench-accuracy bench-label-noise bench-own-file clean

# What training needs (`.[train]`), installed by uv: it fetches and unpacks the pinned
# wheels in parallel, 15 s against pip's 62 s on a fresh machine (docs/benchmarks.md). The
# test tooling (`.[test]`: pytest, the JAX and PyTorch backends, Playwright) only for
# `make test`, by pip, which reads the machine's pip configuration (where the CPU build
# of PyTorch may lie).
$(VENV)/.installed-train: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv==0.13.9
	$(VENV)/bin/uv pip install --quiet --python $(PY) '.[train]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-train
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet '.[train,test]'
	touch $@

venv: $(VENV)/.installed-train

# The main job: prepare the default dataset, fine-tune configs/default.yaml (the first 3
# blocks of the pretrained all-MiniLM-L6-v2, one epoch; about 2.5 min) into runs/default/,
# evaluate it on the test split and export the attention of 8 test examples (viewer:
# runs/default/attention/test/index.html). A finished run is kept, not retrained:
# `make train TRAIN_ARGS=--overwrite` retrains it.
TRAIN_ARGS ?=
train: $(VENV)/.installed-train
	$(PY) -m data prepare rotten_tomatoes
	@if [ -f runs/default/model.keras ] && [[ "$(TRAIN_ARGS)" != *--overwrite* ]]; then \
	  echo "runs/default/ is already trained; make train TRAIN_ARGS=--overwrite retrains it"; \
	else \
	  $(PY) train.py --config configs/default.yaml $(TRAIN_ARGS); \
	fi
	@if [ -f runs/default/attention/test/meta.json ] && [[ "$(TRAIN_ARGS)" != *--overwrite* ]]; then \
	  echo "runs/default/attention/test/ is already exported"; \
	else \
	  $(PY) evaluate.py runs/default --split test --export-attention 8 --overwrite; \
	fi
	@echo "Results: runs/default/ (model.keras, metrics.json, history.csv, logs/ for TensorBoard)"
	@echo "         runs/default/eval/test/ (metrics, per-class table, confusion matrix, predictions)"
	@echo "         runs/default/attention/test/ (attention and every attribution method of 8 test examples, heatmaps)"
	@echo "Attention viewer (open in a browser, works offline): runs/default/attention/test/index.html"

# Lint first (ruff's checks and its formatter, as CI runs them), then the TensorFlow suite and
# the other backends' layer tests side by side (-j2), the TensorFlow suite itself in two
# pytest-xdist workers: much of it is single-threaded Python or waits on subprocesses, so on
# 2 cores this takes far less than one after the other. -O prints each one's output in one
# piece when it ends. Each prints its 10 slowest tests.
test: lint
	$(MAKE) --no-print-directory -j2 -O test-tensorflow test-layers-backends

# The working loop's tier, under a minute and a half: the layers, the config, the data
# pipeline and the attribution methods; no command runs end to end, no other process, no
# trained run, checkpoint or built-in dataset (the tests marked slow, and those using such
# a fixture: tests/conftest.py). Its files take very different times: worksteal balances
# the two workers. `make test` runs everything.
FAST_TESTS := tests/layers tests/config tests/runtime tests/tokenization tests/data \
	tests/inspection/methods tests/test_imports.py
test-fast: $(VENV)/.installed-test
	$(PY) -m pytest -q -n 2 --dist worksteal --durations=10 -m "not slow" $(FAST_TESTS)

# --dist loadfile keeps a file's tests on one worker, so a module's fixture (a trained tiny
# run, a checkpoint) is built once, not once per worker.
test-tensorflow: $(VENV)/.installed-test
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=10 tests
	# The docstring examples run as written.
	$(PY) -m pytest -q --doctest-modules $(DOCTEST_PATHS)

test-layers-backends: test-layers-torch test-layers-jax

# The layers use only keras.ops: prove it on the PyTorch and JAX backends too.
# JAX compiles every function it meets with XLA; LLVM's optimisations cost more than they
# save for tests that run each function a few times (a third of the JAX tests' time).
test test-tensorflow test-layers-backends test-layers-jax: export XLA_FLAGS ?= --xla_backend_optimization_level=0
test-layers-torch: $(VENV)/.installed-test
	KERAS_BACKEND=torch $(PY) -m pytest -q --durations=10 tests/layers

test-layers-jax: $(VENV)/.installed-test
	KERAS_BACKEND=jax $(PY) -m pytest -q --durations=10 tests/layers

bench: $(VENV)/.installed-train
	$(PY) bench/bench_attention.py

# Ours vs the keras.io example (3 seeds each) vs TF-IDF + LR on the five built-in datasets,
# same splits and protocol: about 70 minutes on 2 CPU cores. The README's results table and
# docs/benchmarks.md; the MiniLM rows run apart (`--models minilm`, see that page).
BENCH_ACCURACY_ARGS ?=
bench-accuracy: $(VENV)/.installed-train
	for name in reuters_r8 reuters_r52 twenty_newsgroups rotten_tomatoes bbc_news; do \
	  $(PY) -m data prepare $$name || exit 1; done
	$(PY) bench/bench_accuracy.py $(BENCH_ACCURACY_ARGS)

# evaluate.py --suspects against cleanlab on flipped labels (docs/data_quality.md): about 90
# minutes on 2 CPU cores. cleanlab comes from the `bench` extra, never a runtime dependency.
BENCH_LABEL_NOISE_ARGS ?= --minilm
$(VENV)/.installed-bench: $(VENV)/.installed-train
	$(VENV)/bin/uv pip install --quiet --python $(PY) '.[train,bench]'
	touch $@

bench-label-noise: $(VENV)/.installed-bench
	for name in rotten_tomatoes reuters_r8 twenty_newsgroups; do \
	  $(PY) -m data prepare $$name || exit 1; done
	$(PY) bench/bench_label_noise.py $(BENCH_LABEL_NOISE_ARGS)

# A config naming only the user's CSV file against TF-IDF + LR, on three user-style files of
# 5,000 short texts (reviews, news briefs, forum questions) carved from the built-ins, 3
# seeds, each train.py timed as a user waits for it (issue 45's goal: +1 point within 5
# minutes): about 30 minutes on 2 CPU cores. BENCH_OWN_FILE_ARGS='--tag NAME
# --recipe section.field=value ...' tries another recipe beside it (bench/results/own_file.md).
BENCH_OWN_FILE_ARGS ?=
bench-own-file: $(VENV)/.installed-train
	for name in rotten_tomatoes reuters_r8 twenty_newsgroups; do \
	  $(PY) -m data prepare $$name || exit 1; done
	$(PY) bench/bench_own_file.py $(BENCH_OWN_FILE_ARGS)

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
