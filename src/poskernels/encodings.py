"""The positional codes of the article: sinusoids, rotations, RoPE, ALiBi, T5 buckets, Shaw.

Conventions (the article's Definition 2): base ``b = 10**4`` unless stated, frequencies
``omega_j = b**(-2j/d)`` for planes ``j = 0..d/2-1``, planes are consecutive coordinate
pairs ``(2j, 2j+1)``, cosine first.  Hugging Face transformers pairs coordinate ``i`` with
``i + d/2`` instead ("rotate_half"); :func:`to_half_split` converts between the two.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the
tests and the experiments can loop over one registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import (
    PosKernelsError,
    check_array,
    check_base,
    check_bool,
    check_budget,
    check_even_dimension,
    check_int,
    check_length,
    check_name,
    check_positive_int,
    check_positive_real,
    check_real,
)

__all__ = [
    "DEFAULT_BASE",
    "SCHEMES",
    "Scheme",
    "R_omega",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "from_half_split",
    "generator",
    "get_scheme",
    "omega",
    "rotation",
    "shaw_clip",
    "sinusoidal_code",
    "t5_bucket",
    "to_half_split",
]

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
    j = np.arange(d // 2)  # (d/2,)
    return b ** (-2.0 * j / d)  # (d/2,)


def sinusoidal_code(m, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
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
    check_budget(f"sinusoidal_code at {m.size} positions and d = {d}", m.size * check_even_dimension(d))
    w = omega(d, b)  # (d/2,)
    angles = m[..., None] * w  # (..., d/2)
    out = np.empty(angles.shape[:-1] + (d,))  # (..., d)
    out[..., 0::2] = np.cos(angles)
    out[..., 1::2] = np.sin(angles)
    return out


def rotation(phi) -> np.ndarray:
    """The plane rotation ``R(phi) = [[cos, -sin], [sin, cos]]``, broadcast over ``phi``.

    >>> rotation(np.pi / 2).round(12)
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    phi = check_array("phi", phi)
    c, s = np.cos(phi), np.sin(phi)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (..., 2, 2)


def R_omega(k, w: np.ndarray) -> np.ndarray:
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
    >>> w = omega(4)
    >>> np.allclose(R_omega(3, w) @ sinusoidal_code(2, 4), sinusoidal_code(5, 4))
    True
    """
    w = check_array("w", w, ndim=1)
    k = check_real("the shift k", k)
    d = 2 * w.size
    check_budget(f"R_omega at d = {d}", d * d)
    blocks = rotation(k * w)  # (d/2, 2, 2)
    out = np.zeros((d, d))
    for j, block in enumerate(blocks):
        out[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = block
    return out


def generator(w: np.ndarray) -> np.ndarray:
    """Block-skew generator ``A = (+)_j w_j J`` with ``R_omega(k) = expm(k A)``.

    >>> from scipy.linalg import expm
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


def apply_rope(x, positions, theta: np.ndarray, rotated_planes: int | None = None) -> np.ndarray:
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
    >>> th = omega(8)
    >>> s1 = apply_rope(q, [3], th) @ apply_rope(k, [10], th).T
    >>> s2 = apply_rope(q, [0], th) @ apply_rope(k, [7], th).T
    >>> np.allclose(s1, s2)
    True

    A torch tensor is rotated by :func:`poskernels.torch_rope.apply_rope` (same dtype, device, autograd).
    """
    if type(x).__module__.startswith("torch"):  # torch.Tensor or Parameter: stay in torch, keep the graph
        from .torch_rope import apply_rope as apply_rope_torch

        return apply_rope_torch(x, positions, theta, rotated_planes)
    x = check_array("x", x)
    theta = check_array("theta", theta)
    if x.ndim < 2:
        raise PosKernelsError(f"x must have shape (..., n, d); got shape {x.shape}")
    if theta.ndim != 1 or theta.size == 0 or not np.all(np.isfinite(theta)) or np.any(theta <= 0):
        raise PosKernelsError(f"theta must be a non-empty 1-d array of finite positive frequencies; got {theta!r}")
    d = check_even_dimension(x.shape[-1], "the last axis of x")
    is_int = isinstance(rotated_planes, int | np.integer) and not isinstance(rotated_planes, bool)
    planes = theta.size if rotated_planes is None else int(rotated_planes) if is_int else -1  # -1: not whole, raise
    if not 0 <= planes <= min(theta.size, d // 2):
        raise PosKernelsError(
            f"rotated_planes must be a whole number in [0, {min(theta.size, d // 2)}] for d = {d} and "
            f"{theta.size} frequencies; got {rotated_planes!r}"
        )
    pos = check_array("positions", positions)
    if pos.shape != (x.shape[-2],):
        raise PosKernelsError(f"positions must have shape ({x.shape[-2]},) to match x; got {pos.shape}")
    ang = pos[:, None] * theta[None, :planes]  # (n, P)
    c, s = np.cos(ang), np.sin(ang)  # (n, P)
    out = x.copy()
    x0 = x[..., 0 : 2 * planes : 2]  # (..., n, P)
    x1 = x[..., 1 : 2 * planes : 2]  # (..., n, P)
    out[..., 0 : 2 * planes : 2] = c * x0 - s * x1
    out[..., 1 : 2 * planes : 2] = s * x0 + c * x1
    return out


def to_half_split(x) -> np.ndarray:
    """Reorder the last axis from consecutive pairs ``(2j, 2j+1)`` to halves ``(j, j + d/2)``.

    Hugging Face's ``rotate_half`` RoPE pairs coordinate ``j`` with ``j + d/2``.  A vector in
    this library's layout, reordered with this function, gets the same score there.

    >>> to_half_split(np.arange(6))
    array([0, 2, 4, 1, 3, 5])
    """
    x = np.asarray(x)
    if x.ndim == 0:
        raise PosKernelsError(f"x must have shape (..., d); got a scalar {x!r}")
    d = check_even_dimension(x.shape[-1], "the last axis")
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    return x[..., order]


def from_half_split(x) -> np.ndarray:
    """Inverse of :func:`to_half_split`.

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


def alibi_slopes(H: int) -> np.ndarray:
    """ALiBi slopes ``s_h = 2**(-8h/H)`` for heads ``h = 1..H`` (Definition 3).

    >>> alibi_slopes(8)[:2]
    array([0.5 , 0.25])
    """
    H = check_positive_int("H (number of heads)", H)
    check_budget(f"alibi_slopes at H = {H}", H)
    return 2.0 ** (-8.0 * np.arange(1, H + 1) / H)  # (H,)


def alibi_bias(n: int, s: float) -> np.ndarray:
    """Causal ALiBi bias ``-s (t - j)`` for ``j <= t`` and ``-inf`` above the diagonal.

    Returns
    -------
    ndarray, shape (n, n)
        Row ``t`` is the query, column ``j`` the key.

    Examples
    --------
    >>> alibi_bias(3, 0.5).tolist()
    [[0.0, -inf, -inf], [-0.5, 0.0, -inf], [-1.0, -0.5, 0.0]]
    """
    n = check_positive_int("n", n)
    s = check_positive_real("the ALiBi slope s", s)
    check_budget(f"the ({n}, {n}) ALiBi bias", n * n)
    t = np.arange(n)
    r = t[:, None] - t[None, :]  # (n, n)
    return np.where(r >= 0, -s * r, -np.inf)


def t5_bucket(relative_position, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = False):
    """T5's relative-position bucket (Raffel et al. 2020, Mesh TensorFlow's definition).

    Parameters
    ----------
    relative_position : array_like of int
        ``key_position - query_position`` as T5 defines it (so a causal offset ``r = t - j``
        is ``-r``).
    num_buckets : int
        Total buckets; half of them (of the causal share) are exact.
    max_distance : int
        Distance at which the logarithmic map reaches the last bucket.
    bidirectional : bool
        If true, half of the buckets are for keys after the query.

    Returns
    -------
    ndarray of int, same shape as ``relative_position``

    Notes
    -----
    For ``n = max(-relative_position, 0)`` (causal) and ``E = num_buckets/2``: bucket ``n`` if
    ``n < E``, else ``min(E + floor(ln(n/E)/ln(max_distance/E) * (num_buckets - E)), num_buckets - 1)``.

    Examples
    --------
    >>> t5_bucket(-np.array([0, 15, 16, 112, 113, 1000]))
    array([ 0, 15, 16, 30, 31, 31])
    """
    num_buckets = check_int("num_buckets", num_buckets, 1, 2**20, "one learned scalar per bucket")
    max_distance = check_length("max_distance", max_distance)
    bidirectional = check_bool("bidirectional", bidirectional)
    if num_buckets < (4 if bidirectional else 2):
        raise PosKernelsError(f"num_buckets must be >= {4 if bidirectional else 2}; got {num_buckets}")
    rel = np.asarray(relative_position) if isinstance(relative_position, np.ndarray) else check_array(
        "relative_position", relative_position, integer=True)  # fmt: skip
    if not np.issubdtype(rel.dtype, np.integer):
        raise PosKernelsError(f"relative_position must be integers; got dtype {rel.dtype}")
    if rel.size and np.abs(rel).max() >= 2**62:
        raise PosKernelsError(f"relative_position must lie within +-2**62; got {rel.min()!r} .. {rel.max()!r}")
    n = -rel.astype(np.int64)
    ret = np.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).astype(np.int64) * num_buckets
        n = np.abs(n)
    else:
        n = np.maximum(n, 0)
    max_exact = num_buckets // 2
    if max_distance <= max_exact:
        raise PosKernelsError(f"max_distance must exceed the exact range {max_exact}; got {max_distance}")
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1) / max_exact) / np.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


def shaw_clip(r, K: int) -> np.ndarray:
    """Shaw et al.'s clipped offset ``min(r, K)`` for causal offsets ``r >= 0`` (Definition 3).

    >>> shaw_clip([0, 3, 9], 4)
    array([0, 3, 4])
    """
    K = check_positive_int("the Shaw clip K", K)
    r = np.asarray(r) if isinstance(r, np.ndarray) and np.issubdtype(r.dtype, np.integer) else check_array(
        "the offsets r", r, integer=True)  # fmt: skip
    if np.any(r < 0):
        raise PosKernelsError(f"causal offsets must be >= 0; got min {r.min().item()!r}")
    return np.minimum(r, min(K, 2**62))


@dataclass(frozen=True)
class Scheme:
    """One way of adding position, as the article classifies it.

    Attributes
    ----------
    name : str
        Registry key.
    title : str
        Human-readable name.
    where : str
        ``"input"`` (added to the embedding), ``"rotation"`` (applied to q and k) or
        ``"score"`` (added to the logits) or ``"none"``.
    relative : bool
        Whether the score depends on positions only through the offset.
    defined_everywhere : bool
        Whether the code is defined at every position (a learned table is not).
    article : str
        The article element that defines it.
    offset_kernel : callable or None
        ``r -> value`` for a fixed scheme's kernel over causal offsets ``r >= 0`` (None when learned).
    """

    name: str
    title: str
    where: str
    relative: bool
    defined_everywhere: bool
    article: str
    offset_kernel: Callable[[np.ndarray], np.ndarray] | None = None


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in [
        Scheme("nope", "no position", "none", True, True, "Proposition 1"),
        Scheme(
            "sinusoidal",
            "sinusoidal code, added",
            "input",
            False,
            True,
            "Definition 2",
            # Theorem 1 (i): <p(m), p(m + r)> = kappa_16(r) at d = 16
            lambda r: np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1),
        ),
        Scheme("learned", "learned table, added", "input", False, False, "Definition 1"),
        Scheme(
            "rope",
            "RoPE (rotations)",
            "rotation",
            True,
            True,
            "Definition 4",
            # Proposition 3 (iii) with q = k = all ones: sum_j 2 cos(r theta_j) at d = 16
            lambda r: 2 * np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1),
        ),
        Scheme(
            "alibi",
            "ALiBi (linear penalty)",
            "score",
            True,
            True,
            "Definition 3, Theorem 3",
            lambda r: -0.5 * np.asarray(r, dtype=float),  # slope 1/2, ALiBi's first slope at H = 8
        ),
        Scheme("t5", "T5 relative buckets", "score", True, True, "Definition 3"),
        Scheme("shaw", "Shaw relative keys", "score", True, True, "Definition 3"),
    ]
}


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name.

    >>> get_scheme("alibi").relative
    True
    >>> get_scheme("xpos")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'xpos'; accepted: alibi, learned, nope, rope, shaw, sinusoidal, t5
    """
    return SCHEMES[check_name("scheme", name, SCHEMES)]
