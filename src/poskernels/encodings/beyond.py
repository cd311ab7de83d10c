"""Relative biases models ship beyond the article: Kerple's two kernels and FIRE's interpolated MLP.

Each is a function of the causal offset ``r = t - j`` added to the logit of query ``t`` and key ``j`` (FIRE's
also reads the query's position ``t``).  An offset ``r < 0`` (a key after its query, which a causal head never
scores) is read as ``0``, like every relative bias of the registry.  These are the forward formulas the registry's
hooks evaluate every training step, so they take arrays as they come and check nothing; the checked forms, with
the properties the papers state, are in :mod:`poskernels.theory.beyond`.

* Kerple (Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"):
  the logarithmic bias ``-r1 log(1 + r2 r)`` and the power bias ``-r1 r^r2`` (``0 < r2 <= 2``), ``r1, r2 > 0``.
* FIRE (Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context
  Transformers"): ``f(psi(r) / psi(max(L, t)))`` with ``psi(x) = log(c x + 1)`` and ``f`` a small MLP.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: A parameter given as one number or as one per head (an array broadcast against the offsets).
Scalars = np.ndarray | float

__all__ = ["fire_bias", "fire_features", "kerple_log_bias", "kerple_power_bias"]


def kerple_log_bias(r: ArrayLike, r1: Scalars, r2: Scalars) -> np.ndarray:
    """Kerple's logarithmic bias ``-r1 log(1 + r2 max(r, 0))`` (broadcast over ``r``, ``r1``, ``r2``).

    >>> kerple_log_bias([0, 1, 3], 2.0, 1.0).round(4).tolist()
    [-0.0, -1.3863, -2.7726]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return -r1 * np.log1p(r2 * rho)


def kerple_power_bias(r: ArrayLike, r1: Scalars, r2: Scalars) -> np.ndarray:
    """Kerple's power bias ``-r1 max(r, 0)^r2`` (broadcast over ``r``, ``r1``, ``r2``).

    >>> kerple_power_bias([0, 1, 4], 0.5, 1.5).tolist()
    [-0.0, -0.5, -4.0]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return -r1 * rho**r2


def fire_features(r: ArrayLike, t: Scalars, c: Scalars, L: Scalars) -> np.ndarray:
    """FIRE's input to its MLP: ``u = psi(max(r, 0)) / psi(max(L, t))``, ``psi(x) = log(c x + 1)``.

    ``u`` lies in ``[0, 1]`` for every causal offset ``0 <= r <= t`` once ``t >= L`` (the progressive
    interpolation: the farthest key of a query maps to 1 whatever its length).

    >>> fire_features([0, 9, 99], 99, 0.1, 20.0).round(4).tolist()
    [0.0, 0.2687, 1.0]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return np.log1p(c * rho) / np.log1p(c * np.maximum(L, t))


def fire_bias(u: ArrayLike, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """FIRE's MLP ``f(u) = sum_h w2_h relu(w1_h u + b1_h)`` at inputs ``u``, shape ``u.shape``.

    The weights are ``(..., H)``, with the leading axes of ``u``'s leading axes (one MLP per head); the output
    layer has no constant: a constant added to every logit of a query leaves its softmax unchanged.

    >>> fire_bias(np.array([0.0, 0.5, 1.0]), np.array([1.0, -1.0]), np.array([0.0, 0.5]), np.array([2.0, 1.0]))
    array([0.5, 1. , 2. ])
    """
    u = np.asarray(u, dtype=float)
    h = np.maximum(u[..., None] * w1[..., None, :] + b1[..., None, :], 0.0)  # (..., n, H)
    return (h * w2[..., None, :]).sum(-1)  # (..., n)
