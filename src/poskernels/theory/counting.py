"""Order, and how a mask leaks it: Proposition 1 (i), the causal mask counts.

With equal scores, a causal layer whose only nonzero value is ``e`` at position 0 outputs ``o_t = e/(t+1)``, so
``t = 1/<o_t, e> - 1`` when ``||e|| = 1``: the mask counts.  Proposition 1 (ii), the exact best bag reader of the
cue task, is :mod:`poskernels.theory.bag_reader` (its names stay in this module's ``__all__``).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array, check_budget, check_finite_result, check_positive_int
from .bag_reader import (  # Proposition 1 (ii), in __all__ here as before the split
    bag_reader_accuracy,
    bag_reader_accuracy_exact,
    expected_max_count,
    expected_max_count_exact,
)

__all__ = [
    "bag_reader_accuracy",
    "bag_reader_accuracy_exact",
    "causal_counter",
    "causal_uniform_attention",
    "expected_max_count",
    "expected_max_count_exact",
    "position_from_counter",
]


# --------------------------------------------------------------------------- Proposition 1 (i)


def causal_uniform_attention(V: ArrayLike) -> np.ndarray:
    """Output of one causal attention layer whose scores are all equal: ``o_t = (v_0 + ... + v_t)/(t+1)``.

    Equal scores make the causal softmax weights uniform over positions ``0..t``.  Works on object
    arrays of :class:`fractions.Fraction` too, for exact arithmetic.

    Parameters
    ----------
    V : array_like, shape (n, dim)
        Values, one row per position.

    Returns
    -------
    ndarray, shape (n, dim)

    Examples
    --------
    >>> causal_uniform_attention([[3.0], [0.0], [3.0]]).ravel().tolist()
    [3.0, 1.5, 2.0]
    """
    V = _values("V", V)
    if V.ndim != 2 or V.shape[0] == 0:
        raise PosKernelsError(f"V must have shape (n, dim) with n >= 1; got shape {V.shape}")
    return _causal_uniform_attention(V)


def _causal_uniform_attention(V: np.ndarray) -> np.ndarray:
    """:func:`causal_uniform_attention` of checked values ``V`` (n, dim), float64 or exact Fractions."""
    counts = np.arange(1, V.shape[0] + 1).reshape(-1, 1)  # (n, 1): t + 1 positions in each prefix
    if V.dtype == object:
        counts = counts.astype(object)  # keep Fractions exact
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.cumsum(V, axis=0) / counts  # (n, dim)
    if V.dtype != object and not np.all(np.isfinite(out)):  # prefix sums past float64's largest: o is linear in V,
        c = np.abs(V).max()  # so o(V) = c o(V / c), each mean within max |V|
        out = c * (np.cumsum(V / c, axis=0) / counts)
    return out


#: Work budget of an exact counter, outputs x digits (2**16 Fractions of 200 digits: well under a second).
COUNTER_EXACT_BUDGET = 2**16 * 200


def causal_counter(n: int, e: ArrayLike) -> np.ndarray:
    """Proposition 1 (i): equal scores, value ``e`` at position 0 and 0 elsewhere, give ``o_t = e/(t+1)``.

    Parameters
    ----------
    n : int
        Sequence length.
    e : array_like, shape (dim,)
        The beginning-of-sequence value (floats, or Fractions for exact arithmetic).

    Returns
    -------
    ndarray, shape (n, dim)
        ``o_t`` for ``t = 0..n-1``.

    Examples
    --------
    >>> causal_counter(4, [1.0]).ravel().tolist()
    [1.0, 0.5, 0.3333333333333333, 0.25]
    """
    n = check_positive_int("n", n)
    e = _values("e", e)
    if e.ndim != 1 or e.size == 0:
        raise PosKernelsError(f"e must be a nonempty vector; got shape {e.shape}")
    check_budget(f"the counter's ({n}, {e.size}) outputs", n * e.size)
    if e.dtype == object:  # exact: each Fraction costs in proportion to its digits (200 at least: the overhead)
        bits = max(max(x.numerator.bit_length(), x.denominator.bit_length()) for x in e.tolist())
        digits = int(bits * math.log10(2)) + 1
        if n * e.size * max(200, digits) > COUNTER_EXACT_BUDGET:
            raise PosKernelsError(
                f"an exact counter of ({n}, {e.size}) Fractions of up to {digits} digits is past the exact budget "
                f"outputs x max(200, digits) <= {COUNTER_EXACT_BUDGET} (well under a second); got "
                f"{n * e.size * max(200, digits)}: pass e as floats, or fewer positions"
            )
    V = np.zeros((n, e.size), dtype=e.dtype)  # (n, dim)
    if e.dtype == object:
        V[:] = 0  # integer zeros stay exact beside Fractions
    V[0] = e
    return _causal_uniform_attention(V)


def position_from_counter(o: ArrayLike, e: ArrayLike) -> np.ndarray:
    """Recover positions from the counter's outputs: ``t = 1/<o_t, e> - 1`` (Proposition 1 (i), ``||e|| = 1``).

    Parameters
    ----------
    o : array_like, shape (n, dim)
        Outputs of :func:`causal_counter`.
    e : array_like, shape (dim,)
        The same unit vector.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> e = [F(3, 5), F(4, 5)]
    >>> position_from_counter(causal_counter(3, e), e).tolist()
    [Fraction(0, 1), Fraction(1, 1), Fraction(2, 1)]
    """
    o, e = _values("o", o), _values("e", e)
    if o.ndim != 2 or e.ndim != 1 or o.shape[1] != e.size:
        raise PosKernelsError(f"o must have shape (n, dim) and e shape (dim,); got {o.shape} and {e.shape}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # past float64: refused below
        dots = o @ e  # (n,)
        check_finite_result("<o_t, e>", dots, "the counter's outputs have |<o_t, e>| <= 1", o=o, e=e)
        if np.any(dots == 0):
            raise PosKernelsError("<o_t, e> is 0 for some t: these are not the counter's outputs for this e")
        t = 1 / dots - 1  # (n,)
    return check_finite_result("the positions 1/<o_t, e> - 1", t, "positions must stay below 1.8e308", o=o, e=e)


def _values(name: str, value) -> np.ndarray:
    """Finite floats, or an object array of exact rationals (Fractions, ints) kept exact."""
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if arr.dtype == object:
        flat = arr.ravel().tolist()
        if all(isinstance(x, numbers.Rational) and not isinstance(x, bool) for x in flat):
            exact = np.empty(arr.shape, dtype=object)  # ints as Fractions: int / int would round through float
            exact.ravel()[:] = [Fraction(x) for x in flat] if arr.ndim else Fraction(arr.item())
            return exact
    return check_array(name, value)
