"""The rotation of the article: plane rotations, ``R_omega(k)`` and its generator, RoPE (Definition 4, Proposition 2).

:func:`rotate` is the one rotation of the library (plane ``p`` turned by ``angles[..., p]``, consecutive coordinate
pairs ``(2j, 2j+1)``, cosine first, as in :mod:`poskernels.encodings.codes`); :func:`apply_rope` turns queries or
keys by their positions through it.  Hugging Face transformers pairs coordinate ``i`` with ``i + d/2`` instead
("rotate_half"); :func:`to_half_split` and :func:`from_half_split` convert between the two.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_array,
    check_budget,
    check_even_dimension,
    check_frequencies,
    check_int,
    check_real,
)
from .codes import _plane_angles

__all__ = ["R_omega", "apply_rope", "from_half_split", "generator", "rotate", "rotation", "to_half_split"]


def rotate(x: ArrayLike, angles: ArrayLike) -> np.ndarray:
    """Turn plane ``p`` of ``x`` by ``angles[..., p]``: the one rotation of the library (Definitions 2 and 4).

    In complex form plane ``p`` is ``x_{2p} + i x_{2p+1}`` and is multiplied by ``e^{i angle_p}``; the planes past
    the ``P`` angles are left as they are (partial rotary embeddings).  A complex angle ``a - i g`` turns by ``a``
    and scales by ``e^{g}`` (a rotation with decay, xPos's form).  Every code, rotation and RoPE reading of
    the library turns vectors through this function.

    Parameters
    ----------
    x : ndarray, shape (..., d)
        Vectors, planes as consecutive pairs, cosine first.
    angles : ndarray, shape (..., P)
        ``P <= d/2`` angles, broadcasting with ``x``'s leading axes.

    Returns
    -------
    ndarray, shape (broadcast of the leading axes, d)

    Examples
    --------
    >>> rotate(np.array([1.0, 0.0, 2.0, 0.0]), np.array([np.pi / 2, np.pi])).round(12).tolist()
    [0.0, 1.0, -2.0, 0.0]
    """
    return _rotate(*_rotation_inputs(x, angles))


def _rotate(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """:func:`rotate` on arguments already checked (the codes and :func:`apply_rope` check their own)."""
    return _turn(x, *_turn_factors(angles))


def _turn_factors(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of each angle ``(..., P)`` as :func:`rotate` turns by them (a reader that turns many heads by
    the same angles computes them once and calls :func:`_turn`)."""
    if np.iscomplexobj(angles):  # a turn that also scales: plane p times e^{i angle_p}, of length e^{-Im angle_p}
        f = np.exp(1j * angles)  # (..., P)
        return f.real, f.imag
    return np.cos(angles), np.sin(angles)  # (..., P) each


def _turn(x: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Plane ``p`` of ``x (..., d)`` turned by the angle whose cosine and sine are ``c[..., p]``, ``s[..., p]``."""
    P = c.shape[-1]
    x0, x1 = x[..., 0 : 2 * P : 2], x[..., 1 : 2 * P : 2]  # (..., P) each: plane p is (x[2p], x[2p+1])
    out = np.empty(np.broadcast_shapes(x.shape[:-1], c.shape[:-1]) + x.shape[-1:], dtype=np.result_type(x, c))
    out[..., 2 * P :] = x[..., 2 * P :]  # the planes past P, unturned
    out[..., 0 : 2 * P : 2] = c * x0 - s * x1
    out[..., 1 : 2 * P : 2] = s * x0 + c * x1
    return out


def rotation(phi: ArrayLike) -> np.ndarray:
    """The plane rotation ``R(phi) = [[cos, -sin], [sin, cos]]``, broadcast over ``phi``.

    Parameters
    ----------
    phi : array_like
        Angles in radians, any shape.

    Returns
    -------
    ndarray, shape phi.shape + (2, 2)
        One rotation matrix per angle.

    Examples
    --------
    >>> rotation(np.pi / 2).round(12)
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    phi = check_array("phi", phi)
    c, s = np.cos(phi), np.sin(phi)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (..., 2, 2)


def R_omega(k: float, w: np.ndarray) -> np.ndarray:
    """Block rotation ``R_omega(k) = (+)_j R(k w_j)`` turning plane ``j`` by ``k w_j``.

    Parameters
    ----------
    k : float
        Shift (any real; Proposition 2 uses integers).
    w : ndarray, shape (d/2,)
        Plane frequencies.

    Returns
    -------
    ndarray, shape (d, d)

    Examples
    --------
    >>> from poskernels.encodings import omega, sinusoidal_code
    >>> w = omega(4)
    >>> np.allclose(R_omega(3, w) @ sinusoidal_code(2, 4), sinusoidal_code(5, 4))
    True
    """
    w = check_array("w", w, ndim=1)
    k = check_real("the shift k", k)
    d = 2 * w.size
    check_budget(f"R_omega at d = {d}", d * d)
    blocks = rotation(_plane_angles("R_omega", k, w))  # (d/2, 2, 2)
    out = np.zeros((d, d))
    for j, block in enumerate(blocks):
        out[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = block
    return out


def generator(w: np.ndarray) -> np.ndarray:
    """Block-skew generator ``A = (+)_j w_j J`` with ``R_omega(k) = expm(k A)`` (Proposition 2: a shift is a rotation).

    Parameters
    ----------
    w : array_like, shape (d/2,)
        The plane frequencies ``omega_j``.

    Returns
    -------
    ndarray, shape (d, d)
        ``A``: plane ``j``'s block is ``w_j J``, ``J = R(pi/2)``.

    Raises
    ------
    PosKernelsError
        If `w` is not a 1-d finite array, or ``d^2`` passes the work budget.

    Examples
    --------
    >>> generator([1.0, 0.5]).tolist()
    [[0.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -0.5], [0.0, 0.0, 0.5, 0.0]]
    >>> from scipy.linalg import expm
    >>> from poskernels.encodings import omega
    >>> w = omega(6)
    >>> np.allclose(expm(2.5 * generator(w)), R_omega(2.5, w))
    True
    """
    w = check_array("w", w, ndim=1)
    J = np.array([[0.0, -1.0], [1.0, 0.0]])
    d = 2 * w.size
    check_budget(f"generator at d = {d}", d * d)
    out = np.zeros((d, d))
    for j, wj in enumerate(w):
        out[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = wj * J
    return out


def _rotation_inputs(x, angles) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rotate`'s arguments checked: ``x (..., d)`` with ``d`` even, ``angles (..., P)``, ``P <= d/2``."""
    angles = np.asarray(angles) if np.iscomplexobj(angles) else angles  # a rotation with decay: complex angles
    if np.iscomplexobj(angles):
        check_array("the real part of angles", angles.real), check_array("the imaginary part of angles", angles.imag)
    else:
        angles = check_array("angles", angles)
    x = check_array("x", x)
    if x.ndim < 1 or angles.ndim < 1:
        raise PosKernelsError(f"x and angles must have shapes (..., d) and (..., P); got {x.shape} and {angles.shape}")
    d = check_even_dimension(x.shape[-1], "the last axis of x")
    if angles.shape[-1] > d // 2:
        raise PosKernelsError(f"angles must hold at most d/2 = {d // 2} planes; got {angles.shape[-1]}")
    try:
        lead = np.broadcast_shapes(x.shape[:-1], angles.shape[:-1])
    except ValueError:
        raise PosKernelsError(
            f"the leading axes of x and angles must broadcast; got shapes {x.shape} and {angles.shape}"
        ) from None
    check_budget(f"rotate to shape {lead + (d,)}", math.prod(lead) * d)
    return x, angles


def apply_rope(x: ArrayLike, positions: ArrayLike, theta: np.ndarray, rotated_planes: int | None = None) -> np.ndarray:
    """Rotate queries or keys by their positions (Definition 4): ``x_m -> R_theta(m) x_m``.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Vectors, one per position, planes as consecutive pairs.
    positions : array_like, shape (n,)
        Positions; integers or reals (position interpolation reads fractional ones).
    theta : ndarray, shape (P,)
        Frequencies of the first ``P`` planes (for instance :func:`omega` or a map of
        :mod:`poskernels.extension`).
    rotated_planes : int, optional
        Rotate only the first ``rotated_planes`` planes and leave the rest as they are
        (partial rotary embeddings; the block ``I_p`` of Theorem 4).  Defaults to ``theta.size``.

    Returns
    -------
    ndarray, shape (..., n, d)

    Examples
    --------
    Relativity (Proposition 3 (i)): the score depends only on the offset.

    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=(2, 1, 8))
    >>> from poskernels.encodings import omega
    >>> th = omega(8)
    >>> s1 = apply_rope(q, [3], th) @ apply_rope(k, [10], th).T
    >>> s2 = apply_rope(q, [0], th) @ apply_rope(k, [7], th).T
    >>> np.allclose(s1, s2)
    True

    A torch tensor is rotated by :func:`poskernels.torch_rope.apply_rope` (same dtype, device, autograd).
    """
    if type(x).__module__.startswith("torch"):  # torch.Tensor or Parameter: stay in torch, keep the graph
        from ..torch_rope import apply_rope as apply_rope_torch

        return apply_rope_torch(x, positions, theta, rotated_planes)  # type: ignore[arg-type, return-value]  # a Tensor
    x, pos, theta, planes = _rope_inputs(x, positions, theta, rotated_planes)
    return apply_rope_core(x, pos, theta[:planes])  # (..., n, d)


def apply_rope_core(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """:func:`apply_rope` on arrays its caller checked as :func:`apply_rope` does: it trusts them, and turns the first
    ``theta.size`` planes.  A core shared with theory (``theory.decay.matched_scores`` turns one batch per offset);
    not in ``__all__``.  It still refuses angles ``m theta_p`` that overflow float64 (a check of what it computes).

    Parameters
    ----------
    x : ndarray, shape (..., n, d)
        Finite vectors, ``d >= 2 theta.size`` even.
    positions : ndarray, shape (n,)
        Finite positions.
    theta : ndarray, shape (P,)
        Finite positive frequencies of the planes turned.

    Returns
    -------
    ndarray, shape (..., n, d)
        The rotated vectors.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> apply_rope_core(np.ones((1, 4)), np.array([1.0]), omega(4)).round(3)
    array([[-0.301,  1.382,  0.99 ,  1.01 ]])
    """
    angles = _plane_angles("apply_rope", positions, theta)  # (n, P): position m turns plane p by m theta_p
    return _rotate(x, angles)  # (..., n, d)


def _rope_inputs(x, positions, theta, rotated_planes) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`apply_rope`'s arguments checked: ``x (..., n, d)``, positions ``(n,)``, frequencies, planes turned."""
    x = check_array("x", x)
    theta = check_frequencies("theta", theta)
    if x.ndim < 2:
        raise PosKernelsError(f"x must have shape (..., n, d); got shape {x.shape}")
    d = check_even_dimension(x.shape[-1], "the last axis of x")
    top = min(theta.size, d // 2)
    planes = top if rotated_planes is None and theta.size <= d // 2 else rotated_planes
    planes = check_int("rotated_planes", planes, 0, top, f"for d = {d} and {theta.size} frequencies")
    pos = check_array("positions", positions)
    if pos.shape != (x.shape[-2],):
        raise PosKernelsError(f"positions must have shape ({x.shape[-2]},) to match x; got {pos.shape}")
    return x, pos, theta, planes


def to_half_split(x: ArrayLike) -> np.ndarray:
    """Reorder the last axis from consecutive pairs ``(2j, 2j+1)`` to halves ``(j, j + d/2)``.

    Hugging Face's ``rotate_half`` RoPE pairs coordinate ``j`` with ``j + d/2``.  A vector in
    this library's layout, reordered with this function, gets the same score there.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Vectors in this library's layout (``d`` even).

    Returns
    -------
    ndarray, shape (..., d)
        The same vectors in the half-split layout.

    Raises
    ------
    PosKernelsError
        If `x` is a scalar or its last axis is not of even length.

    Examples
    --------
    >>> to_half_split(np.arange(6))
    array([0, 2, 4, 1, 3, 5])
    """
    x = np.asarray(x)
    if x.ndim == 0:
        raise PosKernelsError(f"x must have shape (..., d); got a scalar {x!r}")
    d = check_even_dimension(x.shape[-1], "the last axis")
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    return x[..., order]


def from_half_split(x: ArrayLike) -> np.ndarray:
    """Inverse of :func:`to_half_split`: from halves ``(j, j + d/2)`` back to consecutive pairs ``(2j, 2j+1)``.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Vectors in the half-split layout (``d`` even).

    Returns
    -------
    ndarray, shape (..., d)
        The same vectors in this library's layout.

    Raises
    ------
    PosKernelsError
        If `x` is a scalar or its last axis is not of even length.

    Examples
    --------
    >>> from_half_split(to_half_split(np.arange(6)))
    array([0, 1, 2, 3, 4, 5])
    """
    x = np.asarray(x)
    if x.ndim == 0:
        raise PosKernelsError(f"x must have shape (..., d); got a scalar {x!r}")
    d = check_even_dimension(x.shape[-1], "the last axis")
    order = np.empty(d, dtype=int)
    order[0::2] = np.arange(d // 2)
    order[1::2] = np.arange(d // 2, d)
    return x[..., order]
