"""The functions a claim's input expression may call (:mod:`poskernels.claims.inputs`), each one named reading.

Two sorts: a *reader* takes only literals or constants (names, lengths, offsets) and reads the ``numbers.json``
itself, where a per-seed value is not one list (records keyed by seed, the filing heads' horizon rows); an
*operation* takes evaluated expressions (``abs``, ``sqrt``, ``stack``).

Examples
--------
>>> numbers = {"rebound": {"1": {"peak": [181, 0.5]}, "0": {"peak": [179, 0.4]}}}
>>> FUNCTIONS["by_seed"].call(numbers, "rebound", "peak", 0).tolist()
[179.0, 181.0]
>>> bool(FUNCTIONS["binomial_se"].call(0.5, 2000) == (0.25 / 2000) ** 0.5)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["FUNCTIONS", "SECTIONS", "Function"]

#: The sections of ``numbers.json`` a claim may read (the first part of every path).
SECTIONS = ("tournament", "rescaled", "rebound", "sinusoidal", "thm2", "filings", "long")


@dataclass(frozen=True)
class Function:
    """``call``; ``raw``: a reader (literal arguments, ``numbers`` first); ``sections`` it reads; ``path_arg``: its
    first argument is a path (whose section it reads)."""

    call: Callable
    raw: bool = False
    sections: tuple[str, ...] = ()
    path_arg: bool = False


def _arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _walk(numbers: dict, path: str):
    value = numbers
    for part in path.split("/"):
        value = value[part]
    return value


def by_seed(numbers: dict, path: str, field: str, index: int | None = None) -> np.ndarray:
    """``record[field]`` (or its ``[index]``) of each record of the dict at ``path``, keyed by seed, seeds in order.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    path : str
        ``/``-separated keys of a dict of records by seed (``"rebound"``).
    field : str
        The record's field.
    index : int, optional
        An item of the field (a list), else the field itself.

    Returns
    -------
    ndarray, shape (seeds,)
        Floats, None as NaN.

    Examples
    --------
    >>> by_seed({"rebound": {"1": {"peak": [181, 0.5]}, "0": {"peak": [179, 0.4]}}}, "rebound", "peak", 0).tolist()
    [179.0, 181.0]
    """
    records = _walk(numbers, path)
    rows = [records[k][field] for k in sorted(records, key=int)]
    return _arr(rows if index is None else [r[index] for r in rows])


def by_seed_max(numbers: dict, path: str, field: str, lo: int, hi: int) -> np.ndarray:
    """The largest of ``record[field][lo:hi]``, record by record, seeds in order.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    path : str
        ``/``-separated keys of a dict of records by seed.
    field : str
        The record's field (a list).
    lo, hi : int
        The slice of the list.

    Returns
    -------
    ndarray, shape (seeds,)

    Examples
    --------
    >>> by_seed_max({"r": {"1": {"a": [1, 5, 2]}, "0": {"a": [3, 0, 9]}}}, "r", "a", 0, 2).tolist()
    [3.0, 5.0]
    """
    records = _walk(numbers, path)
    return _arr([max(records[k][field][lo:hi]) for k in sorted(records, key=int)])


def horizon_rows(numbers: dict, key: str) -> np.ndarray:
    """(seeds, 2): a field of ``filings.horizon``, the filing and synthetic-stream heads of one seed side by side.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with a ``filings`` section.
    key : str
        The field of each horizon row (``"horizon"``, ``"inside_half"``).

    Returns
    -------
    ndarray, shape (seeds, 2)
        Columns: the heads trained on filings, then on the synthetic stream.

    Examples
    --------
    >>> rows = [{"trained_on": o, "seed": s, "horizon": h} for o, s, h in
    ...         [("filings", 0, 40.0), ("filings", 1, 60.0), ("synthetic", 0, 20.0), ("synthetic", 1, 30.0)]]
    >>> horizon_rows({"filings": {"seeds": [0, 1], "horizon": rows}}, "horizon").tolist()
    [[40.0, 20.0], [60.0, 30.0]]
    """
    by = {(r["trained_on"], r["seed"]): r[key] for r in numbers["filings"]["horizon"]}
    seeds = numbers["filings"]["seeds"]
    return _arr([by["filings", s] for s in seeds] + [by["synthetic", s] for s in seeds]).reshape(2, -1).T


def misses_are_wide(numbers: dict) -> np.ndarray:
    """(seeds, 2): 1 where the head answers every query inside half its horizon or its horizon is wider than its
    stream's median (the heads that miss are those whose content width W is widest).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with a ``filings`` section.

    Returns
    -------
    ndarray, shape (seeds, 2)
        ``1.0`` or ``0.0``; columns as :func:`horizon_rows`.

    Examples
    --------
    >>> rows = [{"trained_on": o, "seed": s, "horizon": h, "inside_half": i} for o, s, h, i in
    ...         [("filings", 0, 40.0, 1.0), ("filings", 1, 60.0, 0.0), ("synthetic", 0, 20.0, 0.0),
    ...          ("synthetic", 1, 30.0, 1.0)]]
    >>> misses_are_wide({"filings": {"seeds": [0, 1], "horizon": rows}}).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    h, inside = horizon_rows(numbers, "horizon"), horizon_rows(numbers, "inside_half")
    return ((inside == 1.0) | (h > np.median(h, axis=0))).astype(float)


def company(numbers: dict, name: str) -> int:
    """The index of a company in the laboratory filing's list (``filings.case.companies``).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with a ``filings`` section.
    name : str
        The company.

    Returns
    -------
    int

    Examples
    --------
    >>> company({"filings": {"case": {"companies": ["Acme", "Globex"]}}}, "Globex")
    1
    """
    return numbers["filings"]["case"]["companies"].index(name)


def alibi_tail_bound(numbers: dict, offset: int) -> np.ndarray:
    """Theorem 3 (ii) for each long-run ALiBi head, the weight past ``offset``: ``e^(W - sD) / (1 - e^-s)``, ``s =
    W / horizon`` (:mod:`poskernels.theory.alibi`).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with ``long.distance.horizon`` (each seed's ``W`` and ``horizon``).
    offset : int
        The offset ``D``.

    Returns
    -------
    ndarray, shape (seeds,)

    Examples
    --------
    >>> horizon = {"0": {"W": 4.0, "horizon": 8.0}, "1": {"W": 2.0, "horizon": 4.0}}
    >>> numbers = {"long": {"distance": {"horizon": horizon}}}
    >>> alibi_tail_bound(numbers, 16).round(4).tolist()
    [0.0465, 0.0063]
    """
    W, h = by_seed(numbers, "long/distance/horizon", "W"), by_seed(numbers, "long/distance/horizon", "horizon")
    s = W / h
    return np.exp(W - offset * s) / (1 - np.exp(-s))


def needle_mean(numbers: dict, where: str, offsets) -> np.ndarray:
    """Each long-run ALiBi head's mean needle accuracy over the ``offsets`` inside half its horizon (``where =
    "inside"``) or beyond twice it (``"beyond"``), (seeds,).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with ``long.distance`` (``horizon`` and ALiBi's ``per_seed`` accuracies).
    where : {"inside", "beyond"}
        Which offsets are averaged.
    offsets : sequence of str
        The offsets read (keys of ``per_seed["alibi"]``).

    Returns
    -------
    ndarray, shape (seeds,)
        NaN for a seed with no such offset.

    Raises
    ------
    ValueError
        If ``where`` is neither ``"inside"`` nor ``"beyond"``.

    Examples
    --------
    >>> numbers = {"long": {"distance": {"horizon": {"0": {"W": 4.0, "horizon": 8.0}, "1": {"W": 2.0, "horizon": 4.0}},
    ...                                  "per_seed": {"alibi": {"2": [1.0, 0.5], "40": [0.0, 0.25]}}}}}
    >>> needle_mean(numbers, "inside", ["2", "40"]).tolist(), needle_mean(numbers, "beyond", ["2", "40"]).tolist()
    ([1.0, 0.5], [0.0, 0.25])
    """
    if where not in ("inside", "beyond"):
        raise ValueError(f"needle_mean: where is 'inside' or 'beyond', got {where!r}")
    per = numbers["long"]["distance"]["per_seed"]["alibi"]
    h = by_seed(numbers, "long/distance/horizon", "horizon")
    acc = np.array([_arr(per[r]) for r in offsets])  # (offsets, seeds)
    r = np.array([float(x) for x in offsets])[:, None]  # (offsets, 1)
    mask = r <= h / 2 if where == "inside" else r > 2 * h  # (offsets, seeds)
    return np.nanmean(np.where(mask, acc, np.nan), axis=0)


def binomial_se(p, n):
    """The binomial standard error of a rate ``p`` on ``n`` draws, ``sqrt(p (1 - p) / n)``, as a float64.

    Parameters
    ----------
    p : float
        The rate.
    n : int
        The draws.

    Returns
    -------
    numpy.float64

    Examples
    --------
    >>> float(binomial_se(0.5, 100))
    0.05
    """
    return np.float64(math.sqrt(p * (1 - p) / n))


#: Every function an input may call, by name.
FUNCTIONS: dict[str, Function] = {
    "by_seed": Function(by_seed, raw=True, path_arg=True),
    "by_seed_max": Function(by_seed_max, raw=True, path_arg=True),
    "horizon_rows": Function(horizon_rows, raw=True, sections=("filings",)),
    "misses_are_wide": Function(misses_are_wide, raw=True, sections=("filings",)),
    "company": Function(company, raw=True, sections=("filings",)),
    "alibi_tail_bound": Function(alibi_tail_bound, raw=True, sections=("long",)),
    "needle_mean": Function(needle_mean, raw=True, sections=("long",)),
    "count": Function(lambda numbers, values: len(values), raw=True),
    "abs": Function(abs),
    "sqrt": Function(lambda x: np.float64(math.sqrt(x)) if np.ndim(x) == 0 else np.sqrt(x)),
    "binomial_se": Function(binomial_se),
    "row_mean": Function(lambda x: np.asarray(x).mean(axis=1)),
    "stack": Function(lambda *xs: np.stack(xs, axis=1)),
}
