"""The statistics a trained claim is tested with, each with the null under which the claim would be false.

A claim reads per-seed values from ``numbers.json`` (``{name: array}``, seeds on axis 0) and one of the kinds of
:data:`KINDS` turns them into a statistic and a verdict at its threshold.  Every kind also says how to move the
pooled per-seed values onto the claim's null (:meth:`Kind.null`): the calibration
(:mod:`poskernels.claims.calibrate`) draws blocks of ten seeds from the pooled values to measure the claim's size
(how often a true claim fails) and from the moved values to measure how often a false one passes.

Examples
--------
>>> x = {"x": np.array([0.98, 0.99, 0.97, 0.99])}
>>> KINDS["lower"].evaluate(x, {"c": 0.95, "k": 3.0})
(0.968, True)
>>> moved = KINDS["lower"].null(x, {"c": 0.95, "k": 3.0}, np.random.default_rng(0))["x"]
>>> round(float(moved.mean()), 6)  # the mean moved onto the threshold the claim excludes
0.95
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["ACCEPTS", "KINDS", "SD_FLOOR", "Kind", "mean_se"]

K = 3.0  # standard errors of margin, unless a claim says otherwise


def mean_se(x) -> tuple[float, float]:
    """Mean and standard error of the non-NaN values of ``x`` (flattened).

    Parameters
    ----------
    x : array_like
        Values; NaN (a seed with no value) is left out.

    Returns
    -------
    mean, se : float
        NaN for no value; the standard error (``ddof=1``) is 0 for one value.

    Examples
    --------
    >>> mean_se([1.0, 3.0, float("nan")])
    (2.0, 1.0)
    """
    x = np.asarray(x, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


def _median(x) -> float:
    x = np.asarray(x, dtype=float).ravel()
    return float(np.median(x[~np.isnan(x)]))


@dataclass(frozen=True)
class Kind:
    """A statistic: ``evaluate(values, params) -> (statistic, passed)``; ``null(pooled, params, rng) -> pooled values
    on the claim's null`` (``rng`` for the nulls that draw); ``text(params)`` the threshold in words."""

    evaluate: Callable[[dict, dict], tuple[float, bool]]
    null: Callable[[dict, dict], dict]
    text: Callable[[dict], str]
    null_text: str
    #: ``(pooled values, params, seeds per block) -> probability`` that a block passes on the null, where it is
    #: known exactly (a share of seeds: binomial); None: the calibration draws it.
    exact_false_pass: Callable[[dict, dict, int], float] | None = None


# ---------------------------------------------------------------- means with a margin of k standard errors

#: The smallest seed-to-seed standard deviation a mean's margin is computed with (the ``sd_floor`` of a claim on
#: another scale says its own): a block whose seeds agree exactly (every head at chance, or at 1.0) has a
#: standard error of 0, which would make any difference of means, however small, "k standard errors" -- a
#: comparison for free.  One point of accuracy, about the binomial spread of one head's accuracy on the 2,000
#: test sequences near 0.5 (0.011): below it, the seeds' agreement is the test set's resolution, not evidence.
SD_FLOOR = 0.01


def _spread(x, p) -> tuple[float, float]:
    """Mean and standard error of ``x``, the error at least ``sd_floor / sqrt(n)``; NaN for fewer than 2 seeds."""
    x = np.asarray(x, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if x.size < 2:  # one seed (or none) gives no spread at all: no margin can be stated
        return math.nan, math.nan
    m, se = mean_se(x)
    return m, max(se, p.get("sd_floor", SD_FLOOR) / math.sqrt(x.size))


def _lower(v, p):
    m, se = _spread(v["x"], p)
    stat = m - p.get("k", K) * se
    return stat, bool(stat >= p["c"])


def _upper(v, p):
    m, se = _spread(v["x"], p)
    stat = m + p.get("k", K) * se
    return stat, bool(stat <= p["c"])


def _exceeds(v, p):  # the complement of _upper: the rule "mean + k SE <= c" fails
    m, se = _spread(v["x"], p)
    stat = m + p.get("k", K) * se
    return stat, bool(stat > p["c"])


def _to_mean(v, p, rng):  # the mean moved onto the bound
    x = np.asarray(v["x"], dtype=float)
    return {**v, "x": x - np.nanmean(x) + p["c"]}


def _gap(v, p):
    (ma, sa), (mb, sb) = _spread(v["a"], p), _spread(v["b"], p)
    stat = (ma - p.get("off", 0.0) - mb) / math.hypot(sa, sb)  # the joined error is never 0 (the floor)
    return stat, bool(stat > p.get("k", K))


def _gap_null(v, p, rng):  # seed by seed, a moved so that mean a - off equals mean b: the two readings exchangeable
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    return {**v, "a": a - (np.nanmean(a) - p.get("off", 0.0) - np.nanmean(b))}


def _paired(v, p):
    d = np.asarray(v["a"], dtype=float) - np.asarray(v["b"], dtype=float) - p.get("off", 0.0)  # seed by seed
    m, se = _spread(d, p)
    stat = m / se  # equal readings seed by seed: a difference of 0 over the floor's error, no gap
    return stat, bool(stat > p.get("k", K))


def _times(v, p):
    (ma, sa), (mb, sb) = _spread(v["a"], p), _spread(v["b"], p)
    k = p.get("k", K)
    stat = (ma - k * sa) - p["f"] * (mb + k * sb)
    return stat, bool(stat > 0)


def _tie(v, p):
    """A tie with a stated margin: the difference of means, with ``k`` joined errors, inside ``margin``."""
    (ma, sa), (mb, sb) = _spread(v["a"], p), _spread(v["b"], p)
    stat = abs(ma - mb) + p.get("k", K) * math.hypot(sa, sb)
    return stat, bool(stat <= p["margin"])


def _tie_null(v, p, rng):  # a moved, seed by seed, so that its mean is b's plus the margin (on the side it was)
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    side = 1.0 if np.nanmean(a) >= np.nanmean(b) else -1.0
    return {**v, "a": a - np.nanmean(a) + np.nanmean(b) + side * p["margin"]}


def _times_null(v, p, rng):
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    return {**v, "a": a - np.nanmean(a) + p["f"] * np.nanmean(b)}


def _param(v, p, key, default=None):
    """A threshold's value: the claim's own, or one the numbers give (a constant of ``v``, not a per-seed array)."""
    return float(v[key]) if key in v else p.get(key, default)


def _half_width(v, p) -> float:
    m, se = mean_se(v["x"])
    extra, k = _param(v, p, "extra", 0.0), p.get("k", K)
    return _param(v, p, "tol", 0.0) + k * (max(se, extra) if p.get("max") else math.hypot(se, extra))


def _near(v, p):
    m, _ = mean_se(v["x"])
    stat = abs(m - _param(v, p, "t"))
    return stat, bool(stat <= _half_width(v, p))


def _near_null(v, p, rng):  # an equivalence claim: false when the mean is off by twice the band it accepts
    x = np.asarray(v["x"], dtype=float)
    return {**v, "x": x - np.nanmean(x) + _param(v, p, "t") + 2 * _half_width(v, p)}


def _agree(v, p):
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size + _param(v, p, "binomial", 0.0) / a.size)
    stat = abs(a.mean() - b.mean())
    return stat, bool(stat <= p.get("k", K) * se)


def _agree_null(v, p, rng):
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size + _param(v, p, "binomial", 0.0) / a.size)
    return {**v, "b": b - b.mean() + a.mean() + 2 * p.get("k", K) * se}


# ---------------------------------------------------------------- shares of seeds, medians, modes, spreads


def _share(v, p):
    x = np.asarray(v["x"], dtype=float)
    stat = float(np.mean(x))
    return stat, bool(stat <= p["q"] + 1e-12) if p.get("at_most") else bool(stat >= p["q"] - 1e-12)


def _share_null(v, p, rng):
    """The property drawn afresh at the claim's null rate (``null_rate``, default 1/2: as likely as not)."""
    x = np.asarray(v["x"], dtype=float)
    rate = p.get("null_rate", 0.5)
    return {**v, "x": (rng.random(x.shape) < rate).astype(float)}


def _share_false_pass(v, p, block: int) -> float:
    """The binomial probability that ``block`` seeds pass the share at its null rate."""
    x = np.asarray(v["x"], dtype=float)
    trials = block * (x.shape[1] if x.ndim > 1 else 1)
    rate = p.get("null_rate", 0.5)
    if p.get("at_most"):
        ks = range(0, math.floor(p["q"] * trials + 1e-9) + 1)
    else:
        ks = range(math.ceil(p["q"] * trials - 1e-9), trials + 1)
    return float(sum(math.comb(trials, k) * rate**k * (1 - rate) ** (trials - k) for k in ks))


def _median_se(x) -> float:
    """The standard error of a median, ``1.2533 sigma / sqrt(n)`` with the robust ``sigma = 1.4826 MAD``."""
    x = np.asarray(x, dtype=float).ravel()
    x = x[~np.isnan(x)]
    mad = float(np.median(np.abs(x - np.median(x))))
    return 1.2533 * 1.4826 * mad / math.sqrt(x.size)


def _median_eval(v, p):
    med = _median(v["x"])
    margin = p.get("k", 0.0) * _median_se(v["x"])
    return med, bool(p.get("lo", -math.inf) < med - margin and med + margin < p.get("hi", math.inf))


def _median_null(v, p, rng):  # the median moved onto the nearer bound the claim excludes
    x = np.asarray(v["x"], dtype=float)
    med = _median(x)
    bounds = [b for b in (p.get("lo"), p.get("hi")) if b is not None]
    edge = min(bounds, key=lambda b: abs(b - med))
    return {**v, "x": x - med + edge}


def _mode(v, p):
    values = [int(a) for a in np.asarray(v["x"]).ravel() if not np.isnan(a)]
    counts = Counter(values).most_common()
    top = counts[0][1]
    stat = float(sum(c for a, c in counts if a == p["target"]) / max(len(values), 1))
    tied = [a for a, c in counts if c == top]
    return stat, bool(tied == [p["target"]])


def _mode_null(v, p, rng):
    """The target and the runner-up exchanged seed by seed with probability 1/2: equally common."""
    x = np.asarray(v["x"], dtype=float)
    values = Counter(int(a) for a in x.ravel() if not np.isnan(a))
    others = [a for a, _ in values.most_common() if a != p["target"]]
    other = others[0] if others else p["target"] + 1  # no other answer in the pool: any other label
    flip = rng.random(x.shape) < 0.5
    swapped = np.where(x == p["target"], other, np.where(x == other, p["target"], x))
    return {**v, "x": np.where(flip, swapped, x)}


def _sd_above(v, p):
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    floor = p.get("sd_floor", SD_FLOOR)  # b's seeds all equal: its spread is taken as the floor, not as 0
    stat = float(np.std(a, ddof=1) / max(float(np.std(b, ddof=1)), floor))
    return stat, bool(stat > p["f"])


def _sd_null(v, p, rng):  # a's spread shrunk to null_f (default f) times b's
    a, b = np.asarray(v["a"], dtype=float), np.asarray(v["b"], dtype=float)
    scale = p.get("null_f", p["f"]) * np.std(b, ddof=1) / np.std(a, ddof=1)
    return {**v, "a": a.mean() + (a - a.mean()) * scale}


def _k(p) -> str:
    return f"{p.get('k', K):g}"


def _g(p, key, default) -> str:
    value = p.get(key, default)
    return f"{value:.4g}" if isinstance(value, (int, float)) else str(value)


def _near_text(p) -> str:
    how = "max" if p.get("max") else "hypot"
    return f"|mean - {_g(p, 't', 'target')}| <= {_g(p, 'tol', 0)} + {_k(p)} x {how}(SE, {_g(p, 'extra', 0)})"


#: Kind name -> statistic, null and wording.
KINDS: dict[str, Kind] = {
    "lower": Kind(_lower, _to_mean, lambda p: f"mean - {_k(p)} SE >= {p['c']:g}", "mean at the bound"),
    "upper": Kind(_upper, _to_mean, lambda p: f"mean + {_k(p)} SE <= {p['c']:g}", "mean at the bound"),
    "exceeds": Kind(_exceeds, _to_mean, lambda p: f"mean + {_k(p)} SE > {p['c']:g}", "mean at the bound"),
    "gap": Kind(
        _gap,
        _gap_null,
        lambda p: (f"(mean a - {p['off']:g}" if p.get("off") else "(mean a") + f" - mean b) / joined SE > {_k(p)}",
        "a and b exchangeable (mean a - off = mean b, seeds paired)",
    ),
    "paired": Kind(
        _paired,
        _gap_null,
        lambda p: (f"mean(a - b - {p['off']:g})" if p.get("off") else "mean(a - b)") + f" / its SE > {_k(p)}",
        "a and b exchangeable (mean a - off = mean b, seeds paired)",
    ),
    "times": Kind(
        _times, _times_null, lambda p: f"mean a - {_k(p)} SE > {p['f']:g} x (mean b + {_k(p)} SE)", "a = f x b"
    ),
    "near": Kind(
        _near,
        _near_null,
        _near_text,
        "mean off by twice the band it accepts",
    ),
    "agree": Kind(
        _agree, _agree_null, lambda p: f"|mean a - mean b| <= {_k(p)} joined SE", "off by twice the band it accepts"
    ),
    "tie": Kind(
        _tie,
        _tie_null,
        lambda p: f"|mean a - mean b| + {_k(p)} joined SE <= {p['margin']:g}",
        "the means apart by the margin",
    ),
    "share": Kind(
        _share,
        _share_null,
        lambda p: f"share of seeds {'<=' if p.get('at_most') else '>='} {p['q']:g}",
        "property at its null rate (null_rate, default 1/2)",
        _share_false_pass,
    ),
    "median": Kind(
        _median_eval,
        _median_null,
        lambda p: " and ".join(
            t
            for t in (
                f"median - {p.get('k', 0):g} SE > {p['lo']:g}" if "lo" in p else "",
                f"median + {p.get('k', 0):g} SE < {p['hi']:g}" if "hi" in p else "",
            )
            if t
        ),
        "median at the nearer bound",
    ),
    "mode": Kind(_mode, _mode_null, lambda p: f"most common value is {p['target']}", "target and runner-up tied"),
    "sd_above": Kind(
        _sd_above, _sd_null, lambda p: f"SD of a > {p['f']:g} x SD of b", "SD of a = null_f (default f) x SD of b"
    ),
}

_MEAN = ("k", "sd_floor")
#: What a claim of each kind reads: ``(inputs it needs, parameters it accepts, scalar inputs it may take from the
#: numbers)``; the claims table (:mod:`poskernels.claims.table`) refuses anything else.
ACCEPTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "lower": (("x",), ("c", *_MEAN), ()),
    "upper": (("x",), ("c", *_MEAN), ()),
    "exceeds": (("x",), ("c", *_MEAN), ()),
    "gap": (("a", "b"), ("off", *_MEAN), ()),
    "paired": (("a", "b"), ("off", *_MEAN), ()),
    "times": (("a", "b"), ("f", *_MEAN), ()),
    "near": (("x",), ("t", "tol", "extra", "k", "max"), ("t", "tol", "extra")),
    "agree": (("a", "b"), ("k", "binomial"), ("binomial",)),
    "tie": (("a", "b"), ("margin", *_MEAN), ()),
    "share": (("x",), ("q", "at_most", "null_rate"), ()),
    "median": (("x",), ("lo", "hi", "k"), ()),
    "mode": (("x",), ("target",), ()),
    "sd_above": (("a", "b"), ("f", "null_f"), ()),
}
