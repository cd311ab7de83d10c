"""YaRN as released models ship it: the reference code's ramp (jquesnelle/yarn, Hugging Face transformers).

``yarn_hf`` / ``yarn_hf_untruncated``: YaRN as the reference code and transformers implement it: the ramp is
linear in the *plane index* between the planes that make ``beta_fast`` and ``beta_slow`` turns in ``L``
(``find_correction_dim``), rounded outward to whole planes unless ``truncate`` is off (transformers' ``truncate``
option, used by gpt-oss).  Both are maps of :data:`poskernels.extension.ecosystem.ECOSYSTEM_MAPS`, with the
registry's signature ``map(theta, kappa, L, **options) -> Extension``.
How far this ramp departs from the article's is :mod:`poskernels.extension.yarn_ramp_gap`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_bool, check_length, check_positive_real, check_real
from .article import Extension, _check, _check_theta

__all__ = [
    "yarn_hf",
    "yarn_hf_untruncated",
    "yarn_mscale",
    "yarn_ramp_index",
]


def _log_step(theta: np.ndarray) -> float:
    """``ln(theta_0 / theta_1) = 2 ln b / d`` for geometric frequencies; raise for anything else."""
    if theta.size < 2:
        raise PosKernelsError(f"this map needs d >= 4 (two planes); got d = {2 * theta.size}")
    steps = np.diff(np.log(theta))  # (d/2 - 1,)
    # geometric to float32 precision: a model's inv_freq buffer is float32 (relative error ~6e-8 per value)
    if np.any(steps >= 0) or not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-6):
        raise PosKernelsError(f"this map needs geometric frequencies theta_j = b**(-2j/d); got {theta!r}")
    return float(-steps[0])


def yarn_ramp_index(
    theta: ArrayLike, L: int, beta_fast: float = 32.0, beta_slow: float = 1.0, truncate: bool = True
) -> np.ndarray:
    """YaRN's ramp ``gamma_j`` as the reference code computes it: linear in the plane index.

    ``find_correction_dim(r)`` is the (real) plane index whose turns ``L theta_j / (2 pi)`` equal ``r``,
    ``ln(L theta_0 / (2 pi r)) / ln(theta_0 / theta_1)``.  The ramp runs from ``low`` (``r = beta_fast``) to
    ``high`` (``r = beta_slow``), floored and ceiled when ``truncate``, clamped to ``[0, d - 1]`` (the
    reference code's bound, with ``d`` the rotary width, not ``d/2 - 1``).  Returns the weight on the trained
    frequency, ``1 - ramp``, so it compares with :func:`~poskernels.extension.yarn_ramp_turns`.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``.
    L : int
        The training length (``original_max_position_embeddings``).
    beta_fast, beta_slow : float, optional
        The turns at which the ramp starts and ends, ``beta_fast > beta_slow > 0``; default 32 and 1.
    truncate : bool, optional
        Floor and ceil the ramp's ends to whole plane indices, as the reference code does; default True.

    Returns
    -------
    ndarray, shape (d/2,)
        The weight ``1 - ramp`` on the trained frequency, in ``[0, 1]``.

    Raises
    ------
    PosKernelsError
        If `theta` is not positive frequencies, `L` not a positive integer or ``beta_fast > beta_slow > 0`` fails.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> yarn_ramp_index(omega(16), 32).round(3)
    array([1. , 0.5, 0. , 0. , 0. , 0. , 0. , 0. ])
    >>> yarn_ramp_index(omega(16), 32, truncate=False).round(3)[:3]
    array([1.   , 0.293, 0.   ])
    """
    theta = _check_theta(theta)
    L = check_length("the training length L", L)
    beta_fast, beta_slow = _check_betas(beta_fast, beta_slow)
    return _yarn_ramp_index(theta, L, beta_fast, beta_slow, check_bool("truncate", truncate))


def _check_betas(beta_fast, beta_slow) -> tuple[float, float]:
    """YaRN's ramp ends in turns, ``beta_fast > beta_slow > 0``, checked."""
    beta_fast, beta_slow = check_real("beta_fast", beta_fast), check_real("beta_slow", beta_slow)
    if not (beta_fast > beta_slow > 0):
        raise PosKernelsError(
            f"YaRN needs beta_fast > beta_slow > 0; got beta_fast = {beta_fast!r}, beta_slow = {beta_slow!r}"
        )
    return beta_fast, beta_slow


def _yarn_ramp_index(theta: np.ndarray, L: int, beta_fast: float, beta_slow: float, truncate: bool) -> np.ndarray:
    """The core of :func:`yarn_ramp_index`: trusts all its arguments, checked once by its caller."""
    step = _log_step(theta)
    d = 2 * theta.size

    def correction_dim(r):  # plane index where L theta_j / (2 pi) = r
        with np.errstate(over="ignore", under="ignore"):
            turns = L * theta[0] / (2 * math.pi * r)
        if 0 < turns < math.inf:
            return math.log(turns) / step
        # L theta_0 / (2 pi r) past float64's range (inf or 0): the same logarithm, as a sum of logarithms
        return (math.log(L) + math.log(theta[0]) - math.log(2 * math.pi) - math.log(r)) / step

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # the reference code's guard against a zero-width ramp
    ramp = np.clip((np.arange(theta.size) - low) / (high - low), 0.0, 1.0)  # (d/2,)  1 = interpolated
    return 1.0 - ramp


def yarn_mscale(kappa: float, mscale: float = 1.0) -> float:
    """YaRN's attention factor ``0.1 mscale ln kappa + 1`` (1 for ``kappa <= 1``), on cos and sin.

    Parameters
    ----------
    kappa : float
        The extension ratio, positive.
    mscale : float, optional
        The config's ``mscale`` multiplier; default 1.

    Returns
    -------
    float
        The factor on cos and sin (the score is multiplied by its square).

    Raises
    ------
    PosKernelsError
        If `kappa` is not a finite positive number or `mscale` not finite.

    Examples
    --------
    >>> round(yarn_mscale(4), 4), yarn_mscale(1)
    (1.1386, 1.0)
    """
    kappa, mscale = check_real("kappa", kappa, 0, open_lo=True), check_real("mscale", mscale)
    return _yarn_mscale(kappa, mscale)


def _yarn_mscale(kappa: float, mscale: float = 1.0) -> float:
    """The core of :func:`yarn_mscale`: trusts `kappa` (finite, positive) and `mscale` (finite)."""
    return 1.0 if kappa <= 1 else 0.1 * mscale * math.log(kappa) + 1.0


def yarn_hf(
    theta: ArrayLike,
    kappa: float,
    L: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
    truncate: bool = True,
) -> Extension:
    """YaRN as the reference code and transformers implement it (``rope_type = "yarn"``).

    Plane ``j`` gets ``(1 - gamma_j) theta_j / kappa + gamma_j theta_j`` with ``gamma_j`` from
    :func:`yarn_ramp_index`.  The attention factor is ``attention_factor`` if given, else
    ``yarn_mscale(kappa, mscale) / yarn_mscale(kappa, mscale_all_dim)`` when both are given and non-zero
    (DeepSeek's convention), else ``yarn_mscale(kappa)``.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``.
    kappa : float
        The extension ratio (the config's ``factor``), at least 1.
    L : int
        The training length (``original_max_position_embeddings``).
    beta_fast, beta_slow : float, optional
        The ramp's ends in turns; default 32 and 1.
    mscale, mscale_all_dim : float, optional
        DeepSeek's two multipliers of the attention factor (see above); default None.
    attention_factor : float, optional
        The attention factor itself, overriding the others; default None.
    truncate : bool, optional
        Floor and ceil the ramp's ends (transformers' ``truncate``); default True.

    Returns
    -------
    Extension
        The extended frequencies ``inv_freq``, the per-plane ``factors`` on ``theta`` and the ``attention_factor``.

    Raises
    ------
    PosKernelsError
        If `kappa` is below 1, `L` not a positive integer, ``beta_fast > beta_slow > 0`` fails or a scale is not
        finite.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> e = yarn_hf(omega(128), 4, 4096)
    >>> e.factors.round(3)[[0, 10, 20, 30, 40]], round(e.attention_factor, 4)
    (array([1.   , 1.   , 1.   , 0.712, 0.423]), 1.1386)
    >>> round(yarn_hf(omega(128), 4, 4096, mscale=0.707, mscale_all_dim=0.707).attention_factor, 4)
    1.0
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _yarn_hf(
        theta,
        kappa,
        L,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
        attention_factor=attention_factor,
        truncate=truncate,
    )


def _yarn_hf(
    theta: np.ndarray,
    kappa: float,
    L: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
    truncate: bool = True,
) -> Extension:
    """The core of :func:`yarn_hf`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    truncate = check_bool("truncate", truncate)  # "no" is not False
    mscale = None if mscale is None else check_real("mscale", mscale)
    mscale_all_dim = None if mscale_all_dim is None else check_real("mscale_all_dim", mscale_all_dim)
    gamma = _yarn_ramp_index(theta, L, *_check_betas(beta_fast, beta_slow), truncate)  # (d/2,)
    inv_freq = (1 - gamma) * theta / kappa + gamma * theta  # (d/2,)
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = _yarn_mscale(kappa, mscale) / _yarn_mscale(kappa, mscale_all_dim)
        else:
            attention_factor = _yarn_mscale(kappa)
    attention_factor = check_positive_real("attention_factor", attention_factor)
    return Extension("yarn_hf" if truncate else "yarn_hf_untruncated", inv_freq, attention_factor, theta)


def yarn_hf_untruncated(theta: ArrayLike, kappa: float, L: int, **options: Any) -> Extension:
    """:func:`yarn_hf` with ``truncate=False``: the ramp ends stay at the real correction dimensions.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies.
    kappa : float
        The extension ratio (the config's ``factor``).
    L : int
        The training length (``original_max_position_embeddings``).
    **options
        :func:`yarn_hf`'s options: ``beta_fast``, ``beta_slow``, ``mscale``, ``mscale_all_dim``,
        ``attention_factor``.

    Returns
    -------
    Extension
        The extended frequencies, the per-plane factors and the attention factor.

    Raises
    ------
    PosKernelsError
        If an option is unknown (the message lists those accepted) or a value is out of range.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> yarn_hf_untruncated(omega(16), 4, 32).factors.round(3)[:2]
    array([1.  , 0.47])
    """
    _check_untruncated_options(options)
    theta, kappa, L = _check(theta, kappa, L)
    return _yarn_hf(theta, kappa, L, truncate=False, **options)


def _yarn_hf_untruncated(theta: np.ndarray, kappa: float, L: int, **options: Any) -> Extension:
    """The core of :func:`yarn_hf_untruncated`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    _check_untruncated_options(options)
    return _yarn_hf(theta, kappa, L, truncate=False, **options)


def _check_untruncated_options(options: dict) -> None:
    """Refuse ``truncate`` and any option :func:`yarn_hf_untruncated` does not pass on."""
    if "truncate" in options:
        raise PosKernelsError("yarn_hf_untruncated fixes truncate=False; use yarn_hf to choose it")
    accepted = ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor")
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise PosKernelsError(
            f"extension map 'yarn_hf_untruncated' takes no option {unknown[0]!r}; "
            f"accepted options: {', '.join(accepted)}"
        )
