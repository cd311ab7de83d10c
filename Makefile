# Two commands: `make reproduce` and `make test`. Both create .venv on first use.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test

.PHONY: reproduce test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(TSTAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

reproduce: $(STAMP)
	$(VENV)/bin/poskernels reproduce --out results

lint: $(TSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks

test: $(TSTAMP) lint
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(PY) -m pytest -q

bench: $(TSTAMP)
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) results .cache
