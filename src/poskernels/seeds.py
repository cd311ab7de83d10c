"""The seed block every trained number is a statistic over, and the statistics themselves.

A trained head's numbers move with the last bits of the floating-point libraries (1,500 Adam steps amplify
them), so each trained figure of the page is the mean of :data:`DEFAULT_COUNT` seeds with its standard error,
and every claim about trained heads is tested against that distribution.  The block starts at a first seed
that every experiment and every page section takes as an argument (``seeds=`` a block, or ``first_seed=``);
none reads the environment.  The environment is read at the edge only: the command line
(``poskernels reproduce --first-seed S``, else ``$POSKERNELS_FIRST_SEED``, else 0) and a caller of the API
through :func:`first_seed`, so the whole suite can be run on another block of seeds
(``POSKERNELS_FIRST_SEED=1000``), a stand-in for another machine's rounding.  The article trains three seeds;
:data:`ARTICLE_COUNT` names them where a table shows the mean of the first three beside ours.

Examples
--------
>>> seed_block(first=1000)[:3], len(seed_block(first=0))
((1000, 1001, 1002), 10)
>>> m, se = mean_stderr([0.9, 1.0, 0.8])
>>> round(m, 3), round(se, 4)
(0.9, 0.0577)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from .errors import PosKernelsError, check_int

__all__ = [
    "ARTICLE_COUNT",
    "DEFAULT_COUNT",
    "ENV",
    "MAX_SEED",
    "first_seed",
    "mean_stderr",
    "seed_block",
    "stat_table",
]

#: Environment variable that moves the seed block.
ENV = "POSKERNELS_FIRST_SEED"
#: Seeds per trained cell (at least ten: the standard error of a mean of ten is a usable margin).
DEFAULT_COUNT = 10
#: The article's seeds per cell.
ARTICLE_COUNT = 3
#: Largest seed: caches, stores and file names keep seeds as signed 64-bit integers (SQLite's).
MAX_SEED = 2**63 - 1


def _check_first(value, source: str) -> int:
    check_int(source, value, 0)
    return check_int(source, value, 0, MAX_SEED, "seeds are kept as signed 64-bit integers, below 2**63")


def first_seed(value: int | None = None) -> int:
    """The first seed of the block: ``value`` if given, else ``$POSKERNELS_FIRST_SEED``, else 0.

    The one place the package reads the environment variable, for the edge: the command line and a caller of
    the API (``seed_block(first=first_seed())``).  Experiments and page sections never call it; they take
    their seeds as an argument (``tests/test_seeds.py`` scans the package for a call elsewhere).

    Parameters
    ----------
    value : int, optional
        The first seed, given (``--first-seed``); default None (the environment, else 0).

    Returns
    -------
    int
        The first seed, in ``[0, 2**63 - 1]``.

    Raises
    ------
    PosKernelsError
        If `value` or ``$POSKERNELS_FIRST_SEED`` is not an integer in that range.

    Examples
    --------
    >>> first_seed(7)
    7
    >>> first_seed(-1)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the first seed must be an integer >= 0; got -1
    """
    if value is not None:
        return _check_first(value, "the first seed")
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return 0
    shown = repr(raw) if len(raw) <= 40 else f"{raw[:20]!r}... ({len(raw)} characters)"
    if not (raw.isascii() and raw.isdigit()):  # ASCII digits only: no sign, no point, no base prefix
        raise PosKernelsError(f"{ENV} must be a non-negative integer; got {shown}")
    if len(raw.lstrip("0")) > len(str(MAX_SEED)):  # before int(): Python refuses to convert 4,300 digits or more
        raise PosKernelsError(f"{ENV} must be an integer in [0, {MAX_SEED}] (64-bit seeds); got {shown}")
    return _check_first(int(raw.lstrip("0") or "0"), ENV)  # zeros first do not count toward Python's limit


def seed_block(count: int = DEFAULT_COUNT, *, first: int) -> tuple[int, ...]:
    """``count`` consecutive seeds from ``first`` (an argument: the block never comes from the environment).

    Parameters
    ----------
    count : int, optional
        How many seeds, in ``[1, 2**20]``; default 10 (the article's).
    first : int
        The first seed (:func:`first_seed`).

    Returns
    -------
    tuple of int
        ``first, first + 1, ..., first + count - 1``.

    Raises
    ------
    PosKernelsError
        If `count` or `first` is out of range, or the block passes the largest seed.

    Examples
    --------
    >>> seed_block(3, first=5)
    (5, 6, 7)
    >>> seed_block(0, first=0)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the seed count must be an integer in [1, 1048576]; got 0
    """
    check_int("the seed count", count, 1, 2**20)
    start = _check_first(first, "the first seed")
    if start + int(count) - 1 > MAX_SEED:
        raise PosKernelsError(f"the seed block {start}..{start + count - 1} passes the largest seed {MAX_SEED}")
    return tuple(range(start, start + int(count)))


def mean_stderr(values: Sequence) -> tuple[float | None, float | None]:
    """Mean of per-seed values and its standard error ``s / sqrt(k)`` (``s`` with ``k - 1`` degrees of freedom).

    ``(None, None)`` if ``values`` or any value is None (a reading that does not exist, the learned table past
    its length); the standard error of one value is None.

    Parameters
    ----------
    values : sequence of float or None
        One value per seed.

    Returns
    -------
    tuple of (float or None, float or None)
        The mean and its standard error.

    Examples
    --------
    >>> mean_stderr([1.0, None]), mean_stderr(None), mean_stderr([0.5])
    ((None, None), (None, None), (0.5, None))
    """
    if values is None or len(values) == 0 or any(v is None for v in values):
        return None, None
    v = np.asarray(values, dtype=float)  # (k,)
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else None
    return float(v.mean()), se


def stat_table(per_seed: dict) -> tuple[dict, dict]:
    """``(mean, stderr)`` tables of a nested dict whose leaves are per-seed lists (same nesting).

    Parameters
    ----------
    per_seed : dict
        Nested dicts whose leaves are lists of per-seed values.

    Returns
    -------
    tuple of (dict, dict)
        The means and the standard errors (:func:`mean_stderr` of each leaf), nested as `per_seed`.

    Examples
    --------
    >>> mean, stderr = stat_table({"rope": {"64": [0.9, 0.7]}})
    >>> round(mean["rope"]["64"], 6), round(stderr["rope"]["64"], 6)
    (0.8, 0.1)
    """
    mean: dict = {}
    stderr: dict = {}
    for key, value in per_seed.items():
        if isinstance(value, dict):
            mean[key], stderr[key] = stat_table(value)
        else:
            m, se = mean_stderr(value)
            mean[key], stderr[key] = m, se
    return mean, stderr
