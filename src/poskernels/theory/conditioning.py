"""The fragility of Theorem 2: rank and condition numbers of the code matrix, in exact arithmetic.

Theorem 2 decides relativity on a window of ``d + 1`` positions, but over a window short against the slow
planes' wavelengths the ``W x d`` code matrix ``P`` (rows ``p(0) .. p(W-1)``) is nearly singular, with
condition numbers past what double precision resolves.  :func:`singular_values_exact` and
:func:`condition_number_exact` compute them in 200-digit arithmetic (mpmath) from the Gram matrix ``P^T P`` in
closed form; :func:`numerical_rank` and :func:`condition_number_float64` are double precision's attempt beside
them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..encodings import DEFAULT_BASE
from ..errors import PosKernelsError, check_base, check_even_dimension, check_int, check_length
from .kernel import _code_matrix

if TYPE_CHECKING:
    import mpmath

__all__ = [
    "EXACT_BUDGET",
    "SVD_BUDGET",
    "condition_number_exact",
    "condition_number_float64",
    "numerical_rank",
    "singular_values_exact",
]


#: Work budget of the exact singular values, ``d**3 * digits`` (d = 32 at 400 digits: about 0.4 s).
EXACT_BUDGET = 32**3 * 400

#: Work budget of a double-precision SVD of a ``W x d`` code matrix, ``W d min(W, d)`` (a few seconds at most).
SVD_BUDGET = 2**34


def _svd_budget(W: int, d: int) -> None:
    """Refuse an SVD of the checked ``W x d`` code matrix past :data:`SVD_BUDGET`."""
    if W * d * min(W, d) > SVD_BUDGET:
        raise PosKernelsError(
            f"an SVD of the {W} x {d} code matrix costs W d min(W, d) = {W * d * min(W, d)} operations; the limit is "
            f"{SVD_BUDGET} (a few seconds); got W = {W}, d = {d}"
        )


def _window(W, d: int) -> int:
    return _full_rank(check_length("W", W), d)


def _full_rank(W: int, d: int) -> int:
    """A checked window ``W`` of at least ``d`` positions (a ``W x d`` code matrix of full column rank)."""
    if W < d:
        raise PosKernelsError(f"W must be >= d = {d} for a W x d code matrix of full column rank; got {W}")
    return W


def numerical_rank(W: int, d: int = 16, b: float = DEFAULT_BASE) -> int:
    """NumPy's numerical rank of the ``W x d`` code matrix over positions ``0..W-1`` (Theorem 2's fragility).

    Parameters
    ----------
    W : int
        The window: positions ``0..W-1``, at least 1.
    d, b : int, float, optional
        The code's even width and base (default 16 and 10,000).

    Returns
    -------
    int
        ``numpy.linalg.matrix_rank(P)``; below ``d`` where the slow planes' columns are too close for float64.

    Raises
    ------
    PosKernelsError
        If `W` is not a positive integer, `d` not a positive even integer, `b` not a base above 1, or ``W d`` passes the
        work budget.

    Examples
    --------
    >>> numerical_rank(64)
    14
    """
    W, d = check_length("W", W), check_even_dimension(d)
    _svd_budget(W, d)
    return int(np.linalg.matrix_rank(_code_matrix(W, d, b)))


def condition_number_float64(W: int, d: int = 16, b: float = DEFAULT_BASE) -> float:
    """The double-precision attempt ``numpy.linalg.cond(P)`` (2-norm), which saturates near ``1/eps``.

    Parameters
    ----------
    W : int
        The window: positions ``0..W-1``, at least 1.
    d, b : int, float, optional
        The code's even width and base (default 16 and 10,000).

    Returns
    -------
    float
        The condition number float64 reports (compare :func:`condition_number_exact`).

    Raises
    ------
    PosKernelsError
        If `W` is not a positive integer, `d` not a positive even integer, `b` not a base above 1, or ``W d`` passes the
        work budget.

    Examples
    --------
    >>> round(condition_number_float64(4096), 1)
    17.7
    """
    d = check_even_dimension(d)
    W = check_length("W", W)
    _svd_budget(W, d)
    return float(np.linalg.cond(_code_matrix(_full_rank(W, d), d, b)))


def _gram_closed_form(W: int, w: list) -> mpmath.matrix:
    """``P^T P`` for the code over ``0..W-1`` in the working mpmath precision, by Dirichlet sums.

    ``sum_m cos(m x) = sin(W x/2) cos((W-1) x/2) / sin(x/2)`` and the sine analogue with ``sin((W-1)x/2)``;
    products of columns become such sums by product-to-sum.
    """
    import mpmath  # here: only the exact arithmetic needs it (imported at every command's start, ~20 ms)

    def C(x):  # sum_{m<W} cos(m x)
        return mpmath.mpf(W) if x == 0 else mpmath.sin(W * x / 2) * mpmath.cos((W - 1) * x / 2) / mpmath.sin(x / 2)

    def S(x):  # sum_{m<W} sin(m x)
        return mpmath.mpf(0) if x == 0 else mpmath.sin(W * x / 2) * mpmath.sin((W - 1) * x / 2) / mpmath.sin(x / 2)

    h = len(w)
    G = mpmath.matrix(2 * h, 2 * h)
    for j in range(h):
        for k in range(j, h):
            cm, cp = C(w[j] - w[k]), C(w[j] + w[k])
            G[2 * j, 2 * k] = (cm + cp) / 2  # cos_j . cos_k
            G[2 * j + 1, 2 * k + 1] = (cm - cp) / 2  # sin_j . sin_k
            G[2 * j, 2 * k + 1] = (S(w[k] + w[j]) + S(w[k] - w[j])) / 2  # cos_j . sin_k
            G[2 * j + 1, 2 * k] = (S(w[j] + w[k]) + S(w[j] - w[k])) / 2  # sin_j . cos_k
            for r in range(2):
                for s in range(2):
                    G[2 * k + s, 2 * j + r] = G[2 * j + r, 2 * k + s]
    return G


def singular_values_exact(W: int, d: int = 16, b: float = DEFAULT_BASE, digits: int = 200) -> np.ndarray:
    """Singular values of the ``W x d`` code matrix ``P`` computed in ``digits``-digit arithmetic.

    Parameters
    ----------
    W : int
        Window length (positions ``0..W-1``), >= d.
    d, b : int, float
        Width and base of the code.
    digits : int
        Decimal digits of the mpmath working precision.

    Returns
    -------
    ndarray, shape (d,)
        Descending; the square roots of the eigenvalues of the ``d x d`` Gram matrix ``P^T P``, whose
        entries come in closed form (Dirichlet sums), each rounded to a float only at the end.

    Notes
    -----
    A window short against the slow planes' wavelengths barely sees them turn, so their columns are
    nearly dependent (the article's remark after Theorem 2): at ``W = 16`` the smallest singular value
    is ``3e-30`` of the largest, which no double-precision factorization of ``P`` can resolve.

    Examples
    --------
    >>> s = singular_values_exact(64)
    >>> f"{s[-1] / s[0]:.2g}"
    '1.4e-19'
    """
    d = check_even_dimension(check_int("d", d, 2, 64, "exact arithmetic: the cost grows as d**3"))
    W = _window(W, d)
    b = check_base(b)
    digits = check_int("digits", digits, 16, 1000, "fewer than float64's; the cost grows with the digits carried")
    if d**3 * digits > EXACT_BUDGET:
        raise PosKernelsError(
            f"d = {d} at {digits} digits is past the exact budget d**3 * digits <= {EXACT_BUDGET} (under a second); "
            "lower one of them"
        )
    import mpmath  # here: only the exact arithmetic needs it (imported at every command's start, ~20 ms)

    with mpmath.workdps(digits):
        w = [mpmath.mpf(b) ** (-mpmath.mpf(2 * j) / d) for j in range(d // 2)]  # omega_j at full precision
        try:
            lam = mpmath.eigsy(_gram_closed_form(W, w), eigvals_only=True)  # eigenvalues of P^T P
        except RuntimeError as err:  # mpmath: no convergence at this precision
            raise PosKernelsError(f"{digits} digits do not suffice at W = {W}, d = {d} ({err}); use more") from None
        if min(lam) <= 0:
            raise PosKernelsError(f"{digits} digits do not resolve the smallest singular value at W = {W}; use more")
        return np.array(sorted((float(mpmath.sqrt(x)) for x in lam), reverse=True))  # (d,)


def condition_number_exact(W: int, d: int = 16, b: float = DEFAULT_BASE, digits: int = 200) -> float:
    """The 2-norm condition number ``s_max / s_min`` of the ``W x d`` code matrix in ``digits``-digit arithmetic.

    See :func:`singular_values_exact`; the two singular values are exact to float rounding.

    Parameters
    ----------
    W : int
        The window: positions ``0..W-1``, at least 1.
    d, b : int, float, optional
        The code's even width and base (default 16 and 10,000).
    digits : int, optional
        The working precision of mpmath, in decimal digits; default 200.

    Returns
    -------
    float
        ``s_max / s_min``, rounded to float64 at the end.

    Raises
    ------
    PosKernelsError
        If `W` is not a positive integer, `d` not a positive even integer, `b` not a base above 1, or ``W d`` passes the
        work budget, or `digits` lies
        outside [16, 1000].

    Examples
    --------
    >>> f"{condition_number_exact(256):.3g}"
    '1.24e+11'
    """
    s = singular_values_exact(W, d, b, digits)  # (d,)
    return float(s[0] / s[-1])
