"""The codes of the article: the sinusoidal code and the clock code at any frequencies (Definition 2).

Conventions (the article's Definition 2): base ``b = 10**4`` unless stated, frequencies
``omega_j = b**(-2j/d)`` for planes ``j = 0..d/2-1``, planes are consecutive coordinate
pairs ``(2j, 2j+1)``, cosine first.  The rotations that turn these codes, and RoPE, are in
:mod:`poskernels.encodings.rotations`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_array,
    check_base,
    check_budget,
    check_even_dimension,
)

__all__ = ["DEFAULT_BASE", "clock_code", "omega", "plane_angles", "sinusoidal_code"]

DEFAULT_BASE = 10_000.0


def omega(d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """Plane frequencies ``omega_j = b**(-2j/d)`` (Definition 2; RoPE's ``theta_j`` in Definition 4).

    Parameters
    ----------
    d : int
        Even width of the code.
    b : float
        Base, > 1.

    Returns
    -------
    ndarray, shape (d/2,)
        Frequencies falling geometrically from 1 to ``b**(-(d-2)/d)``.

    Examples
    --------
    >>> omega(8, 10_000).round(4).tolist()
    [1.0, 0.1, 0.01, 0.001]
    """
    d = check_even_dimension(d)
    b = check_base(b)
    check_budget(f"omega(d) at d = {d}", d // 2)
    return plane_frequencies(d, b)  # (d/2,)


def plane_frequencies(d: int, b: float) -> np.ndarray:
    """:func:`omega`'s ``b**(-2j/d)`` without its checks, shape ``(d/2,)``.

    Internal (not in ``__all__``): it trusts ``d`` (a positive even integer within the budget) and ``b`` (a base
    above 1), which its callers have checked once, as :func:`poskernels.theory.base_bound.base_bounds` does before
    it tries hundreds of bases of one width.

    Parameters
    ----------
    d : int
        The even width (unchecked).
    b : float
        The base (unchecked).

    Returns
    -------
    ndarray, shape (d/2,)
        The frequencies, bit for bit :func:`omega`'s.

    Examples
    --------
    >>> plane_frequencies(8, 10_000.0).tolist() == omega(8, 10_000).tolist()
    True
    """
    j = np.arange(d // 2)  # (d/2,)
    return b ** (-2.0 * j / d)  # (d/2,)


def sinusoidal_code(m: ArrayLike, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """The sinusoidal code ``p(m)`` of Definition 2, cosine first in each plane.

    Parameters
    ----------
    m : array_like of shape (...,)
        Positions (integers or reals).
    d, b : see :func:`omega`.

    Returns
    -------
    ndarray, shape (..., d)
        ``(cos m w_0, sin m w_0, cos m w_1, sin m w_1, ...)``.

    Notes
    -----
    Proposition 2 (iii): every row has squared norm ``d/2``.

    Examples
    --------
    >>> p = sinusoidal_code([0, 1], 4)
    >>> p.round(3)
    array([[1.   , 0.   , 1.   , 0.   ],
           [0.54 , 0.841, 1.   , 0.01 ]])
    """
    m = check_array("positions m", m)  # NaN or infinite positions would give NaN codes, silently
    d = check_even_dimension(d)
    check_budget(f"sinusoidal_code at {m.size} positions and d = {d}", m.size * d)
    b = check_base(b)  # then omega's budget: d/2 frequencies even at no position
    check_budget(f"omega(d) at d = {d}", d // 2)
    return sinusoidal_code_core(m, d, b)  # (..., d)


def sinusoidal_code_core(m: np.ndarray, d: int, b: float) -> np.ndarray:
    """:func:`sinusoidal_code` of arguments its caller checked (finite positions, an even `d`, a base above 1, the
    budget of ``m.size * d``): it trusts them.  A core shared with theory (``theory.kernel.code_matrix``); not in
    ``__all__``.

    Parameters
    ----------
    m : ndarray, shape (...,)
        Positions, finite.
    d : int
        The even width.
    b : float
        The base.

    Returns
    -------
    ndarray, shape (..., d)
        The codes, as :func:`sinusoidal_code` returns them.

    Examples
    --------
    >>> bool(np.array_equal(sinusoidal_code_core(np.arange(3.0), 8, 1e4), sinusoidal_code([0, 1, 2], 8)))
    True
    """
    return _code(m[..., None] * plane_frequencies(d, b))  # (..., d)


def code_kernel(delta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``kappa(Delta) = sum_j cos(Delta w_j)``: the score of two codes of frequencies ``w`` ``(P,)`` at offsets
    ``delta`` ``(...,)`` (Theorem 1 (i), :func:`poskernels.theory.kernel.kappa_d` with its checks), shape ``(...,)``.

    The one definition the kernels of the codes share, internal (not in ``__all__``): it trusts the arrays it is
    given, which its callers have checked or built.

    Parameters
    ----------
    delta : ndarray, shape (...,)
        The offsets ``Delta`` (real; unchecked).
    w : ndarray, shape (P,)
        The frequencies ``w_j`` (unchecked).

    Returns
    -------
    ndarray, shape (...,)
        ``sum_j cos(Delta w_j)`` at each offset: ``P`` at ``Delta = 0``.

    Examples
    --------
    >>> float(code_kernel(np.float64(0.0), omega(16)))  # every plane in phase at offset 0
    8.0
    >>> bool(np.isclose(code_kernel(np.float64(5.0), omega(16)), sinusoidal_code(2, 16) @ sinusoidal_code(7, 16)))
    True
    """
    return np.cos(delta[..., None] * w).sum(-1)  # (...,)


def clock_code(m: ArrayLike, w: ArrayLike) -> np.ndarray:
    """The code ``(cos m w_0, sin m w_0, ...)`` at arbitrary frequencies ``w`` (Definition 2 with any clocks).

    :func:`sinusoidal_code` is this code at ``w = omega(d, b)``.

    Parameters
    ----------
    m : array_like, shape (...,)
    w : array_like, shape (d/2,)

    Returns
    -------
    ndarray, shape (..., d)

    Examples
    --------
    >>> clock_code(1, [np.pi / 2]).round(12).tolist()
    [0.0, 1.0]
    """
    w = check_array("w", w, ndim=1)
    m = check_array("positions m", m)
    check_budget(f"the clock code at {m.size} positions and {w.size} planes", m.size * 2 * w.size)
    return _code(_plane_angles("the clock code", m, w))  # (..., d)


def plane_angles(what: str, m: ArrayLike, w: ArrayLike) -> np.ndarray:
    """The angles ``m w_p`` of every plane, ``m[..., None] * w`` of shape ``(..., P)``, refused when one overflows.

    An infinite angle has no cosine: :class:`PosKernelsError` (``what`` names the caller), never a NaN downstream.

    Parameters
    ----------
    what : str
        What the angles are for, named in the error.
    m : array_like
        Positions, any shape.
    w : array_like, shape (P,)
        One frequency per plane.

    Returns
    -------
    ndarray, shape m.shape + (P,)

    Examples
    --------
    >>> plane_angles("a code", [0.0, 2.0], [1.0, 0.5]).tolist()
    [[0.0, 0.0], [2.0, 1.0]]
    """
    if not isinstance(what, str):
        raise PosKernelsError(f"what must name the caller (a str); got {what!r}")
    m, w = check_array("positions m", m), check_array("frequencies w", w, ndim=1)
    check_budget(f"the angles at {m.size} positions and {w.size} planes", m.size * w.size)
    return _plane_angles(what, m, w)


def _plane_angles(what: str, m: ArrayLike, w: np.ndarray) -> np.ndarray:
    """:func:`plane_angles` of arrays already checked (the codes and the rotation call it once per use)."""
    with np.errstate(over="ignore"):
        angles = np.asarray(m)[..., None] * w  # (..., P)
    if not np.all(np.isfinite(angles)):
        raise PosKernelsError(
            f"{what}'s angles m w overflow float64 (largest |m| {float(np.abs(m).max())!r}, largest |w| "
            f"{float(np.abs(w).max())!r}); positions times frequencies must stay below {np.finfo(float).max:.3g}"
        )
    return angles


def _code(angles: np.ndarray) -> np.ndarray:
    """``(cos a_0, sin a_0, cos a_1, sin a_1, ...)`` for angles ``(..., P)``: the code, shape ``(..., 2P)``.

    It is the code at 0, ``(1, 0, 1, 0, ...)``, turned by the angles (Proposition 2 (i): ``p(m) = R(m w) p(0)``),
    written out: turning ``(1, 0)`` by ``a`` is ``(cos a, sin a)``.
    """
    out = np.empty(angles.shape[:-1] + (2 * angles.shape[-1],))  # (..., 2P)
    out[..., 0::2] = np.cos(angles)
    out[..., 1::2] = np.sin(angles)
    return out
