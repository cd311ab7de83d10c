"""The kernels over offsets of the relative biases models ship beyond the article, and what their papers state.

* **Kerple** (Chi et al. 2022): the bias ``b(r) = -r1 log(1 + r2 r)`` or ``b(r) = -r1 r^r2`` is a
  *conditionally positive definite* (CPD) kernel of the distance ``|m - n|``: for any positions ``m_1..m_N`` and
  any real ``c`` with ``sum_i c_i = 0``, ``sum_ij c_i c_j b(|m_i - m_j|) >= 0`` (the power form needs
  ``0 < r2 <= 2``).  The sign convention: it is the bias itself, the term added to the logit, that is CPD; its
  negation ``r1 log(1 + r2 r)`` (a distance-like penalty) is conditionally *negative* definite.  By Schoenberg's
  theorem ``e^{b}`` is then a positive definite kernel, so a Kerple head's softmax weights are a content kernel
  times a positive definite position kernel, as ALiBi's are (Theorem 3 (i)).
* **The tail past an offset** (the certified cut of Theorem 3 (ii), carried to Kerple): a causal head with
  content scores in an interval of width ``W`` and a bias with ``b(0) = 0`` that decreases in ``r`` puts weight
  at most ``e^W sum_{r >= D} e^{b(r)}`` on the offsets ``r >= D``, at every length, and since ``e^{b}`` decreases,
  ``sum_{r >= D} e^{b(r)} <= e^{b(D)} + int_D^inf e^{b(x)} dx``.  For the logarithmic bias the integral is
  ``(1 + r2 D)^{1 - r1} / (r2 (r1 - 1))``, finite only when ``r1 > 1``: a head that learned ``r1 <= 1`` has heavy
  tails and no cut valid at every length.  For the power bias it is ``Gamma(1/r2, r1 D^r2) / (r2 r1^{1/r2})``
  (upper incomplete gamma), finite for every ``r1, r2 > 0``.
* **FIRE** (Li et al. 2023): the bias ``f(psi(r) / psi(max(L, t)))`` with ``psi(x) = log(c x + 1)``; its input
  lies in ``[0, 1]`` at every causal offset once ``t >= L``, so a query at any length reads the MLP only where
  training taught it (:func:`fire_kernel`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..encodings.fire import fire_bias, fire_features
from ..encodings.kerple import kerple_log_bias, kerple_power_bias, kerple_tail_bound
from ..errors import PosKernelsError, check_array, check_budget, check_positive_real

__all__ = [
    "KERPLE_KERNELS",
    "conditional_min_eigenvalue",
    "fire_kernel",
    "kerple_log_kernel",
    "kerple_power_kernel",
    "kerple_tail_bound",
    "causal_offsets",
    "offset_gram",
]


def causal_offsets(r: ArrayLike) -> np.ndarray:
    """``r`` as a float array of causal offsets ``r = t - j >= 0``, or :class:`PosKernelsError` naming its minimum.

    Parameters
    ----------
    r : array_like
        Offsets of keys behind their query.

    Returns
    -------
    ndarray of float
        `r`, of its shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative or not finite.

    Examples
    --------
    >>> causal_offsets([0, 3]).tolist()
    [0.0, 3.0]
    """
    r = check_array("offsets r", r)
    if r.size and r.min() < 0:
        raise PosKernelsError(f"offsets r must be >= 0 (causal: r = t - j); got a minimum of {r.min().item()!r}")
    return r


def kerple_log_kernel(r: ArrayLike, r1: float, r2: float) -> np.ndarray:
    """Kerple's logarithmic bias ``-r1 log(1 + r2 r)`` at offsets ``r >= 0`` (Chi et al. 2022).

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0``.
    r1, r2 : float
        Its two positive parameters.

    Returns
    -------
    ndarray
        The bias, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative or `r1`, `r2` is not positive.

    Examples
    --------
    >>> kerple_log_kernel([0, 1, 10], 1.0, 0.5).round(4).tolist()
    [-0.0, -0.4055, -1.7918]
    """
    return kerple_log_bias(causal_offsets(r), check_positive_real("r1", r1), check_positive_real("r2", r2))


def kerple_power_kernel(r: ArrayLike, r1: float, r2: float) -> np.ndarray:
    """Kerple's power bias ``-r1 r^r2`` at offsets ``r >= 0`` (Chi et al. 2022; CPD for ``0 < r2 <= 2``).

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0``.
    r1, r2 : float
        The scale and the power, both positive.

    Returns
    -------
    ndarray
        The bias, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative or `r1`, `r2` is not positive.

    Examples
    --------
    >>> kerple_power_kernel([0, 1, 4], 0.5, 1.0).tolist()  # r2 = 1: ALiBi's bias at slope r1
    [-0.0, -0.5, -2.0]
    """
    return kerple_power_bias(causal_offsets(r), check_positive_real("r1", r1), check_positive_real("r2", r2))


#: Kerple's two kernels, by the registry's scheme names.
KERPLE_KERNELS = {"kerple_log": kerple_log_kernel, "kerple_power": kerple_power_kernel}


def offset_gram(kernel: Callable[[np.ndarray], np.ndarray], positions: ArrayLike) -> np.ndarray:
    """The matrix ``K_ij = kernel(|m_i - m_j|)`` of a kernel over offsets at positions ``m``, shape ``(N, N)``.

    Parameters
    ----------
    kernel : callable
        ``kernel(r)``: an array of offsets ``r >= 0`` to the kernel's values, of its shape.
    positions : array_like, shape (N,)
        The positions ``m``.

    Returns
    -------
    ndarray, shape (N, N)
        The Gram matrix.

    Raises
    ------
    PosKernelsError
        If `positions` is not a 1-d finite array, or ``N^2`` passes the work budget.

    Examples
    --------
    >>> offset_gram(lambda r: -r, [0, 2, 5]).tolist()
    [[-0.0, -2.0, -5.0], [-2.0, -0.0, -3.0], [-5.0, -3.0, -0.0]]
    """
    m = check_array("positions", positions, ndim=1)
    check_budget(f"a ({m.size}, {m.size}) Gram matrix", m.size * m.size)
    return np.asarray(kernel(np.abs(m[:, None] - m[None, :])), dtype=float)


def conditional_min_eigenvalue(K: ArrayLike) -> float:
    """The least value of ``c^T K c`` over unit ``c`` with ``sum(c) = 0``: ``>= 0`` exactly when ``K`` is CPD.

    ``K`` is symmetrized and restricted to the subspace ``sum(c) = 0`` through an orthonormal basis of it (the
    Householder reflection taking ``1 / sqrt(N)`` to the first axis); the result is the least eigenvalue there.

    Parameters
    ----------
    K : array_like, shape (N, N)
        A square matrix, ``N >= 2``.

    Returns
    -------
    float
        The least eigenvalue of ``K``'s symmetric part on ``sum(c) = 0``.

    Raises
    ------
    PosKernelsError
        If `K` is not a finite square matrix of size at least 2.

    Examples
    --------
    >>> K = offset_gram(lambda r: -r, [0.0, 1.3, 2.0, 7.5])  # -|m - n| is CPD
    >>> conditional_min_eigenvalue(K) >= 0
    True
    >>> conditional_min_eigenvalue(-K) < 0  # its negation is not
    True
    """
    K = check_array("K", K, ndim=2)
    N = K.shape[0]
    if N < 2 or K.shape[1] != N:
        raise PosKernelsError(f"K must be a square matrix of size >= 2; got shape {K.shape}")
    v = np.full(N, 1.0 / math.sqrt(N))
    v[0] -= 1.0  # Householder vector taking e_0 to the unit all-ones direction
    H = np.eye(N) - 2.0 * np.outer(v, v) / (v @ v)  # (N, N) orthogonal; column 0 is the all-ones direction
    B = H[:, 1:]  # (N, N-1) orthonormal basis of sum(c) = 0
    S = B.T @ (0.5 * (K + K.T)) @ B  # (N-1, N-1)
    return float(np.linalg.eigvalsh(S)[0])


def fire_kernel(r: ArrayLike, t: float, c: float, L: float, w1: ArrayLike, b1: ArrayLike, w2: ArrayLike) -> np.ndarray:
    """FIRE's bias ``f(psi(r) / psi(max(L, t)))`` for a query at position ``t`` and offsets ``0 <= r <= t``.

    ``psi(x) = log(c x + 1)``; ``f(u) = sum_h w2_h relu(w1_h u + b1_h)`` with weights of shape ``(H,)``
    (Li et al. 2023).

    Parameters
    ----------
    r : array_like
        Offsets ``0 <= r <= t``.
    t : float
        The query's position.
    c : float
        ``psi``'s positive scale.
    L : float
        The positive threshold below which the normalizer is ``psi(L)``.
    w1, b1, w2 : array_like, shape (H,)
        The MLP's weights.

    Returns
    -------
    ndarray
        The bias, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset lies outside ``[0, t]``, `c` or `L` is not positive, or the weights are not 1-d of one shape.

    Examples
    --------
    >>> w1, b1, w2 = np.array([1.0, -1.0]), np.array([0.0, 0.5]), np.array([2.0, 1.0])
    >>> fire_kernel([0, 99], 99, 0.1, 20.0, w1, b1, w2).tolist()  # the farthest key reads f(1), at any t >= L
    [0.5, 2.0]
    >>> fire_kernel([0, 99_999], 99_999, 0.1, 20.0, w1, b1, w2).tolist()
    [0.5, 2.0]
    """
    r = causal_offsets(r)
    t, c, L = float(check_array("t", t)), check_positive_real("c", c), check_positive_real("L", L)
    if r.size and r.max() > t:
        raise PosKernelsError(f"offsets of a query at t = {t!r} lie in [0, t]; got {r.max().item()!r}")
    w1, b1, w2 = (check_array(name, v, ndim=1) for name, v in (("w1", w1), ("b1", b1), ("w2", w2)))
    if not w1.shape == b1.shape == w2.shape:
        raise PosKernelsError(f"w1, b1, w2 must share one shape (H,); got {w1.shape}, {b1.shape}, {w2.shape}")
    return fire_bias(fire_features(r, t, c, L), w1, b1, w2)
