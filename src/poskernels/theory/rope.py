"""Rotations: Proposition 3 (RoPE is relative and isometric) and Theorem 4 (RoPE is the general linear
relative encoding).  Proposition 4 (long-term decay) lives in :mod:`poskernels.theory.decay`.

Planes are consecutive coordinate pairs ``(2j, 2j+1)``; in complex form plane ``j`` of ``x`` is
``x_j = x_{2j} + i x_{2j+1}`` and ``R_theta(Delta)`` multiplies it by ``e^{i Delta theta_j}``.
With ``h_j = conj(q_j) k_j`` the offset score is ``s(Delta) = Re sum_j h_j e^{i Delta theta_j}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import R_omega
from ..encodings.rotations import apply_rope_core
from ..errors import (
    PosKernelsError,
    check_array,
    check_even_dimension,
    check_finite_result,
    check_frequencies,
    check_real,
)

__all__ = [
    "RelativeNormalForm",
    "TrigPolynomial",
    "orthogonal_from_relative_family",
    "plane_products",
    "relative_encoding_normal_form",
    "rope_offset_score",
    "rope_score",
]


def _check_pair(q, k, theta) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, theta = (check_array("x", x) for x in (q, k, theta))
    if q.ndim != 1 or q.shape != k.shape:
        raise PosKernelsError(f"q and k must be 1-d vectors of one shape (d,); got {q.shape} and {k.shape}")
    d = check_even_dimension(q.size, "the width of q and k")
    if theta.shape != (d // 2,):
        raise PosKernelsError(f"theta must have shape ({d // 2},), one frequency per plane; got {theta.shape}")
    return q, k, theta


def _position(m) -> np.ndarray:
    """One position as :func:`~poskernels.encodings.apply_rope` checks it for one vector: shape ``(1,)``, finite."""
    pos = check_array("positions", [m])
    if pos.shape != (1,):
        raise PosKernelsError(f"positions must have shape (1,) to match x; got {pos.shape}")
    return pos


def _as_complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0::2] + 1j * x[..., 1::2]  # (..., d/2)


# --------------------------------------------------------------------------------------------------
# Proposition 3
# --------------------------------------------------------------------------------------------------


def rope_score(q: ArrayLike, k: ArrayLike, m: float, n: float, theta: ArrayLike) -> float:
    """Proposition 3 (i): the RoPE score ``<R_theta(m) q, R_theta(n) k>`` (before the temperature).

    Parameters
    ----------
    q, k : array_like, shape (d,)
        Query and key.
    m, n : float
        Positions of the query and the key.
    theta : array_like, shape (d/2,)
        Plane frequencies.

    Returns
    -------
    float
        The score; it depends on ``n - m`` only.

    Raises
    ------
    PosKernelsError
        If `q` and `k` are not of one shape ``(d,)`` with ``d = 2 len(theta)``, or a value is not finite.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> q, k = np.random.default_rng(0).normal(size=(2, 8))
    >>> bool(np.isclose(rope_score(q, k, 3, 10, omega(8)), rope_score(q, k, 0, 7, omega(8))))
    True
    """
    q, k, theta = _check_pair(q, k, theta)
    theta = check_frequencies("theta", theta)  # apply_rope's checks, once for both turns
    qm = apply_rope_core(q[None], _position(m), theta)[0]  # (d,)
    kn = apply_rope_core(k[None], _position(n), theta)[0]  # (d,)
    return float(qm @ kn)


def plane_products(q: ArrayLike, k: ArrayLike) -> np.ndarray:
    """``h_j = conj(q_j) k_j``, plane by plane (Proposition 4's coefficients).

    Plane ``j`` of a real vector is read as the complex number ``x_{2j} + i x_{2j+1}``.

    Parameters
    ----------
    q, k : array_like, shape (d,)
        Query and key, ``d`` even.

    Returns
    -------
    ndarray of complex, shape (d/2,)
        The coefficients ``h_j`` of the score ``Re sum_j h_j e^{i Delta theta_j}``.

    Raises
    ------
    PosKernelsError
        If `q` and `k` are not 1-d of one even length, or a value is not finite.

    Examples
    --------
    >>> plane_products([1.0, 0.0], [0.0, 2.0]).tolist()
    [2j]
    """
    q, k = check_array("q", q), check_array("k", k)
    if q.shape != k.shape or q.ndim < 1:
        raise PosKernelsError(f"q and k must have one shape (..., d); got {q.shape} and {k.shape}")
    check_even_dimension(q.shape[-1], "the width of q and k")
    return _plane_products(q, k)


def _plane_products(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """:func:`plane_products` of checked ``q``, ``k`` of one shape (..., d), d even."""
    with np.errstate(over="ignore", invalid="ignore"):  # products past float64's largest: refused below
        h = np.conj(_as_complex(q)) * _as_complex(k)  # (..., d/2)
    return check_finite_result("the plane products", h, "|q_j| |k_j| must stay below 1.8e308", q=q, k=k)


@dataclass(frozen=True)
class TrigPolynomial:
    """``s(Delta) = sum_j rho_j cos(Delta theta_j + phi_j)`` (Proposition 3 (iii)).

    Attributes
    ----------
    rho : ndarray, shape (P,)
        Amplitudes ``|q_j| |k_j|``.
    phi : ndarray, shape (P,)
        Phases in ``(-pi, pi]``: the angle from ``q_j`` to ``k_j``.
    theta : ndarray, shape (P,)
        Frequencies.
    """

    rho: np.ndarray
    phi: np.ndarray
    theta: np.ndarray

    def __call__(self, Delta) -> np.ndarray:
        """Evaluate at offsets ``Delta`` (any shape; reals allowed)."""
        Delta = check_array("Delta", Delta)
        return (self.rho * np.cos(Delta[..., None] * self.theta + self.phi)).sum(-1)  # Delta.shape


def rope_offset_score(q: ArrayLike, k: ArrayLike, theta: ArrayLike) -> TrigPolynomial:
    """Proposition 3 (iii): the offset score ``<q, R_theta(Delta) k>`` as a trigonometric polynomial.

    Parameters
    ----------
    q, k : array_like, shape (d,)
        A query and a key, planes as consecutive coordinate pairs.
    theta : array_like, shape (d/2,)
        RoPE's frequencies.

    Returns
    -------
    TrigPolynomial
        ``sum_j rho_j cos(theta_j Delta + phi_j)``, callable at any offsets ``Delta``.

    Examples
    --------
    >>> s = rope_offset_score([1.0, 0.0, 0.0, 2.0], [0.0, 1.0, 3.0, 0.0], [1.0, 0.1])
    >>> s.rho.tolist(), (s.phi / np.pi).tolist()
    ([1.0, 6.0], [0.5, -0.5])
    >>> round(float(s(2.0)), 6) == round(rope_score([1.0, 0.0, 0.0, 2.0], [0.0, 1.0, 3.0, 0.0], 0, 2, [1.0, 0.1]), 6)
    True
    """
    q, k, theta = _check_pair(q, k, theta)
    h = _plane_products(q, k)  # (d/2,)  |q_j||k_j| e^{i(beta_j - alpha_j)}
    return TrigPolynomial(np.abs(h), np.angle(h), theta)


# --------------------------------------------------------------------------------------------------
# Theorem 4
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RelativeNormalForm:
    """Theorem 4 (c): ``L_m = Q (R(m theta_1) (+) ... (+) R(m theta_l) (+) I_p (+) (-1)^m I_p') Q^T``.

    Attributes
    ----------
    Q : ndarray, shape (d, d)
        Orthogonal; columns ordered as the blocks.
    angles : ndarray, shape (l,)
        Rotation angles in ``(0, pi)``.
    p, p_neg : int
        Sizes of the fixed block ``I_p`` and of the sign-flipping block ``(-1)^m I_p'``.
    """

    Q: np.ndarray
    angles: np.ndarray
    p: int
    p_neg: int

    def core(self, m: int) -> np.ndarray:
        """The block-diagonal middle factor at step ``m``, shape (d, d)."""
        two_l = 2 * self.angles.size
        d = two_l + self.p + self.p_neg
        out = np.zeros((d, d))
        out[:two_l, :two_l] = R_omega(m, self.angles)  # (2l, 2l)
        out[two_l : two_l + self.p, two_l : two_l + self.p] = np.eye(self.p)
        out[two_l + self.p :, two_l + self.p :] = (-1.0) ** m * np.eye(self.p_neg)
        return out

    def L(self, m: int) -> np.ndarray:
        """``L_m``, shape (d, d); equals ``U^m``."""
        return self.Q @ self.core(m) @ self.Q.T


def _check_orthogonal(U, atol: float) -> np.ndarray:
    U = check_array("U", U)
    if U.ndim != 2 or U.shape[0] != U.shape[1] or U.size == 0 or not np.all(np.isfinite(U)):
        raise PosKernelsError(f"U must be a finite square matrix; got shape {U.shape}")
    with np.errstate(over="ignore", invalid="ignore"):  # entries past 1e154: U^T U overflows, inf or NaN, refused
        defect = float(np.abs(U.T @ U - np.eye(U.shape[0])).max())
    if not defect <= atol:  # NaN fails too
        raise PosKernelsError(f"U must be orthogonal; got max |U^T U - I| = {defect:.3g} > atol = {atol:g}")
    return U


def relative_encoding_normal_form(U: ArrayLike, atol: float = 1e-8) -> RelativeNormalForm:
    """Theorem 4 (b) => (c): the real normal form of an orthogonal ``U``, through scipy's real Schur form.

    Parameters
    ----------
    U : array_like, shape (d, d)
        Orthogonal matrix (any ``d``, odd included).
    atol : float
        Tolerance on orthogonality and on the reconstruction ``Q core(1) Q^T = U``.

    Returns
    -------
    RelativeNormalForm
        With ``L(m) = U^m`` for every integer ``m``.

    Notes
    -----
    ``U`` is normal, so its real Schur form ``T = Z^T U Z`` is block diagonal: 2x2 blocks
    ``[[cos t, -+sin t], [+-sin t, cos t]]`` and 1x1 blocks ``+-1``.  A block with the sign of
    ``R(-t)`` becomes ``R(t)`` by flipping its second Schur vector; the columns are then ordered
    rotations, ``+1``, ``-1``.

    Examples
    --------
    >>> U = np.diag([1.0, -1.0, 1.0])
    >>> nf = relative_encoding_normal_form(U)
    >>> nf.angles.size, nf.p, nf.p_neg
    (0, 2, 1)
    >>> nf = relative_encoding_normal_form(R_omega(1, [2.0]))
    >>> nf.angles.round(6).tolist(), bool(np.allclose(nf.L(-3), R_omega(-3, [2.0])))
    ([2.0], True)
    """
    import scipy.linalg  # here: scipy.linalg costs ~0.1 s at the start of every command

    atol = check_real("atol", atol, 0)
    U = _check_orthogonal(U, atol)
    T, Z = scipy.linalg.schur(U, output="real")  # T: (d, d) quasi-triangular, Z: (d, d) orthogonal
    Z = Z.copy()
    d = U.shape[0]
    rot_cols: list[int] = []
    angles: list[float] = []
    plus: list[int] = []
    minus: list[int] = []
    i = 0
    while i < d:
        if i + 1 < d and T[i + 1, i] != 0.0:  # 2x2 block: a complex pair e^{+-i t}
            (a, b), (c, e) = T[i : i + 2, i : i + 2]
            if c < 0:  # block is R(-t): flipping the second vector turns it into R(t)
                Z[:, i + 1] *= -1.0
            angles.append(math.atan2(abs(c - b) / 2.0, (a + e) / 2.0))
            rot_cols += [i, i + 1]
            i += 2
        else:  # 1x1 block: eigenvalue +1 or -1
            (plus if T[i, i] > 0 else minus).append(i)
            i += 1
    nf = RelativeNormalForm(Z[:, rot_cols + plus + minus], np.array(angles), len(plus), len(minus))
    err = float(np.abs(nf.L(1) - U).max())
    if err > atol:
        raise PosKernelsError(f"the normal form reconstructs U only to {err:.3g} > atol = {atol:g}")
    return nf


def orthogonal_from_relative_family(L: ArrayLike, atol: float = 1e-8) -> np.ndarray:
    """Theorem 4 (a) => (b): from a relative family ``L_0 = I, L_1, ..., L_M`` return the orthogonal ``U = L_1``.

    Checks (a) on the family as given, ``L_m^T L_n = L_{n-m}`` for ``0 <= m <= n <= M`` (the proof's
    ``G(n - m)``, with ``G(k) = L_k`` read off at ``m = 0``), then ``U^T U = I`` (its ``m = n`` case)
    and ``L_m = U^m``.

    Parameters
    ----------
    L : array_like, shape (M + 1, d, d)
        ``L[m] = L_m``, with ``M >= 1``.

    Returns
    -------
    ndarray, shape (d, d)

    Examples
    --------
    >>> U = R_omega(1, [0.3, 1.1])
    >>> fam = np.stack([np.linalg.matrix_power(U, m) for m in range(4)])
    >>> bool(np.allclose(orthogonal_from_relative_family(fam), U))
    True
    >>> orthogonal_from_relative_family(np.stack([np.eye(2), 2 * np.eye(2)]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the family is not relative: max |L_m^T L_n - L_(n-m)| = 3 at (m, n) = (1, 1)
    """
    L = check_array("L", L)
    atol = check_real("atol", atol, 0)
    if L.ndim != 3 or L.shape[0] < 2 or L.shape[1] != L.shape[2]:
        raise PosKernelsError(f"L must have shape (M + 1, d, d) with M >= 1; got {L.shape}")
    M, d = L.shape[0] - 1, L.shape[1]
    off = float(np.abs(L[0] - np.eye(d)).max())
    if not off <= atol:  # NaN fails too
        raise PosKernelsError(f"L_0 must be the identity; got max |L_0 - I| = {off:.3g} > atol = {atol:g}")
    worst, where = 0.0, (0, 0)
    for m in range(M + 1):
        for n in range(m, M + 1):
            defect = float(np.abs(L[m].T @ L[n] - L[n - m]).max())  # Theorem 4 (a): G(n - m)
            if defect > worst:
                worst, where = defect, (m, n)
    if worst > atol:
        raise PosKernelsError(
            f"the family is not relative: max |L_m^T L_n - L_(n-m)| = {worst:.3g} at (m, n) = {where}"
        )
    U = _check_orthogonal(L[1], atol)
    for m in range(2, M + 1):
        off = float(np.abs(L[m] - np.linalg.matrix_power(U, m)).max())
        if not off <= atol * m:
            raise PosKernelsError(f"L_{m} differs from U^{m}; got max |L_{m} - U^{m}| = {off:.3g} > {atol * m:g}")
    return U
