"""Proposition 4 (what long-term decay means): RoPE's envelope bound and its Monte Carlo facts.

In complex form plane ``j`` of ``x`` is ``x_j = x_{2j} + i x_{2j+1}``; with ``h_j = conj(q_j) k_j``
(:func:`poskernels.theory.rope.plane_products`) the offset score is
``s(Delta) = Re sum_j h_j e^{i Delta theta_j}``.  Su et al.'s "long-term decay" is a bound on that
sum by an envelope that falls with ``Delta`` on average (i); a key that matches its query decays as
the stationary kernel (ii); a key unrelated to its query does not decay at all (iii), provided its
planes are independent (the ``d = 4`` counterexample).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE, apply_rope, omega, plane_angles
from ..encodings.rotations import apply_rope_core
from ..errors import (
    PosKernelsError,
    check_array,
    check_budget,
    check_finite_result,
    check_frequencies,
    check_positive_int,
    check_positive_real,
)

__all__ = [
    "counterexample_scores",
    "counterexample_variance",
    "decay_bound",
    "decay_envelope",
    "envelope_octave_means",
    "matched_scores",
    "offset_score_complex",
    "unmatched_scores",
]


def offset_score_complex(h: ArrayLike, Delta: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """``sum_j h_j e^{i Delta theta_j}``; its real part is the offset score (Proposition 4).

    Parameters
    ----------
    h : array_like, shape (P,)
        Complex coefficients.
    Delta : array_like, any shape
        Offsets (reals allowed).
    theta : array_like, shape (P,)

    Returns
    -------
    ndarray, complex, shape of ``Delta``

    Examples
    --------
    >>> complex(offset_score_complex([1, 1j], 0.0, [1.0, 0.5]))
    (1+1j)
    """
    h, theta = _check_planes(h, theta)
    return _offset_score_complex(h, check_array("Delta", Delta), theta)


def _offset_score_complex(h: np.ndarray, Delta: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """:func:`offset_score_complex` of checked arrays: ``h`` complex (P,), ``Delta`` real, ``theta`` (P,)."""
    check_budget(f"scores at {Delta.size} offsets and {theta.size} planes", Delta.size * theta.size)
    angles = plane_angles("offset_score_complex", Delta, theta)  # (..., P): an infinite angle has no e^{i .}
    with np.errstate(over="ignore", invalid="ignore"):  # coefficients summing past float64's largest: refused below
        score = (h * np.exp(1j * angles)).sum(-1)  # Delta.shape
    return check_finite_result("the offset score", score, "sum_j |h_j| must stay below 1.8e308", h=h)


def _check_theta(theta) -> np.ndarray:
    theta = check_array("theta", theta)
    if theta.ndim != 1 or theta.size == 0:
        raise PosKernelsError(f"theta must be a non-empty 1-d array (one frequency per plane); got {theta!r}")
    return theta


def _check_planes(h, theta) -> tuple[np.ndarray, np.ndarray]:
    h, theta = check_array("h", h, complex_ok=True), check_array("theta", theta)
    if h.ndim != 1 or h.shape != theta.shape:
        raise PosKernelsError(f"h and theta must be 1-d of one shape (P,); got {h.shape} and {theta.shape}")
    return h, theta


def decay_envelope(Delta: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """Proposition 4 (i): the envelope ``sum_{j=1}^{d/2} |S_j|`` with ``S_j = sum_{l<j} e^{i Delta theta_l}``.

    Parameters
    ----------
    Delta : array_like, any shape
    theta : array_like, shape (d/2,)

    Returns
    -------
    ndarray, shape of ``Delta``

    Examples
    --------
    >>> float(decay_envelope(0, omega(8)))  # 1 + 2 + 3 + 4
    10.0
    """
    theta = check_array("theta", theta)
    if theta.ndim != 1 or theta.size == 0:
        raise PosKernelsError(f"theta must be a non-empty 1-d array; got shape {theta.shape}")
    return _decay_envelope(check_array("Delta", Delta), theta)


def _decay_envelope(Delta: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """:func:`decay_envelope` of checked offsets and a checked non-empty ``theta`` (d/2,): its budget, then the sum."""
    check_budget(f"the envelope at {Delta.size} offsets and {theta.size} planes", Delta.size * theta.size)
    angles = plane_angles("the decay envelope", Delta, theta)  # (..., d/2): e^{i inf} would be NaN, refused
    S = np.cumsum(np.exp(1j * angles), axis=-1)  # (..., d/2): S_1 .. S_{d/2}
    return np.abs(S).sum(-1)


def decay_bound(h: ArrayLike, Delta: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """Proposition 4 (i): ``(max_j |h_{j+1} - h_j|) * envelope(Delta)``, with ``h_{d/2} = 0``.

    Parameters
    ----------
    h : array_like, shape (d/2,)
        The plane weights ``h_j`` of the score ``sum_j h_j e^{i Delta theta_j}``.
    Delta : array_like
        Offsets.
    theta : array_like, shape (d/2,)
        The frequencies ``theta_j``.

    Returns
    -------
    ndarray
        The bound on the score's modulus, of `Delta`'s shape.

    Raises
    ------
    PosKernelsError
        If `h` and `theta` are not non-empty 1-d arrays of one shape, or an array is not finite.

    Examples
    --------
    >>> float(decay_bound([1.0, 1.0], 0.0, [1.0, 0.5]))  # max|diff| = 1, envelope = 1 + 2
    3.0
    """
    h, theta = _check_planes(h, theta)
    if theta.size == 0:  # and so an empty h: no envelope
        raise PosKernelsError(f"theta must be a non-empty 1-d array; got shape {theta.shape}")
    envelope = _decay_envelope(check_array("Delta", Delta), theta)  # shape of Delta
    steps = np.abs(np.diff(np.append(h, 0.0)))  # (d/2,) |h_{j+1} - h_j|, j = 0..d/2-1
    return steps.max() * envelope


def envelope_octave_means(d: int = 128, b: float = DEFAULT_BASE, max_octave_start: int = 2048) -> dict[int, float]:
    """Proposition 4's measurement: the envelope's mean over each octave ``[2^k, 2^{k+1} - 1]`` of offsets.

    Parameters
    ----------
    d, b : int, float
        Width and base of RoPE's frequencies ``theta_j = b**(-2j/d)``.
    max_octave_start : int
        Last octave start, a power of two.

    Returns
    -------
    dict
        ``{2^k: mean}`` for ``2^k = 1, 2, 4, ..., max_octave_start``.

    Examples
    --------
    >>> means = envelope_octave_means(d=128)
    >>> round(means[1]), round(means[2048])
    (2018, 312)
    """
    theta = omega(d, b)  # (d/2,)
    top = check_positive_int("max_octave_start", max_octave_start)
    if top & (top - 1):
        raise PosKernelsError(f"max_octave_start must be a power of two; got {max_octave_start!r}")
    check_budget(f"the envelope at offsets 1..{2 * top - 1} and d = {d}", 2 * top * theta.size)
    Delta = np.arange(1, 2 * top)  # (2 top - 1,) offsets 1 .. 2 top - 1
    env = _decay_envelope(Delta.astype(np.float64), theta)  # (2 top - 1,)
    out, start = {}, 1
    while start <= top:
        out[start] = float(env[start - 1 : 2 * start - 1].mean())
        start *= 2
    return out


def matched_scores(
    Delta: ArrayLike, theta: ArrayLike, sigma: float, n_samples: int, rng: np.random.Generator
) -> np.ndarray:
    """Proposition 4 (ii) by sampling: ``<q, R_theta(Delta) q>`` for random ``q`` with ``E|q_j|^2 = sigma^2``.

    Each plane of ``q`` is a Gaussian with its own random (non-isotropic) covariance of trace
    ``sigma^2``: (ii) needs only the second moment, not rotation invariance.

    Parameters
    ----------
    Delta : array_like, shape (n,)
        Offsets.
    theta : array_like, shape (d/2,)
        The frequencies ``theta_j``.
    sigma : float
        The root of each plane's second moment.
    n_samples : int
        The number of draws.
    rng : numpy.random.Generator
        The source of every draw.

    Returns
    -------
    ndarray, shape (n_samples, n)
        Same ``q`` draws at every offset; the mean over samples estimates ``sigma^2 kappa_d(Delta)``.

    Raises
    ------
    PosKernelsError
        If an argument is out of range (`sigma` not positive, `n_samples` below 1, a draw past the work budget).

    Examples
    --------
    >>> x = matched_scores([0, 5], omega(8), 1.0, 20_000, np.random.default_rng(0))
    >>> x.shape, x.mean(0).round(1).tolist()  # kappa_8(0) = 4, kappa_8(5) = 3.16
    ((20000, 2), [4.0, 3.2])
    """
    theta = _check_theta(theta)
    sigma = check_positive_real("sigma", sigma)
    n_samples = check_positive_int("n_samples", n_samples)
    check_budget(f"{n_samples} samples at d = {2 * theta.size}", n_samples * 2 * theta.size * max(1, np.size(Delta)))
    Delta = np.atleast_1d(check_array("Delta", Delta))  # (D,)
    if Delta.size == 0:
        raise PosKernelsError("Delta must hold at least one offset; got an empty array")
    A = rng.normal(size=(theta.size, 2, 2))  # (d/2, 2, 2) per-plane mixing
    A *= sigma / np.sqrt((A**2).sum(axis=(1, 2)))[:, None, None]  # trace(A A^T) = sigma^2
    z = rng.normal(size=(n_samples, theta.size, 2))  # (N, d/2, 2)
    q = np.einsum("jab,njb->nja", A, z).reshape(n_samples, -1)  # (N, d)
    # apply_rope's checks, once for every offset: the draws, then the frequencies (positive, as it requires)
    x = check_array("x", q[:, None, :])  # (N, 1, d)
    if np.any(theta <= 0):  # finite and 1-d already: its refusal of a frequency that is not positive
        check_frequencies("theta", theta)
    with np.errstate(over="ignore", invalid="ignore"):  # sigma^2 past float64's largest: refused below
        turned = (apply_rope_core(x, np.array([D]), theta)[:, 0, :] for D in Delta)  # (N, d) per offset
        scores = np.stack([(q * t).sum(-1) for t in turned], -1)  # (N, D)
    return check_finite_result("the matched scores", scores, "sigma**2 must stay below 1.8e308", sigma=sigma)


def _rotate(x: np.ndarray, Delta: float, theta: np.ndarray) -> np.ndarray:
    return apply_rope(x[:, None, :], [Delta], theta)[:, 0, :]  # (N, d)


def unmatched_scores(Delta: float, theta: ArrayLike, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Proposition 4 (iii) by sampling: ``<q, R_theta(Delta) k>`` with ``k`` independent, rotation-invariant planes.

    ``q`` is Gaussian with a fixed full covariance (running means of white noise: its planes dependent);
    ``k``'s plane ``j`` is ``r_j (cos u_j, sin u_j)`` with ``u_j`` uniform and ``r_j`` from a plane-specific
    gamma law, all independent.  The law of the score should not depend on ``Delta``.

    Parameters
    ----------
    Delta : float
        One offset.
    theta : array_like, shape (d/2,)
        The frequencies ``theta_j``.
    n_samples : int
        The number of draws.
    rng : numpy.random.Generator
        The source of every draw.

    Returns
    -------
    ndarray, shape (n_samples,)
        The sampled scores.

    Raises
    ------
    PosKernelsError
        If an argument is out of range (`n_samples` below 1, a non-finite offset or frequency).

    Examples
    --------
    >>> unmatched_scores(7.0, omega(8), 1000, np.random.default_rng(0)).shape
    (1000,)
    """
    theta = _check_theta(theta)
    n_samples = check_positive_int("n_samples", n_samples)
    check_budget(f"{n_samples} samples at d = {2 * theta.size}", n_samples * 2 * theta.size)
    check_budget(f"the ({2 * theta.size}, {2 * theta.size}) mixing matrix", (2 * theta.size) ** 2)
    P = theta.size
    C = np.tril(np.ones((2 * P, 2 * P))) / np.arange(1, 2 * P + 1)[:, None]  # (d, d) fixed mixing: dependent planes
    q = rng.normal(size=(n_samples, 2 * P)) @ C.T  # (N, d)
    r = rng.gamma(shape=1.0 + np.arange(P), size=(n_samples, P))  # (N, d/2) radii
    u = rng.uniform(0, 2 * np.pi, size=(n_samples, P))  # (N, d/2) angles
    k = np.stack([r * np.cos(u), r * np.sin(u)], -1).reshape(n_samples, -1)  # (N, d)
    return (q * _rotate(k, Delta, theta)).sum(-1)


def counterexample_scores(Delta: float, theta: ArrayLike, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Proposition 4 (iii) needs independent planes: ``d = 4``, ``k_0 = k_1 = (cos b, sin b)``, ``q = (1, 0, 1, 0)``.

    Each plane of ``k`` is rotation-invariant but the two turn together.

    Parameters
    ----------
    Delta : float
        One offset.
    theta : array_like, shape (2,)
        The frequencies ``theta_j``.
    n_samples : int
        The number of draws.
    rng : numpy.random.Generator
        The source of every draw.

    Returns
    -------
    ndarray, shape (n_samples,)
        Scores ``<q, R_theta(Delta) k>``; their variance is :func:`counterexample_variance`.

    Raises
    ------
    PosKernelsError
        If `theta` does not hold two frequencies or another argument is out of range.

    Examples
    --------
    >>> round(float(counterexample_scores(0.0, omega(4), 50_000, np.random.default_rng(0)).var()), 1)
    2.0
    """
    theta = check_array("theta", theta)
    if theta.shape != (2,):
        raise PosKernelsError(f"the counterexample lives at d = 4: theta must have shape (2,); got {theta.shape}")
    n_samples = check_positive_int("n_samples", n_samples)
    check_budget(f"{n_samples} samples at d = 4", 4 * n_samples)
    beta = rng.uniform(0, 2 * np.pi, size=n_samples)  # (N,)
    plane = np.stack([np.cos(beta), np.sin(beta)], -1)  # (N, 2)
    k = np.concatenate([plane, plane], -1)  # (N, 4) k_0 = k_1
    q = np.array([1.0, 0.0, 1.0, 0.0])  # (4,)
    return _rotate(k, Delta, theta) @ q


def counterexample_variance(Delta: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """Proposition 4 (iii), closed form: the counterexample's score has variance ``1 + cos(Delta (theta_0 - theta_1))``.

    Parameters
    ----------
    Delta : array_like
        Offsets.
    theta : array_like, shape (2,)
        The two frequencies.

    Returns
    -------
    ndarray
        The variance of :func:`counterexample_scores`, of `Delta`'s shape.

    Raises
    ------
    PosKernelsError
        If `theta` does not hold two frequencies or an array is not finite.

    Examples
    --------
    >>> counterexample_variance([0.0, np.pi / 0.99], omega(4)).round(6).tolist()
    [2.0, 0.0]
    """
    theta = check_array("theta", theta)
    if theta.shape != (2,):
        raise PosKernelsError(f"the counterexample lives at d = 4: theta must have shape (2,); got {theta.shape}")
    with np.errstate(over="ignore"):
        gap = check_finite_result("theta_0 - theta_1", theta[0] - theta[1], "theta within 1.8e308", theta=theta)
    angles = plane_angles("counterexample_variance", check_array("Delta", Delta), np.atleast_1d(gap))  # (..., 1)
    return 1.0 + np.cos(angles[..., 0])
