# ASTER-TF. `make train` and `make test` are the two set-up commands on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed

.PHONY: install protos test lint clean

$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP): $(PY) setup.py pyproject.toml $(wildcard protos/*.proto)
	$(PIP) install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

protos: $(STAMP)
	$(PY) setup.py -q build_protos

test: install protos
	$(PY) -m pytest -q -ra

lint: install
	$(VENV)/bin/ruff check aster tests benchmarks setup.py

clean:
	rm -rf build dist *.egg-info aster/protos/*_pb2.py .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
