"""Theorem 1 asked of a measured table: is a position code a stationary kernel, and which frequencies does it use.

:func:`toeplitz_defect` is the share of a Gram matrix's squared norm not explained by its average along each
diagonal (:func:`diagonal_means`; 0 exactly for the sinusoidal code), :func:`random_defects` the same share for
random matrices beside a model's, and :func:`table_spectrum` the power of a table along the position axis (which
frequencies it uses, Herglotz's reading).  Pure functions of arrays; :mod:`poskernels.census.probe` reads the tables of
released models, and :mod:`poskernels.theory.empirical` the heads' kernels over offsets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array

__all__ = [
    "diagonal_means",
    "random_defects",
    "table_spectrum",
    "toeplitz_defect",
]


def _matrix(name: str, G: ArrayLike) -> np.ndarray:
    G = check_array(name, G)
    if G.ndim != 2 or 0 in G.shape:
        raise PosKernelsError(f"{name} must be a nonempty matrix; got shape {G.shape}")
    return G


def diagonal_means(G: ArrayLike) -> np.ndarray:
    """The best function of the offset in least squares: each entry replaced by its diagonal's mean.

    Parameters
    ----------
    G : array_like, shape (n, m)
        A matrix, rows and columns indexed by position (a Gram matrix, a score table).

    Returns
    -------
    ndarray, shape (n, m)
        Entry ``(t, j)`` is the mean of ``G`` along the diagonal of offset ``t - j``.

    Raises
    ------
    PosKernelsError
        If ``G`` is not a nonempty finite matrix.

    Examples
    --------
    >>> diagonal_means([[1.0, 2.0], [4.0, 3.0]]).tolist()
    [[2.0, 2.0], [4.0, 2.0]]
    """
    return _diagonal_means(_matrix("G", G))


def _diagonal_means(G: np.ndarray) -> np.ndarray:
    """:func:`diagonal_means` of a checked nonempty matrix ``G`` (n, m)."""
    n, m = G.shape
    r = np.subtract.outer(np.arange(n), np.arange(m)) + (m - 1)  # offset t - j, shifted to be >= 0
    sums = np.bincount(r.ravel(), weights=G.ravel(), minlength=n + m - 1)
    counts = np.bincount(r.ravel(), minlength=n + m - 1)
    return (sums / counts)[r]


def toeplitz_defect(G: ArrayLike) -> float:
    """``||G - T(G)||^2 / ||G||^2``, ``T(G)`` the diagonal means: 0 for a stationary kernel (Theorem 1), 1 at most.

    Parameters
    ----------
    G : array_like, shape (n, m)
        A nonzero matrix.

    Returns
    -------
    float
        The share of ``G``'s squared norm that no function of the offset explains (:func:`diagonal_means`).

    Raises
    ------
    PosKernelsError
        If ``G`` is not a nonempty finite matrix, or is zero.

    Examples
    --------
    >>> from poskernels.encodings import sinusoidal_code
    >>> P = sinusoidal_code(np.arange(64), 16)
    >>> toeplitz_defect(P @ P.T) < 1e-20
    True
    >>> round(toeplitz_defect([[1.0, 0.0], [0.0, -1.0]]), 12)
    1.0
    """
    G = _matrix("G", G)
    total = float((G**2).sum())
    if total == 0.0:
        raise PosKernelsError("G is zero: its Toeplitz defect is undefined")
    return float(((G - _diagonal_means(G)) ** 2).sum() / total)


def random_defects(n: int, width: int, norm: float, rng: np.random.Generator, draws: int = 64,
                   table: ArrayLike | None = None, rank: int | None = None) -> np.ndarray:  # fmt: skip
    """Toeplitz defects of random matrices, ``draws`` of them: ``G G^T`` for a Gaussian ``(n, width)`` table ``G``,
    or, given ``table``, ``P W P^T`` for ``W = A B^T`` (Gaussian ``(width, rank)`` factors) of Frobenius norm ``norm``
    (a random ``W_Q W_K^T`` beside a head's).

    Parameters
    ----------
    n : int
        Positions (rows of the Gaussian table; unused with ``table``).
    width : int
        Columns of the Gaussian table, or the side of ``W``.
    norm : float
        Frobenius norm of ``W`` (with ``table``).
    rng : numpy.random.Generator
        The only source of randomness.
    draws : int
        Matrices drawn.
    table : array_like, shape (n, width), optional
        A position table ``P``; without it the Gaussian tables are drawn.
    rank : int, optional
        Rank of ``W``'s factors; ``width`` by default.

    Returns
    -------
    ndarray, shape (draws,)
        The Toeplitz defect of each draw (:func:`toeplitz_defect`).

    Examples
    --------
    >>> d = random_defects(32, 8, 1.0, np.random.default_rng(0), draws=4)
    >>> d.shape, bool((d > 0.1).all())
    ((4,), True)
    """
    out = np.empty(draws)
    for i in range(draws):
        if table is None:
            G = rng.standard_normal((n, width))
            out[i] = toeplitz_defect(G @ G.T)
            continue
        W = rng.standard_normal((width, rank or width)) @ rng.standard_normal((width, rank or width)).T
        W *= norm / np.linalg.norm(W)
        out[i] = toeplitz_defect(np.asarray(table) @ W @ np.asarray(table).T)
    return out


def table_spectrum(P: ArrayLike) -> np.ndarray:
    """The share of a table's power at each frequency ``f / n`` of the position axis (columns centred), summing to 1.

    Parameters
    ----------
    P : array_like, shape (n, width)
        A table, one row per position, not constant along the position axis.

    Returns
    -------
    ndarray, shape (n // 2 + 1,)
        The share of the centred table's power at frequency ``f / n``, summed over columns.

    Raises
    ------
    PosKernelsError
        If ``P`` is not a nonempty finite matrix.

    Examples
    --------
    >>> s = table_spectrum(np.cos(2 * np.pi * 3 * np.arange(16) / 16)[:, None])
    >>> int(s.argmax()), round(float(s.sum()), 12)
    (3, 1.0)
    """
    P = _matrix("P", P)
    power = (np.abs(np.fft.rfft(P - P.mean(0), axis=0)) ** 2).sum(1)
    return power / power.sum()
