"""The kernels over offsets of the rotary family (xPos, p-RoPE, partial rotary), and what their papers state.

Each scheme turns plane ``j`` of queries and keys by frequencies ``theta_j`` (complex ``theta_j - i gamma_j``: with a
decay), so by Proposition 3 (iii) the score of a key ``r`` positions behind its query is

    ``s(r) = Re sum_j conj(q_j) k_j e^{-i r theta_j}``  (plane ``j`` of a vector read as one complex number)

(:func:`rotary_kernel`; with ``q = k`` all ones, ``2 sum_j cos(r theta_j) e^{-gamma_j r}``, the form of RoPE's
``offset_kernel``).

* **xPos** (Sun et al. 2022): ``gamma_j = -ln(zeta_j) / gamma``, so ``|s(r)| <= sum_j |q_j||k_j| zeta_j^{r/gamma}``,
  an envelope that decreases in ``r`` to 0 (:func:`xpos_envelope`), where RoPE's bound ``sum_j |q_j||k_j|`` stays
  flat.  The paper's measure of how sharply a head can tell near keys from far ones is its *attention resolution*
  ``R(s) = sum_{i=0}^{N} e^{s[i]} (e^{s[i]} - e^{s[i+1]}) / (sum_{i=0}^{N} e^{s[i]})^2`` of the expected score
  ``s[i]`` at offset ``i`` (:func:`attention_resolution`), which xPos is built to raise above RoPE's.
* **p-RoPE** (Barbero et al. 2024): the slowest planes do not turn, so
  ``s(r) = sum_{j unturned} <q_j, k_j> + (RoPE's kernel on the turned planes)``: a channel that does not depend on
  the offset (the paper's "semantic" channel) plus RoPE's kernel on ``floor(p d / 2)`` planes.  With ``q = k`` all
  ones every dropped plane gives ``2 >= 2 cos(r theta_j)``, so p-RoPE's kernel lies above RoPE's at every offset
  and its first negative offset (:func:`first_negative_offset`) comes no sooner.
* **Partial rotary**: the same form as p-RoPE's, with the frequencies of the rotary width ``b^{-2i/d_r}``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..encodings.codes import DEFAULT_BASE, omega
from ..encodings.rotary_variants import (
    p_rope_frequencies,
    partial_rotary_frequencies,
    xpos_frequencies,
    xpos_zeta,
)
from ..errors import PosKernelsError, check_array, check_budget, check_real
from .kerple_fire import causal_offsets

__all__ = [
    "attention_resolution",
    "first_negative_offset",
    "p_rope_kernel",
    "partial_rotary_kernel",
    "rope_kernel",
    "rotary_kernel",
    "xpos_envelope",
    "xpos_kernel",
]


def _planes(name: str, v: ArrayLike | None, P: int) -> np.ndarray:
    """A vector of ``2P`` reals as ``P`` complex planes ``v_{2j} + i v_{2j+1}`` (all ones when None)."""
    if v is None:
        return np.full(P, 1.0 + 1.0j)
    v = check_array(name, v, ndim=1)
    if v.shape != (2 * P,):
        raise PosKernelsError(f"{name} must have shape ({2 * P},), two coordinates per plane; got {v.shape}")
    return v[0::2] + 1j * v[1::2]


def rotary_kernel(r: ArrayLike, theta: ArrayLike, q: ArrayLike | None = None, k: ArrayLike | None = None) -> np.ndarray:
    """The offset score ``Re sum_j conj(q_j) k_j e^{-i r theta_j}`` of a rotary head (Proposition 3 (iii) at -r).

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    theta : array_like, shape (P,)
        Per-plane frequencies; complex ``theta_j - i gamma_j`` is a rotation with decay ``e^{-gamma_j r}``.
    q, k : array_like, shape (2P,), optional
        Query and key, not yet turned (default all ones: ``2 sum_j cos(r theta_j) e^{-gamma_j r}``).

    Returns
    -------
    ndarray, shape of ``r``

    Examples
    --------
    >>> rotary_kernel([0, 1], [1.0, 0.0]).round(4).tolist()  # one plane turning, one that does not
    [4.0, 3.0806]
    >>> rotary_kernel([0, 10], [1.0 - 0.1j]).round(4).tolist()  # a decayed plane: 2 cos(10) e^{-1}
    [2.0, -0.6173]
    """
    r = causal_offsets(r)
    theta = check_array("theta", theta, ndim=1, complex_ok=True)  # (P,)
    P = theta.size
    h = np.conj(_planes("q", q, P)) * _planes("k", k, P)  # (P,)
    check_budget(f"the kernel at {r.size} offsets x {P} planes", r.size * P)
    return np.real(np.exp(-1j * r[..., None] * theta) @ h)  # (...,)


def rope_kernel(
    r: ArrayLike, d: int = 16, base: float = DEFAULT_BASE, q: ArrayLike | None = None, k: ArrayLike | None = None
) -> np.ndarray:
    """RoPE's kernel (Definition 4), :func:`rotary_kernel` at ``omega(d, b)``.

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    d : int, optional
        The even head width; default 16.
    base : float, optional
        The base of ``b^{-2j/d}``; default 10,000.
    q, k : array_like, shape (d,), optional
        Query and key, not yet turned (default all ones).

    Returns
    -------
    ndarray
        The score at each offset, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative, `d` is not a positive even integer, `q` or `k` is not of shape ``(d,)``, or a value is
        not finite.

    Examples
    --------
    >>> rope_kernel([0, 91], 16).round(3).tolist()  # the first negative offset at d = 16
    [16.0, -0.432]
    """
    return rotary_kernel(r, omega(d, base), q, k)


def xpos_kernel(
    r: ArrayLike,
    d: int = 16,
    base: float = DEFAULT_BASE,
    scale_base: float = 16.0,
    gamma_x: float = 0.4,
    q: ArrayLike | None = None,
    k: ArrayLike | None = None,
) -> np.ndarray:
    """xPos's kernel: RoPE's with plane ``j`` weighed by ``zeta_j^{r / scale_base}`` (Sun et al. 2022).

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    d : int, optional
        The even head width; default 16.
    base : float, optional
        The base of ``b^{-2j/d}``; default 10,000.
    scale_base : float, optional
        xPos's positive scale: the decay is ``zeta_j`` per ``scale_base`` positions; default 16.
    gamma_x : float, optional
        xPos's positive offset in ``zeta_j = (2j/d + gamma_x) / (1 + gamma_x)``; default 0.4 (torchscale's).
    q, k : array_like, shape (d,), optional
        Query and key, not yet turned (default all ones).

    Returns
    -------
    ndarray
        The score at each offset, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative, `d`, `base`, `scale_base` or `gamma_x` is out of range, `q` or `k` is not of shape
        ``(d,)``, or a value is not finite.

    Examples
    --------
    >>> xpos_kernel([0, 31, 1000], 16).round(4).tolist()  # decayed by the window's edge, gone far past it
    [16.0, 4.7169, 0.0055]
    """
    return rotary_kernel(r, xpos_frequencies(d, base, scale_base, gamma_x), q, k)


def xpos_envelope(
    r: ArrayLike,
    d: int = 16,
    scale_base: float = 16.0,
    gamma_x: float = 0.4,
    q: ArrayLike | None = None,
    k: ArrayLike | None = None,
) -> np.ndarray:
    """The bound ``sum_j |q_j||k_j| zeta_j^{r / scale_base} >= |xpos_kernel(r)|``, decreasing in ``r`` to 0.

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    d : int, optional
        The even head width; default 16.
    scale_base : float, optional
        xPos's positive scale; default 16.
    gamma_x : float, optional
        xPos's positive offset in ``zeta_j``; default 0.4.
    q, k : array_like, shape (d,), optional
        Query and key, not yet turned (default all ones).

    Returns
    -------
    ndarray
        The envelope at each offset, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative, `d`, `scale_base` or `gamma_x` is out of range, `q` or `k` is not of shape ``(d,)``,
        or a value is not finite.

    Examples
    --------
    >>> xpos_envelope([0, 16, 160], 16).round(3).tolist()
    [16.0, 9.571, 1.184]
    """
    r = causal_offsets(r)
    scale_base = check_real("scale_base", scale_base, 0, None, open_lo=True)  # as xpos_frequencies refuses it
    zeta = xpos_zeta(d, gamma_x)  # (P,)
    w = np.abs(_planes("q", q, zeta.size)) * np.abs(_planes("k", k, zeta.size))  # (P,)
    return (zeta ** (r[..., None] / scale_base)) @ w


def attention_resolution(s: ArrayLike) -> float:
    """Sun et al. 2022's attention resolution ``sum_i e^{s_i} (e^{s_i} - e^{s_{i+1}}) / (sum_i e^{s_i})^2``.

    ``s`` holds the expected score at offsets ``0..N+1`` (the sums run over ``i = 0..N``); a score that falls
    steeply and monotonically from the nearest key resolves near from far, and scores higher.  Computed with the
    largest score factored out, so it never overflows.

    Parameters
    ----------
    s : array_like, shape (N + 2,)
        The expected score at offsets ``0..N+1``.

    Returns
    -------
    float
        The resolution ``R(s)``.

    Raises
    ------
    PosKernelsError
        If `s` is not a 1-d finite array of two scores or more.

    Examples
    --------
    >>> attention_resolution([0.0, 0.0, 0.0])  # flat: no resolution
    0.0
    >>> round(attention_resolution([10.0, 0.0, 0.0]), 4)  # one key far above the rest
    1.0
    """
    s = check_array("s", s, ndim=1)
    if s.size < 2:
        raise PosKernelsError(f"s needs the score at two offsets or more; got {s.size}")
    e = np.exp(s - s.max())  # (N + 2,) scaled by e^{-max}: the ratio is unchanged
    head = e[:-1]
    return float((head * (head - e[1:])).sum() / head.sum() ** 2)


def p_rope_kernel(
    r: ArrayLike,
    d: int = 16,
    base: float = DEFAULT_BASE,
    p: float = 0.75,
    q: ArrayLike | None = None,
    k: ArrayLike | None = None,
) -> np.ndarray:
    """p-RoPE's kernel (Barbero et al. 2024): a constant from the unturned planes plus RoPE's on the turned ones.

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    d : int, optional
        The even head width; default 16.
    base : float, optional
        The base of ``b^{-2j/d}``; default 10,000.
    p : float, optional
        The share of planes that turn, in ``[0, 1]``: the fastest ``floor(p d / 2)``; default 0.75.
    q, k : array_like, shape (d,), optional
        Query and key, not yet turned (default all ones).

    Returns
    -------
    ndarray
        The score at each offset, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative, `d` or `p` is out of range, `q` or `k` is not of shape ``(d,)``, or a value is not
        finite.

    Examples
    --------
    >>> p_rope_kernel([0, 91], 16, p=0.75).round(3).tolist()  # two unturned planes add 2 (1 - cos) each
    [16.0, -0.423]
    >>> bool(p_rope_kernel([1707], 128)[0] > 0 > rope_kernel([1707], 128)[0])  # at d = 128 RoPE dips first
    True
    """
    return rotary_kernel(r, p_rope_frequencies(d, base, p), q, k)


def partial_rotary_kernel(
    r: ArrayLike,
    d: int = 16,
    base: float = DEFAULT_BASE,
    factor: float = 0.25,
    q: ArrayLike | None = None,
    k: ArrayLike | None = None,
) -> np.ndarray:
    """Partial rotary's kernel: p-RoPE's form with the rotary width's frequencies ``b^{-2i/d_r}``, ``d_r = f d``.

    Parameters
    ----------
    r : array_like
        Offsets ``r >= 0`` of the keys behind the query.
    d : int, optional
        The even head width; default 16.
    base : float, optional
        The base of ``b^{-2j/d}``; default 10,000.
    factor : float, optional
        The partial rotary factor ``f`` in ``[0, 1]``; default 0.25.
    q, k : array_like, shape (d,), optional
        Query and key, not yet turned (default all ones).

    Returns
    -------
    ndarray
        The score at each offset, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If an offset is negative, `d` or `factor` is out of range, `q` or `k` is not of shape ``(d,)``, or a value is
        not finite.

    Examples
    --------
    >>> partial_rotary_kernel([0, 1], 16, factor=0.25).round(4).tolist()  # 6 still planes: a constant 12
    [16.0, 15.0805]
    """
    return rotary_kernel(r, partial_rotary_frequencies(d, base, factor), q, k)


def first_negative_offset(values: ArrayLike) -> int | None:
    """The first offset at which a kernel, given at ``r = 0, 1, ...``, is negative (None if it never is).

    Parameters
    ----------
    values : array_like, shape (n,)
        The kernel at offsets ``0..n-1``.

    Returns
    -------
    int or None
        The first offset with a negative value.

    Raises
    ------
    PosKernelsError
        If `values` is not a 1-d finite array.

    Examples
    --------
    >>> first_negative_offset(rope_kernel(np.arange(200), 16))
    91
    >>> first_negative_offset([3.0, 1.0, 0.0]) is None
    True
    """
    v = check_array("values", values, ndim=1)
    neg = np.flatnonzero(v < 0)
    return int(neg[0]) if neg.size else None
