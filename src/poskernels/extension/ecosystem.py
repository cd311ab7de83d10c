"""Context-extension maps beyond the article, as the ecosystem ships them (:data:`ECOSYSTEM_MAPS`).

Definition 5 names three maps (PI, NTK-aware, YaRN).  Released models use more, and use YaRN in a
form that differs from the paper's.  This module adds, with the registry's signature
``map(theta, kappa, L, **options) -> Extension`` and Hugging Face transformers' conventions
(``attention_factor`` multiplies cos and sin):

- ``dynamic``: dynamic NTK (emozilla 2023), NTK-aware scaling whose ratio follows the sequence length.
- ``yarn_hf`` / ``yarn_hf_untruncated``: YaRN as the reference code (jquesnelle/yarn) and transformers
  implement it (:mod:`poskernels.extension.yarn_reference`; where its ramp departs from the article's:
  :mod:`poskernels.extension.yarn_ramp_gap`).
- ``llama3``: Llama 3.1's smoothing (Meta 2024): plane ``j`` unchanged when it makes at least
  ``high_freq_factor`` turns in ``L``, divided by ``kappa`` below ``low_freq_factor`` turns, linear in
  turns between.  It is the article's YaRN ramp with ``(alpha, beta) = (low, high)`` and no logit scale.
- ``longrope``: LongRoPE (Ding et al. 2024; Phi-3): searched per-plane divisors, ``short_factor`` up to
  the training length and ``long_factor`` past it, and ``sqrt(1 + ln s / ln L)`` on cos and sin.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_array,
    check_positive_real,
)
from .article import Extension, MapFn, _check, _check_factor
from .yarn_reference import yarn_hf, yarn_hf_untruncated

__all__ = ["ECOSYSTEM_MAPS", "dynamic_ntk", "llama3", "longrope"]


def dynamic_ntk(theta: ArrayLike, kappa: float, L: int, factor: float = 1.0) -> Extension:
    """Dynamic NTK scaling at sequence length ``kappa L`` (transformers' ``"dynamic"``).

    The base becomes ``b * (factor * kappa - (factor - 1))**(d/(d-2))``: at ``factor = 1`` it is
    NTK-aware scaling (Theorem 5 (iii)) with the actual ratio ``kappa``; the config's ``factor`` steepens it.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies.
    kappa : float
        Sequence length over ``L`` (``L`` is ``max_position_embeddings`` for this map).
    L : int
        The training length.
    factor : float, default 1.0
        The config's ``rope_scaling.factor``.

    Returns
    -------
    Extension
        The extended frequencies ``inv_freq``, the per-plane ``factors`` on ``theta`` and the ``attention_factor``.

    Raises
    ------
    PosKernelsError
        If `kappa` is below 1, `L` not a positive integer, `factor` out of range or `theta` not positive frequencies.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> dynamic_ntk(omega(16), 4, 32).factors.round(3)[[0, 1, 7]]
    array([1.  , 0.82, 0.25])
    >>> dynamic_ntk(omega(16), 1, 32, factor=8.0).factors.round(3)[[0, 7]]  # at L nothing moves
    array([1., 1.])
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _dynamic_ntk(theta, kappa, L, factor=factor)


def _dynamic_ntk(theta: np.ndarray, kappa: float, L: int, factor: float = 1.0) -> Extension:
    """The core of :func:`dynamic_ntk`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    factor = _check_factor("factor", factor)
    if theta.size < 2:
        raise PosKernelsError(f"dynamic NTK needs d >= 4 (two planes); got d = {2 * theta.size}")
    d = 2 * theta.size
    ratio = factor * kappa - (factor - 1.0)  # >= 1 since kappa, factor >= 1
    j = np.arange(theta.size)  # (d/2,)
    return Extension("dynamic", theta * ratio ** (-2.0 * j / (d - 2)), 1.0, theta)


def llama3(
    theta: ArrayLike, kappa: float, L: int, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0
) -> Extension:
    """Llama 3.1's frequency smoothing (``rope_type = "llama3"``), ``kappa`` being its ``factor``.

    With ``lambda_j = 2 pi / theta_j``: planes with ``lambda_j < L / high_freq_factor`` are kept, planes
    with ``lambda_j > L / low_freq_factor`` are divided by ``kappa``, and between them the weight on the
    trained frequency is ``(L / lambda_j - low) / (high - low)``, linear in turns: the article's YaRN ramp
    with ``(alpha, beta) = (low, high)`` and no logit scale.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``.
    kappa : float
        The config's ``factor``, at least 1.
    L : int
        The training length (``original_max_position_embeddings``).
    low_freq_factor, high_freq_factor : float, optional
        The config's two thresholds, ``low < high``; default 1 and 4.

    Returns
    -------
    Extension
        The extended frequencies ``inv_freq``, the per-plane ``factors`` on ``theta`` and the ``attention_factor``.

    Raises
    ------
    PosKernelsError
        If `kappa` is below 1, `L` not a positive integer or ``high_freq_factor > low_freq_factor`` fails.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> llama3(omega(128, 500000.0), 8, 8192).factors.round(3)[[0, 28, 29, 34, 35, 63]]
    array([1.   , 1.   , 0.828, 0.19 , 0.125, 0.125])
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _llama3(theta, kappa, L, low_freq_factor=low_freq_factor, high_freq_factor=high_freq_factor)


def _llama3(
    theta: np.ndarray, kappa: float, L: int, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0
) -> Extension:
    """The core of :func:`llama3`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    low = check_positive_real("low_freq_factor", low_freq_factor)
    high = check_positive_real("high_freq_factor", high_freq_factor)
    if not high > low:
        raise PosKernelsError(f"llama3 needs high_freq_factor > low_freq_factor; got {high!r} <= {low!r}")
    # a wavelength, or turns L / wavelength, past float64's largest is inf, and the weight it gives is right:
    # 0 for an infinite wavelength, 1 for infinitely many turns
    with np.errstate(over="ignore"):
        wavelen = 2 * math.pi / theta  # (d/2,)
        smooth = np.clip((L / wavelen - low) / (high - low), 0.0, 1.0)  # (d/2,)  weight on theta_j
    inv_freq = (1 - smooth) * theta / kappa + smooth * theta
    return Extension("llama3", inv_freq, 1.0, theta)


def longrope(
    theta: ArrayLike,
    kappa: float,
    L: int,
    short_factor: ArrayLike | None = None,
    long_factor: ArrayLike | None = None,
    factor: float | None = None,
    attention_factor: float | None = None,
) -> Extension:
    """LongRoPE (``rope_type = "longrope"``): plane ``j`` divided by a searched ``short_factor[j]``/``long_factor[j]``.

    The switch is on the sequence length ``kappa L``: ``long_factor`` past ``L`` (``kappa > 1``),
    ``short_factor`` within it.  The attention factor is ``attention_factor`` if given, else
    ``sqrt(1 + ln s / ln L)`` with ``s = factor`` (the config's ``max_position_embeddings / L``; defaults to
    ``kappa``), 1 for ``s <= 1``.  Without lists the map reads as PI past ``L`` (``long_factor = kappa``)
    and as the trained head within it (``short_factor = 1``); real models pass their searched lists.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``.
    kappa : float
        The sequence length over ``L``, at least 1.
    L : int
        The training length (``original_max_position_embeddings``).
    short_factor, long_factor : array_like, shape (d/2,), optional
        The searched per-plane divisors; default ones (short) and ``kappa`` (long).
    factor : float, optional
        ``max_position_embeddings / L``, which sets the attention factor; default ``kappa``.
    attention_factor : float, optional
        The attention factor itself; default None (computed from `factor`).

    Returns
    -------
    Extension
        The extended frequencies ``inv_freq``, the per-plane ``factors`` on ``theta`` and the ``attention_factor``.

    Raises
    ------
    PosKernelsError
        If `kappa` is below 1, `L` not a positive integer, a list does not hold one finite positive number per plane,
        or `factor` or `attention_factor` is not positive.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> e = longrope(omega(4), 32, 4096, short_factor=[1.0, 1.5], long_factor=[1.0, 40.0])
    >>> e.factors.tolist(), round(e.attention_factor, 4)
    ([1.0, 0.025], 1.1902)
    >>> longrope(omega(4), 1, 4096, short_factor=[1.0, 1.5], long_factor=[1.0, 40.0], factor=32).factors.round(3)
    array([1.   , 0.667])
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _longrope(
        theta,
        kappa,
        L,
        short_factor=short_factor,
        long_factor=long_factor,
        factor=factor,
        attention_factor=attention_factor,
    )


def _longrope(
    theta: np.ndarray,
    kappa: float,
    L: int,
    short_factor: ArrayLike | None = None,
    long_factor: ArrayLike | None = None,
    factor: float | None = None,
    attention_factor: float | None = None,
) -> Extension:
    """The core of :func:`longrope`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    use_long = kappa > 1.0
    chosen, name = (long_factor, "long_factor") if use_long else (short_factor, "short_factor")
    if chosen is None:
        ext = np.full(theta.size, kappa if use_long else 1.0)  # (d/2,)
    else:
        ext = check_array(name, chosen)  # (d/2,)
        if ext.shape != theta.shape or np.any(ext <= 0):
            raise PosKernelsError(
                f"{name} must hold {theta.size} finite positive numbers (one per plane); got {chosen!r}"
            )
    s = kappa if factor is None else _check_factor("factor", factor)
    if attention_factor is None:
        if s > 1 and L < 2:
            raise PosKernelsError(f"LongRoPE's attention factor divides by ln L: L must be >= 2; got L = {L}")
        # finite and positive: s >= 1 is finite, ln L >= ln 2
        attention_factor = 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(L))
    else:
        attention_factor = check_positive_real("attention_factor", attention_factor)
    return Extension("longrope", theta / ext, attention_factor, theta)


#: The ecosystem's maps, by name; :data:`poskernels.extension.MAPS` joins them with the article's.
ECOSYSTEM_MAPS: dict[str, MapFn] = {
    "dynamic": dynamic_ntk,
    "yarn_hf": yarn_hf,
    "yarn_hf_untruncated": yarn_hf_untruncated,
    "llama3": llama3,
    "longrope": longrope,
}
