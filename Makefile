# Fresh machine: `make demo` (set up, then fetch a model) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: setup demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[compile,dev]'
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/zoo list
	$(VENV)/bin/zoo fetch mnist --target u55-128 -o out/mnist-u55-128

test: setup
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check zoo tests benchmarks scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: setup
	$(PY) benchmarks/cli_speed.py

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
