"""Which score matrices see only offsets: Theorem 2, the commutant of ``R_omega(1)``, and its fragility.

A head scores position ``m`` against ``n`` through ``p(m)^T M p(n)`` (the position-against-position term).
Theorem 2: this depends only on ``n - m`` exactly when ``M`` commutes with ``R_omega(1)``, exactly when
``M = (+)_j (a_j I + c_j J)``, a ``d``-dimensional subspace of the ``d^2``-dimensional space of score
matrices; a window of ``d + 1`` consecutive positions already decides it.  The relativity defect
``delta(M) = ||M - Pi M||_F / ||M||_F`` measures the miss, and ``E delta^2 = 1 - 1/d`` for Gaussian ``M``.

Exactness is fragile: over a window short against the slow planes' wavelengths the code matrix is nearly
singular, with condition numbers past what double precision resolves; :mod:`poskernels.theory.conditioning`
computes them in 200-digit arithmetic (its names are re-exported here).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE, R_omega, clock_code, omega, plane_angles  # noqa: F401  (omega: the Examples; DEFAULT_BASE: as before)
from ..errors import PosKernelsError, check_array, check_budget, check_even_dimension, check_finite_result, check_int
from .conditioning import (  # noqa: F401  (EXACT_BUDGET, SVD_BUDGET: importable from here as before)
    EXACT_BUDGET,
    SVD_BUDGET,
    condition_number_exact,
    condition_number_float64,
    numerical_rank,
    singular_values_exact,
)

__all__ = [
    "clock_code",
    "commutant_coefficients",
    "commutant_matrix",
    "commutant_projection",
    "condition_number_exact",
    "condition_number_float64",
    "expected_random_defect",
    "numerical_rank",
    "relative_score",
    "relativity_defect",
    "singular_values_exact",
    "shift_commutator_map",
    "window_map",
]


def _score_matrices(M) -> np.ndarray:
    """``M`` as a float array of shape ``(..., d, d)`` with ``d`` even, else raise."""
    M = check_array("M", M)
    if M.ndim < 2 or M.shape[-1] != M.shape[-2]:
        raise PosKernelsError(f"M must be square, shape (..., d, d); got shape {M.shape}")
    check_even_dimension(M.shape[-1], "the size d of M")
    return M


def _frequencies(w) -> np.ndarray:
    """Frequencies as a 1-d float array of distinct values in (0, pi) (Theorem 2's hypothesis)."""
    w = check_array("w", w)
    if w.ndim != 1 or w.size == 0 or np.any(w <= 0) or np.any(w >= np.pi) or np.unique(w).size != w.size:
        raise PosKernelsError(f"frequencies must be distinct numbers in (0, pi), one axis; got {w!r}")
    return w


# --------------------------------------------------------------------------- Theorem 2 (c) and Pi


def commutant_coefficients(M: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients ``(a_j, c_j)`` of ``Pi M = (+)_j (a_j I + c_j J)``.

    Parameters
    ----------
    M : array_like, shape (..., d, d)

    Returns
    -------
    a, c : ndarray, shape (..., d/2)
        ``a_j = tr(B_j)/2`` and ``c_j = (B_j[1, 0] - B_j[0, 1])/2`` for the diagonal ``2 x 2`` block ``B_j``.

    Examples
    --------
    >>> a, c = commutant_coefficients(np.arange(16.0).reshape(4, 4))
    >>> a.tolist(), c.tolist()
    ([2.5, 12.5], [1.5, 1.5])
    """
    return _commutant_coefficients(_score_matrices(M))


def _commutant_coefficients(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`commutant_coefficients` of checked square matrices ``M`` (..., d, d), d even."""
    B00, B01 = M[..., 0::2, 0::2], M[..., 0::2, 1::2]  # (..., d/2, d/2) each
    B10, B11 = M[..., 1::2, 0::2], M[..., 1::2, 1::2]
    diag = lambda X: np.diagonal(X, axis1=-2, axis2=-1)  # noqa: E731  (..., d/2)
    with np.errstate(over="ignore"):
        a, c = (diag(B00) + diag(B11)) / 2.0, (diag(B10) - diag(B01)) / 2.0
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(c))):  # sums past float64's largest: halve, then add
        a, c = diag(B00) / 2.0 + diag(B11) / 2.0, diag(B10) / 2.0 - diag(B01) / 2.0
    return a, c


def commutant_matrix(a: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``(+)_j (a_j I + c_j J)`` with ``J = R(pi/2)``: a score matrix that sees only offsets (Theorem 2 (c)).

    Parameters
    ----------
    a, c : array_like, shape (..., d/2)

    Returns
    -------
    ndarray, shape (..., d, d)

    Examples
    --------
    >>> commutant_matrix([1.0], [2.0]).tolist()
    [[1.0, -2.0], [2.0, 1.0]]
    """
    a, c = check_array("a", a), check_array("c", c)
    if a.ndim == 0 or c.ndim == 0 or a.shape[-1] == 0:
        raise PosKernelsError(f"a and c must have shape (..., d/2) with d/2 >= 1; got {a.shape} and {c.shape}")
    try:
        a, c = np.broadcast_arrays(a, c)
    except ValueError:
        raise PosKernelsError(f"a and c must have one shape (..., d/2); got {a.shape} and {c.shape}") from None
    h = a.shape[-1]
    check_budget(f"the commutant matrices of shape {a.shape[:-1] + (2 * h, 2 * h)}", a.size * 4 * h)
    return _commutant_matrix(a, c)


def _commutant_matrix(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`commutant_matrix` of checked coefficients of one shape (..., d/2), within the budget."""
    h = a.shape[-1]
    out = np.zeros(a.shape[:-1] + (2 * h, 2 * h))  # (..., d, d)
    j = np.arange(h)
    out[..., 2 * j, 2 * j] = a
    out[..., 2 * j + 1, 2 * j + 1] = a
    out[..., 2 * j + 1, 2 * j] = c
    out[..., 2 * j, 2 * j + 1] = -c
    return out


def commutant_projection(M: ArrayLike) -> np.ndarray:
    """The orthogonal (Frobenius) projection ``Pi M`` onto the commutant of ``R_omega(1)`` (Theorem 2).

    Keeps each diagonal block's ``(tr B/2) I + ((B_21 - B_12)/2) J`` and zeroes the rest.

    Parameters
    ----------
    M : array_like, shape (..., d, d)

    Returns
    -------
    ndarray, shape (..., d, d)

    Examples
    --------
    >>> commutant_projection([[1.0, 2.0], [4.0, 3.0]]).tolist()
    [[2.0, -1.0], [1.0, 2.0]]
    """
    return _commutant_matrix(*_commutant_coefficients(_score_matrices(M)))  # (..., d, d) the same size as M


def relativity_defect(M: ArrayLike) -> np.ndarray:
    """The relativity defect ``delta(M) = ||M - Pi M||_F / ||M||_F`` (after Theorem 2).

    Zero exactly when ``p(m)^T M p(n)`` depends only on ``n - m``; one when ``M`` has no relative part.

    Parameters
    ----------
    M : array_like, shape (..., d, d), nonzero

    Returns
    -------
    ndarray, shape (...,)

    Examples
    --------
    >>> float(relativity_defect(np.eye(4)))
    0.0
    >>> float(relativity_defect([[1.0, 1.0], [1.0, -1.0]]))
    1.0
    """
    M = _score_matrices(M)
    with np.errstate(over="ignore"):
        norm = np.linalg.norm(M, axis=(-2, -1))  # (...,)
    if not np.all(np.isfinite(norm)):  # entries near float64's largest: delta(c M) = delta(M), so read M / max |M|
        scale = np.abs(M).max(axis=(-2, -1), keepdims=True)  # (..., 1, 1)
        M = M / np.where(scale == 0, 1.0, scale)  # a zero matrix beside a huge one stays 0 (refused below), not NaN
        norm = np.linalg.norm(M, axis=(-2, -1))
    if np.any(norm == 0):
        raise PosKernelsError("the relativity defect is undefined for M = 0; got a zero matrix")
    projection = _commutant_matrix(*_commutant_coefficients(M))  # (..., d, d) Pi(M)
    return np.linalg.norm(M - projection, axis=(-2, -1)) / norm


def expected_random_defect(d: int) -> float:
    """``sqrt(E delta^2) = sqrt(1 - 1/d)`` for a Gaussian ``d x d`` matrix (after Theorem 2).

    ``||Pi M||^2 / ||M||^2`` is Beta(d/2, d(d-1)/2) with mean ``d/d^2 = 1/d``, so ``E delta^2 = 1 - 1/d``.

    Parameters
    ----------
    d : int
        The even width of the score matrix ``M``.

    Returns
    -------
    float
        The root mean square of the relativity defect ``delta(M)``.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer.

    Examples
    --------
    >>> round(expected_random_defect(16), 3)
    0.968
    """
    d = check_even_dimension(d)
    return float(np.sqrt(1.0 - 1.0 / d))


def relative_score(a: ArrayLike, c: ArrayLike, delta: ArrayLike, w: ArrayLike) -> np.ndarray:
    """The trigonometric polynomial ``sum_j (a_j cos(Delta w_j) - c_j sin(Delta w_j))`` (Theorem 2).

    It equals ``p(m)^T M p(n)`` for ``M = (+)_j (a_j I + c_j J)`` and ``Delta = n - m``.

    Parameters
    ----------
    a, c : array_like, shape (d/2,)
    delta : array_like, shape (...,)
    w : array_like, shape (d/2,)

    Returns
    -------
    ndarray, shape (...,)

    Examples
    --------
    >>> w = omega(4)
    >>> M = commutant_matrix([1.0, 2.0], [0.5, -1.0])
    >>> bool(np.isclose(clock_code(3, w) @ M @ clock_code(10, w), relative_score([1, 2], [0.5, -1], 7, w)))
    True
    """
    w, delta = check_array("w", w, ndim=1), check_array("delta", delta)
    a, c = check_array("a", a, ndim=1), check_array("c", c, ndim=1)
    if not a.shape == c.shape == w.shape:
        raise PosKernelsError(f"a, c and w must have one shape (d/2,); got {a.shape}, {c.shape} and {w.shape}")
    check_budget(f"scores at {delta.size} offsets and {w.size} planes", delta.size * w.size)
    ang = plane_angles("relative_score", delta, w)  # (..., d/2): refused if an angle overflows (no cosine)
    with np.errstate(over="ignore", invalid="ignore"):  # coefficients summing past float64's largest: refused below
        score = (a * np.cos(ang) - c * np.sin(ang)).sum(-1)
    return check_finite_result("the relative score", score, "sum_j |a_j| + |c_j| must stay below 1.8e308", a=a, c=c)


# --------------------------------------------------------------------------- Theorem 2 (a') and (b) as linear maps


def shift_commutator_map(w: ArrayLike) -> np.ndarray:
    """The linear map ``M -> R^T M R - M`` with ``R = R_omega(1)``, as a ``d^2 x d^2`` matrix (Theorem 2 (b)).

    Acts on ``M.ravel()`` (row-major).  Its null space is the commutant; Theorem 2 says it has dimension ``d``.

    Parameters
    ----------
    w : array_like, shape (d/2,)
        Distinct frequencies in ``(0, pi)``.

    Returns
    -------
    ndarray, shape (d^2, d^2)

    Examples
    --------
    >>> L = shift_commutator_map(omega(4))
    >>> L.shape, bool(np.allclose(L @ np.eye(4).ravel(), 0))
    ((16, 16), True)
    """
    w = _frequencies(w)
    check_budget(f"the ({(2 * w.size) ** 2}, {(2 * w.size) ** 2}) commutator map", (2 * w.size) ** 4)
    R = R_omega(1, w)  # (d, d)
    # row-major vec(A X B) = kron(A, B^T) vec(X), with A = R^T and B = R
    return np.kron(R.T, R.T) - np.eye(R.size)  # (d^2, d^2)


def window_map(w: ArrayLike, start: int = 0) -> np.ndarray:
    """The map ``M -> [g(m+1, n+1) - g(m, n)]`` over a window of ``d + 1`` consecutive positions (Theorem 2 (a')).

    ``g(m, n) = p(m)^T M p(n)``; rows run over ``m, n`` in ``start .. start + d - 1``, so the window is
    ``start .. start + d``.  Its null space is the set of ``M`` whose score is relative on the window,
    and by Theorem 2 it is the commutant.

    Parameters
    ----------
    w : array_like, shape (d/2,)
        Distinct frequencies in ``(0, pi)``.
    start : int
        First position of the window.

    Returns
    -------
    ndarray, shape (d^2, d^2)
        Acting on ``M.ravel()``.

    Examples
    --------
    >>> A = window_map(omega(4))
    >>> bool(np.allclose(A @ commutant_matrix([1.0, 2.0], [3.0, 4.0]).ravel(), 0))
    True
    """
    w = _frequencies(w)
    d = 2 * w.size
    start = check_int("start", start, -(2**53), 2**53)
    check_budget(f"the ({d * d}, {d * d}) window map", d**4)
    m = start + np.arange(d)  # (d,)
    P0, P1 = clock_code(m, w), clock_code(m + 1, w)  # (d, d) each
    # row (m, n): kron(p(m+1), p(n+1)) - kron(p(m), p(n))
    K1 = np.einsum("ma,nb->mnab", P1, P1).reshape(d * d, d * d)  # (d^2, d^2)
    K0 = np.einsum("ma,nb->mnab", P0, P0).reshape(d * d, d * d)  # (d^2, d^2)
    return K1 - K0
