"""Position as a set of clocks: Proposition 2 (shift is a rotation) and Theorem 1 (the stationary kernel).

The sinusoidal code ``p(m)`` of Definition 2 turns plane ``j`` by ``m omega_j``.  Proposition 2 says a
shift of position is a block rotation ``R_omega(k)``; Theorem 1 says the inner product of two positions is
the stationary kernel

    kappa_d(Delta) = sum_j cos(Delta omega_j),

that ``(2/d) kappa_d`` tends to the cosine-integral limit ``I_b`` as ``d`` grows (:mod:`poskernels.theory.ruler`,
the logarithmic ruler; its names stay in this module's ``__all__``), and what the kernel says of the columns of
the code matrix ``P``.

Every function here is pure NumPy over arrays; the codes and rotations themselves live in
:mod:`poskernels.encodings`.  Each public function checks its arguments once (``d`` and ``b`` through
:func:`~poskernels.encodings.omega`) and sums the kernel through the unchecked
:func:`~poskernels.encodings.codes.code_kernel`, never through another checking entry point of this module.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE, omega, rotate
from ..encodings.codes import code_kernel, plane_frequencies, sinusoidal_code_core
from ..errors import (
    PosKernelsError,
    check_array,
    check_base,
    check_budget,
    check_even_dimension,
    check_finite_result,
    check_positive_int,
    check_real,
)
from .ruler import (  # Theorem 1 (ii), in __all__ here as before the split
    I_b,
    _offsets,
    octave_cost,
    ruler,
    ruler_error_bound,
)

__all__ = [
    "I_b",
    "code_matrix",
    "frequency_atoms",
    "gram_matrix",
    "kappa_d",
    "max_column_cosine",
    "min_code_distance",
    "normalized_kernel",
    "octave_cost",
    "ruler",
    "ruler_error_bound",
    "shift_code",
]


# --------------------------------------------------------------------------- Proposition 2


def shift_code(p: ArrayLike, k: float, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """Shift codes by ``k`` positions with the block rotation ``R_omega(k)`` (Proposition 2 (i)).

    Parameters
    ----------
    p : array_like, shape (..., d)
        Sinusoidal codes (or any vectors), planes as consecutive pairs, cosine first.
    k : float
        Shift.
    d, b : int, float
        Width and base of the code.

    Returns
    -------
    ndarray, shape (..., d)
        ``R_omega(k) p``, computed plane by plane without building the ``d x d`` matrix.

    Notes
    -----
    Proposition 2: ``p(m + k) = R_omega(k) p(m)``; ``R_omega(k) R_omega(l) = R_omega(k + l)``;
    ``||p(m)||^2 = d/2``; ``p`` is injective on the integers.

    Examples
    --------
    >>> from poskernels.encodings import sinusoidal_code
    >>> np.allclose(shift_code(sinusoidal_code(3, 8), 4, 8), sinusoidal_code(7, 8))
    True
    """
    p = check_array("p", p)
    d = check_even_dimension(d)
    if p.shape[-1:] != (d,):
        raise PosKernelsError(f"p must have shape (..., {d}); got shape {p.shape}")
    k = check_real("the shift k", k)
    return rotate(p, k * plane_frequencies(d, check_base(b)))  # (..., d): plane j turned by k omega_j


def min_code_distance(W: int, d: int, b: float = DEFAULT_BASE) -> float:
    """Smallest distance ``||p(m) - p(n)||`` between two distinct positions of ``0..W-1`` (Proposition 2 (iv)).

    Parameters
    ----------
    W : int
        Window length, >= 2.
    d, b : int, float
        Width and base of the code.

    Returns
    -------
    float
        ``min_{1 <= Delta < W} sqrt(d - 2 kappa_d(Delta))``, positive because the code is injective.

    Notes
    -----
    ``||p(m) - p(n)||^2 = ||p(m)||^2 + ||p(n)||^2 - 2 <p(m), p(n)> = d - 2 kappa_d(n - m)`` by
    Proposition 2 (iii) and Theorem 1 (i).  It shrinks as ``W`` grows: plane 0 comes back near its
    start every ``2 pi`` positions, and then only the slower planes keep the two positions apart.

    Examples
    --------
    >>> round(min_code_distance(64, 16), 3)
    1.015
    """
    W = check_positive_int("W", W)
    if W < 2:
        raise PosKernelsError(f"W must be >= 2 to have two distinct positions; got {W}")
    width = check_even_dimension(d)
    check_budget(f"min_code_distance at W = {W}, d = {d}", W * width)  # and so the kernel's (W - 1) d/2 terms
    w = plane_frequencies(width, check_base(b))  # (d/2,) omega(d, b)
    sq = width - 2.0 * code_kernel(np.arange(1, W, dtype=np.float64), w)  # (W-1,) d - 2 kappa_d(Delta)
    return float(np.sqrt(max(sq.min(), 0.0)))


# --------------------------------------------------------------------------- Theorem 1 (i)


def kappa_d(delta: ArrayLike, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """The stationary kernel ``kappa_d(Delta) = sum_j cos(Delta omega_j)`` (Theorem 1 (i)).

    Parameters
    ----------
    delta : array_like, shape (...,)
        Offsets ``n - m`` (any reals).
    d, b : int, float
        Width and base of the code.

    Returns
    -------
    ndarray, shape (...,)
        ``<p(m), p(m + Delta)>``; equals ``d/2`` at ``Delta = 0``.

    Examples
    --------
    >>> float(kappa_d(0, 16))
    8.0
    >>> from poskernels.encodings import sinusoidal_code
    >>> np.allclose(kappa_d(5, 16), sinusoidal_code(2, 16) @ sinusoidal_code(7, 16))
    True
    """
    delta = _offsets(delta)
    _, w = _kernel_frequencies(delta, d, b)
    return code_kernel(delta, w)  # (...,)


def _kernel_frequencies(delta: np.ndarray, d, b) -> tuple[int, np.ndarray]:
    """The checked width and ``omega(d, b)`` (d/2,) for :func:`kappa_d` at the checked offsets ``delta``: ``d``,
    ``b`` and the kernel's budget checked once (``d <= MAX_D`` keeps omega's own budget)."""
    width = check_even_dimension(d)
    check_budget(f"kappa_d at {delta.size} offsets and d = {d}", delta.size * width // 2)
    return width, plane_frequencies(width, check_base(b))  # (d/2,)


def normalized_kernel(delta: ArrayLike, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """``(2/d) kappa_d(Delta)``, the similarity of positions ``Delta`` apart on a 0..1 scale (Theorem 1).

    This is the quantity the article's kernel table prints and ``numbers.json`` stores as ``thm1.kernel``.

    Parameters
    ----------
    delta : array_like
        Offsets ``Delta``.
    d, b : int, float
        The even width of the code and its base (``omega_j = b**(-2j/d)``; default 10,000).

    Returns
    -------
    ndarray
        ``(2/d) kappa_d(Delta)``, of `delta`'s shape; 1 at ``Delta = 0``.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer, `b` not a base above 1, or an offset is not finite.

    Examples
    --------
    >>> normalized_kernel([1, 1024], 64).round(3).tolist()
    [0.966, 0.263]
    """
    delta = _offsets(delta)
    width, w = _kernel_frequencies(delta, d, b)
    return 2.0 / width * code_kernel(delta, w)  # (...,) (2/d) kappa_d(Delta)


def frequency_atoms(d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """The ``d`` equally likely values ``+-omega_j`` of the random frequency ``Omega_d`` (Theorem 1 (i)).

    ``(2/d) kappa_d(Delta) = E cos(Delta Omega_d) = E exp(i Delta Omega_d)``: the normalized kernel is the
    characteristic function of this law.

    Parameters
    ----------
    d, b : int, float
        The even width of the code and its base (``omega_j = b**(-2j/d)``; default 10,000).

    Returns
    -------
    ndarray, shape (d,)
        ``(omega_0, ..., omega_{d/2-1}, -omega_0, ..., -omega_{d/2-1})``.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` not a base above 1.

    Examples
    --------
    >>> frequency_atoms(4, 100).tolist()
    [1.0, 0.1, -1.0, -0.1]
    """
    w = omega(d, b)  # (d/2,)
    return np.concatenate([w, -w])  # (d,)


def gram_matrix(positions: ArrayLike, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """Gram matrix ``[kappa_d(m_k - m_i)]`` of the codes of some positions (Theorem 1 (i)).

    Parameters
    ----------
    positions : array_like, shape (n,)
    d, b : int, float

    Returns
    -------
    ndarray, shape (n, n)
        ``P P^T`` with ``P`` the codes stacked as rows; positive semidefinite, and Toeplitz when the
        positions are evenly spaced.

    Examples
    --------
    >>> gram_matrix([0, 1, 2], 4, 100).round(3)
    array([[2.   , 1.535, 0.564],
           [1.535, 2.   , 1.535],
           [0.564, 1.535, 2.   ]])

    A window whose matrix would not fit is refused before anything is allocated, with the memory it would need:

    >>> gram_matrix(range(100_000), 64)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: gram_matrix of 100000 positions, d = 64 (...: 2384 GiB) would hold ...
    """
    m = _offsets(positions)
    if m.ndim != 1:
        raise PosKernelsError(f"positions must be one-dimensional; got shape {m.shape}")
    n, planes = m.size, check_even_dimension(d) // 2
    need = n * n * planes  # the cosines kappa_d sums, (n, n, d/2): the largest array of the call
    gib = need * 8 / 2**30
    check_budget(f"gram_matrix of {n} positions, d = {d} ({n}^2 offsets x {planes} planes: {gib:.4g} GiB)", need)
    with np.errstate(over="ignore"):
        offsets = m[None, :] - m[:, None]  # (n, n)
    check_finite_result("the offsets m' - m", offsets, "positions less than 1.8e308 apart", positions=m)
    return code_kernel(offsets, plane_frequencies(planes * 2, check_base(b)))  # (n, n) kappa_d(m' - m)


# --------------------------------------------------------------------------- columns of P


def code_matrix(W: int, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """The ``W x d`` matrix ``P`` whose row ``m`` is ``p(m)``, positions ``0..W-1`` (Definition 2's sinusoidal code).

    Parameters
    ----------
    W : int
        The number of positions, at least 1.
    d, b : int, float
        The even width of the code and its base (``omega_j = b**(-2j/d)``; default 10,000).

    Returns
    -------
    ndarray, shape (W, d)
        The codes of positions ``0..W-1``.

    Raises
    ------
    PosKernelsError
        If `W` is not a positive integer, `d` not a positive even integer, `b` not a base above 1, or ``W d`` passes the
        work budget.

    Examples
    --------
    >>> code_matrix(64, 16).shape
    (64, 16)
    """
    W = check_positive_int("W", W)
    return _code_matrix(W, check_even_dimension(d), b)  # (W, d)


def _code_matrix(W: int, d: int, b: float) -> np.ndarray:
    """:func:`code_matrix` of a checked ``W`` and ``d``: its budget, ``b`` checked, then the code (the budget of
    ``W d`` covers :func:`~poskernels.encodings.sinusoidal_code`'s two)."""
    check_budget(f"the code matrix at W = {W}, d = {d}", W * d)
    return sinusoidal_code_core(np.arange(W, dtype=float), d, check_base(b))  # (W, d)


def max_column_cosine(W: int, d: int = 16, b: float = DEFAULT_BASE) -> float:
    """Largest ``|cos|`` between two distinct columns of the code matrix ``P`` over positions ``0..W-1``.

    Parameters
    ----------
    W : int
        Window length, >= 2 (at ``W = 1`` every sine column is zero).
    d, b : int, float

    Returns
    -------
    float
        ``max_{k != l} |P[:, k] . P[:, l]| / (||P[:, k]|| ||P[:, l]||)``.

    Notes
    -----
    ``P^T P`` is not diagonal: geometric frequencies are not integer harmonics, and a window is not a
    period (the article's remark after Theorem 1).

    Examples
    --------
    >>> round(max_column_cosine(4096), 3)
    0.739
    """
    W = check_positive_int("W", W)
    if W < 2:
        raise PosKernelsError(f"W must be >= 2 (at W = 1 the sine columns are zero); got {W}")
    width = check_even_dimension(d)
    check_budget(f"the ({d}, {d}) Gram matrix of the columns", width**2)
    P = _code_matrix(W, width, b)  # (W, d)
    G = P.T @ P  # (d, d)
    norms = np.sqrt(np.diag(G))  # (d,)
    if not np.all((norms > 0) & np.isfinite(norms)):  # a column of tiny frequencies whose square underflows:
        P = P / np.abs(P).max(axis=0)  # the cosine is scale-invariant per column, so read each column at max 1
        G = P.T @ P  # (d, d)
        norms = np.sqrt(np.diag(G))  # (d,)
    C = np.abs(G / np.outer(norms, norms))  # (d, d)
    np.fill_diagonal(C, 0.0)
    return float(C.max())
