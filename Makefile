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

# One BLAS thread (unless set): the head's matrices are small, and a BLAS pool per process spin-waits on a
# busy machine (a cold reproduce at 10 seeds ran ~2x slower with the default pools on 2 cores).
BLAS1 := OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=$${MKL_NUM_THREADS:-1}

reproduce: $(STAMP)
	$(BLAS1) $(VENV)/bin/poskernels reproduce --out results

lint: $(TSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks

test: $(TSTAMP) lint
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(PY) -m pytest -q

bench: $(TSTAMP)
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) results .cache
