"""Attention fading, and the scaled softmax that stops it (Nakanishi 2025, "Scalable-Softmax Is Superior for
Attention").

The softmax of ``n`` logits puts weight ``e^{z_i} / sum_j e^{z_j}`` on each; when the logits stay bounded as ``n``
grows, the largest weight goes to 0 like ``1 / n`` ("attention fading").  The scaled softmax multiplies the logits
by ``s log n``, so the weights are ``n^{s z_i} / sum_j n^{s z_j}``:

* :func:`top_weight` (closed form, the paper's Figure 1): one logit ``delta`` above ``n - 1`` equal others.  Plain:
  ``e^delta / (e^delta + n - 1) -> 0``.  Scaled: ``n^{s delta} / (n^{s delta} + n - 1)``, which tends to 1 when
  ``s delta > 1``, to 1/2 when ``s delta = 1`` and to 0 when ``s delta < 1``: the threshold is ``s = 1 / delta``.
* :func:`max_weight_monte_carlo`: the mean largest weight over i.i.d. standard normal logits, by Monte Carlo with a
  seeded Generator.  Plain it fades; scaled, once ``s log n`` passes ``sqrt(2 log n)`` (the frozen phase of the
  random energy model: the largest logit ``~ sqrt(2 log n)`` then outweighs the ``n`` others together) the
  largest weight stays bounded away from 0, so any ``s > sqrt(2 / log n)`` holds it at length ``n``.

Examples
--------
>>> [round(top_weight(n, 5.0), 3) for n in (10, 10**3, 10**5)]
[0.943, 0.129, 0.001]
>>> [round(top_weight(n, 5.0, s=0.43), 3) for n in (10, 10**3, 10**5)]  # the paper's s, above 1 / delta = 0.2
[0.94, 1.0, 1.0]
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import PosKernelsError, check_int, check_positive_int, check_real

__all__ = ["fading_threshold", "max_weight_monte_carlo", "top_weight"]


def top_weight(n: int, delta: float, s: float | None = None) -> float:
    """The weight on one logit ``delta`` above ``n - 1`` equal others: plain softmax, or scaled by ``s log n``.

    Parameters
    ----------
    n : int
        The number of logits, at least 1.
    delta : float
        The top logit's margin over the others.
    s : float or None, optional
        Scalable softmax's scale (logits times ``s log n``); None (the default) for the plain softmax.

    Returns
    -------
    float
        ``e^{lam delta} / (e^{lam delta} + n - 1)``, ``lam = 1`` or ``s log n``.

    Raises
    ------
    PosKernelsError
        If `n` is not a positive integer or `delta`, `s` is not finite.

    Examples
    --------
    >>> top_weight(1, 3.0), top_weight(100, 0.0)
    (1.0, 0.01)
    """
    n = check_positive_int("n", n)
    delta = check_real("delta", delta)
    lam = 1.0 if s is None else check_real("s", s) * math.log(n)
    return 1.0 / (1.0 + (n - 1) * math.exp(-lam * delta)) if lam * delta > -700 else 0.0


def fading_threshold(delta: float) -> float:
    """The scale ``s`` above which :func:`top_weight` tends to 1 as ``n`` grows (below it, to 0): ``1 / delta``.

    Parameters
    ----------
    delta : float
        The top logit's margin, positive.

    Returns
    -------
    float
        ``1 / delta``.

    Raises
    ------
    PosKernelsError
        If `delta` is not a finite positive number.

    Examples
    --------
    >>> fading_threshold(5.0)
    0.2
    """
    delta = check_real("delta", delta)
    if delta <= 0:
        raise PosKernelsError(f"delta must be > 0 (the top logit's margin over the others); got {delta!r}")
    return 1.0 / delta


def max_weight_monte_carlo(n: int, s: float | None, rng: np.random.Generator, trials: int = 200) -> tuple[float, float]:
    """Mean and standard error of the largest softmax weight over ``n`` i.i.d. standard normal logits.

    Parameters
    ----------
    n : int
        Number of logits (keys).
    s : float or None
        The scale: logits times ``s log n``; None for the plain softmax.
    rng : numpy.random.Generator
        The draws' only source.
    trials : int, optional
        Independent vectors drawn, at least 2; default 200.

    Returns
    -------
    tuple of float
        The mean of the largest weight over the trials and its standard error.

    Raises
    ------
    PosKernelsError
        If `n` or `trials` is out of range, `s` not finite or `rng` not a ``numpy.random.Generator``.

    Examples
    --------
    >>> m, se = max_weight_monte_carlo(10_000, None, np.random.default_rng(0))
    >>> m < 0.01
    True
    >>> m, se = max_weight_monte_carlo(10_000, 1.0, np.random.default_rng(0))
    >>> m > 0.5
    True
    """
    n = check_positive_int("n", n)
    trials = check_int("trials", trials, 2, 10**6, "vectors drawn")
    if not isinstance(rng, np.random.Generator):
        raise PosKernelsError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    lam = 1.0 if s is None else check_real("s", s) * math.log(n)
    out = np.empty(trials)
    for i in range(trials):
        z = lam * rng.standard_normal(n)  # (n,)
        e = np.exp(z - z.max())
        out[i] = 1.0 / e.sum()  # the largest weight: e^0 / sum
    return float(out.mean()), float(out.std(ddof=1) / math.sqrt(trials))
