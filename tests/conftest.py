"""Session-wide test setup."""

import os
import signal

import pytest
from hypothesis import settings

# A job started in the background of a non-interactive shell (as CI runners may start `.ci/run`) inherits
# SIGINT *ignored*, and Python then never installs its KeyboardInterrupt handler -- in this process or in
# the subprocesses the tests start.  The Ctrl-C tests (the lab server, an interrupted sweep) need the
# handler a user at a terminal has, so install it here; children then start with SIGINT at its default.
signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests draw the same examples on every machine and every run (the profile Hypothesis itself loads on CI
# runners), so a red suite is a bug that reproduces, never a lucky draw; the examples come from each test's own
# strategy, and the pinned Hypothesis version (constraints.txt) fixes them.  HYPOTHESIS_PROFILE=explore draws fresh
# ones (and keeps failures in .hypothesis/) to look for new counterexamples.
settings.register_profile("poskernels", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "poskernels"))

# The suite's seed block, read from the environment once, here: `POSKERNELS_FIRST_SEED=1000 make test` runs every
# trained test on the block 1000..1009.  The package reads the variable only at its edges (the command line,
# `poskernels.seeds.first_seed()` called by a caller); the tests pass this block to every experiment and page
# section explicitly (`from conftest import SEEDS`).  Only tests of the edge itself set or read the variable.
from poskernels.seeds import first_seed, seed_block  # noqa: E402

#: First seed of the suite's block (``$POSKERNELS_FIRST_SEED``, else 0), read once.
FIRST_SEED = first_seed()
#: The suite's seed block: the ten seeds every trained test reads.
SEEDS = seed_block(first=FIRST_SEED)

from pathlib import Path  # noqa: E402

#: The one cache of trained heads and results the whole run reads: the repository's, the one `poskernels reproduce`
#: fills (``.cache/poskernels``).  Every test that reads the article's heads reads them here.
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "poskernels"


def pytest_configure(config):
    """Build the trained cache once, before the workers start, when the suite runs on several (``pytest -n``).

    Every trained section of the page is computed into :data:`CACHE` in this process (on the package's own process
    pool), so no two workers train the same heads at once and every test reads them; a warm cache makes this a read
    of its result files.  A run in one process trains what it needs as it goes, into the same cache.
    """
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    import sys
    import time

    from poskernels import page

    start = time.perf_counter()
    ctx = page.Context(cache_dir=CACHE, log=lambda msg: None, first_seed=FIRST_SEED)
    page.assemble(ctx, include_trained=True)
    print(f"[suite] the trained cache, seeds {SEEDS[0]}..{SEEDS[-1]}, built once in {time.perf_counter() - start:.1f} s"
          f" ({CACHE})", file=sys.stderr)  # fmt: skip


@pytest.fixture()
def clean_registry():
    """The scheme registry and the sweep's settings as they were before the test (a test that registers a scheme)."""
    from poskernels.encodings import SCHEMES
    from poskernels.sweep.settings import SETTINGS

    before, settings = dict(SCHEMES), dict(SETTINGS)
    yield
    SCHEMES.clear()
    SCHEMES.update(before)
    SETTINGS.clear()
    SETTINGS.update(settings)
