# Fresh machine: `make train` runs the main job, `make test` runs the tests.
# Each target creates the local virtual environment (.venv) with the pinned dependencies.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: venv test test-layers-jax bench lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

test: $(VENV)/.installed
	$(PY) -m pytest -q tests
	$(MAKE) test-layers-jax

# The layers are backend-agnostic: prove it on JAX too.
test-layers-jax: $(VENV)/.installed
	KERAS_BACKEND=jax $(PY) -m pytest -q tests/layers

bench: $(VENV)/.installed
	$(PY) bench/bench_attention.py

lint: $(VENV)/.installed
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
