# Two commands: `make reproduce` and `make test`. Both create .venv on first use.
# The first Python >= 3.11 on the PATH (3.11, 3.12, 3.13, then python3); override with `make PYTHON=...`.
PYTHON ?= $(firstword $(foreach p,python3.11 python3.12 python3.13 python3,$(if $(shell command -v $(p) >/dev/null 2>&1 && $(p) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo ok),$(p))))
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test

.PHONY: reproduce test lint bench clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "make: needs Python >= 3.11 (python3.11, python3.12, python3.13 or python3)" >&2; exit 1; }
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
