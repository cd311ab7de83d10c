"""The article's context-extension maps for RoPE (Definition 5): PI, NTK-aware, YaRN, and ``none``.

Every map has the registry's signature ``map(theta, kappa, L, **options) -> Extension`` and conventions
(frequencies ``theta`` of shape ``(d/2,)`` replaced by ``inv_freq``, transformers' ``attention_factor``); see
:mod:`poskernels.extension`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_finite_result,
    check_frequencies,
    check_kappa,
    check_length,
    check_positive_real,
    check_real,
)

__all__ = [
    "ARTICLE_MAPS",
    "Extension",
    "MapFn",
    "ntk_aware",
    "position_interpolation",
    "yarn",
    "yarn_ramp_turns",
]


@dataclass(frozen=True)
class Extension:
    """Result of a context-extension map.

    Attributes
    ----------
    name : str
        The map's registry key.
    inv_freq : ndarray, shape (d/2,)
        Per-plane frequencies to use with integer positions.
    attention_factor : float
        Multiplier on cos and sin (Hugging Face convention); the score is multiplied by its square.
    theta : ndarray, shape (d/2,)
        The trained frequencies the map started from.
    """

    name: str
    inv_freq: np.ndarray
    attention_factor: float
    theta: np.ndarray = field(repr=False)

    def __post_init__(self):
        # An absurd kappa or factor underflows the frequencies to 0 (or overflows them): refuse, never return them.
        f = np.asarray(self.inv_freq, dtype=float)
        if f.size == 0 or not np.all(np.isfinite(f)) or np.any(f <= 0) or np.any(f / self.theta <= 1e-300):
            raise PosKernelsError(
                f"extension map {self.name!r} gives frequencies that are not finite and positive "
                f"(min {float(np.min(f)) if f.size else 'none'!r}); its kappa or factor is too large for float64"
            )
        a = self.attention_factor
        check_real(f"extension map {self.name!r}: the attention factor", a, 0, open_lo=True)

    @property
    def factors(self) -> np.ndarray:
        """Per-plane factor ``inv_freq / theta`` (1 = unchanged, ``1/kappa`` = interpolated)."""
        return self.inv_freq / self.theta

    @property
    def logit_scale(self) -> float:
        """Multiplier on the attention logits, ``attention_factor**2``."""
        return self.attention_factor**2


def _check_theta(theta) -> np.ndarray:
    if type(theta).__module__.startswith("torch"):  # a model's inv_freq buffer: its values, in float64, any device
        theta = theta.detach().cpu().double().numpy()
    return check_frequencies("theta", theta)


def _check(theta, kappa, L):
    return _check_theta(theta), check_kappa(kappa), check_length("the training length L", L)


def _check_factor(name: str, value, minimum: float = 1.0) -> float:
    value = check_positive_real(name, value)
    if value < minimum:
        raise PosKernelsError(f"{name} must be >= {minimum:g}; got {value!r}")
    return value


def _check_turns(name: str, value) -> float:
    try:
        return check_real(name, value)
    except PosKernelsError:
        raise PosKernelsError(f"YaRN's {name} must be a finite real number of turns; got {value!r}") from None


def position_interpolation(theta: ArrayLike, kappa: float, L: int) -> Extension:
    """Position interpolation (Chen et al. 2023): ``m -> m/kappa`` in every plane.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``, positive.
    kappa : float
        The extension factor (target length over ``L``), at least 1.
    L : int
        The training length.

    Returns
    -------
    Extension
        The new frequencies ``inv_freq``, their ``factors`` on ``theta`` and the ``logit_scale`` (1).

    Examples
    --------
    >>> position_interpolation(np.array([1.0, 0.1]), 4, 32).factors
    array([0.25, 0.25])
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _position_interpolation(theta, kappa, L)


def _position_interpolation(theta: np.ndarray, kappa: float, L: int) -> Extension:
    """The core of :func:`position_interpolation`: trusts `theta`, `kappa` and `L` (checked once)."""
    return Extension("pi", theta / kappa, 1.0, theta)


def ntk_aware(theta: ArrayLike, kappa: float, L: int) -> Extension:
    """NTK-aware scaling (bloc97 2023): base ``b -> b * kappa**(d/(d-2))``.

    Theorem 5 (iii): plane ``j`` gets ``theta_j * kappa**(-2j/(d-2))``, so plane 0 is unchanged and
    the slowest plane is divided by exactly ``kappa``.  The base is recovered from ``theta`` as
    ``theta_1**(-d/2)``; only ``theta``'s geometric form is used.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``, positive.
    kappa : float
        The extension factor (target length over ``L``), at least 1.
    L : int
        The training length.

    Returns
    -------
    Extension
        The new frequencies ``inv_freq``, their ``factors`` on ``theta`` and the ``logit_scale`` (1).

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> ntk_aware(omega(16), 4, 32).factors.round(3)
    array([1.   , 0.82 , 0.673, 0.552, 0.453, 0.371, 0.305, 0.25 ])
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _ntk_aware(theta, kappa, L)


def _ntk_aware(theta: np.ndarray, kappa: float, L: int) -> Extension:
    """The core of :func:`ntk_aware`: trusts `theta`, `kappa` and `L` (checked once)."""
    half = theta.size
    d = 2 * half
    if half < 2:
        raise PosKernelsError(f"NTK-aware scaling needs d >= 4 (two planes); got d = {d}")
    j = np.arange(half)
    return Extension("ntk", theta * kappa ** (-2.0 * j / (d - 2)), 1.0, theta)


def yarn_ramp_turns(theta: ArrayLike, L: int, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    """YaRN's ramp ``gamma_j`` as the paper and the article define it (Definition 5): linear in turns per window.

    ``gamma_j`` rises linearly from 0 to 1 as ``L / lambda_j`` (turns of plane ``j`` within the
    training length; ``lambda_j = 2 pi / theta_j``) goes from ``alpha`` to ``beta``.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``.
    L : int
        The training length.
    alpha, beta : float, optional
        The turns at which the ramp starts and ends, ``alpha < beta``; default 1 and 32 (the paper's).

    Returns
    -------
    ndarray, shape (d/2,)
        ``gamma_j`` in ``[0, 1]``: the weight on the trained frequency (1 keeps ``theta_j``, 0 divides it by
        ``kappa``).

    Raises
    ------
    PosKernelsError
        If `theta` is not a 1-d array of positive frequencies, `L` not a positive integer or ``alpha < beta`` fails.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> yarn_ramp_turns(omega(16), 32)[:3].round(4)
    array([0.132 , 0.0197, 0.    ])
    """
    theta = _check_theta(theta)
    L = check_length("the training length L", L)
    return _yarn_ramp_turns(theta, L, alpha, beta)


def _yarn_ramp_turns(theta: np.ndarray, L: int, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    """:func:`yarn_ramp_turns` on `theta` and `L` checked once (trusted); checks `alpha` and `beta`."""
    alpha, beta = _check_turns("alpha", alpha), _check_turns("beta", beta)
    if not beta > alpha:
        raise PosKernelsError(f"YaRN needs beta > alpha; got alpha = {alpha!r}, beta = {beta!r}")
    check_finite_result(
        "the ramp's width beta - alpha", beta - alpha, "alpha and beta within 1.8e308", alpha=alpha, beta=beta
    )
    return _ramp_by_turns(theta, L, alpha, beta)


def _ramp_by_turns(theta: np.ndarray, L: int, alpha: float, beta: float) -> np.ndarray:
    """The ramp of :func:`yarn_ramp_turns` on arguments it trusts (``alpha < beta``, both finite)."""
    with np.errstate(over="ignore"):  # turns past float64's largest are past beta too: inf, and gamma_j = 1, is right
        turns = L * theta / (2 * math.pi)  # (d/2,)  L / lambda_j
        return np.clip((turns - alpha) / (beta - alpha), 0.0, 1.0)


def yarn(theta: ArrayLike, kappa: float, L: int, alpha: float = 1.0, beta: float = 32.0) -> Extension:
    """YaRN (Peng et al. 2024) as Definition 5 states it.

    Plane ``j`` gets ``(1 - gamma_j) theta_j / kappa + gamma_j theta_j`` with ``gamma_j`` from
    :func:`yarn_ramp_turns`, and the scores are multiplied by ``(0.1 ln kappa + 1)**2``.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``, positive.
    kappa : float
        The extension factor (target length over ``L``), at least 1.
    L : int
        The training length.
    alpha, beta : float, optional
        The ramp's ends in turns within ``L``: a plane turning fewer than ``alpha`` times is interpolated, more
        than ``beta`` times kept (Definition 5's 1 and 32).

    Returns
    -------
    Extension
        The new frequencies ``inv_freq``, their ``factors`` on ``theta`` and the ``logit_scale``
        ``(0.1 ln kappa + 1)**2``.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> e = yarn(omega(16), 4, 32)
    >>> e.factors.round(3)
    array([0.349, 0.265, 0.25 , 0.25 , 0.25 , 0.25 , 0.25 , 0.25 ])
    >>> round(e.logit_scale, 4)
    1.2965
    """
    theta, kappa, L = _check(theta, kappa, L)
    return _yarn(theta, kappa, L, alpha=alpha, beta=beta)


def _yarn(theta: np.ndarray, kappa: float, L: int, alpha: float = 1.0, beta: float = 32.0) -> Extension:
    """The core of :func:`yarn`: trusts `theta`, `kappa` and `L` (checked once); checks its options."""
    gamma = _yarn_ramp_turns(theta, L, alpha, beta)  # (d/2,)
    inv_freq = (1 - gamma) * theta / kappa + gamma * theta
    return Extension("yarn", inv_freq, 0.1 * math.log(kappa) + 1.0, theta)  # kappa is finite: log is too


def _identity(theta, kappa, L) -> Extension:
    theta, kappa, L = _check(theta, kappa, L)
    return _identity_core(theta, kappa, L)


def _identity_core(theta, kappa, L) -> Extension:
    """The core of the ``none`` map: trusts `theta`, `kappa` and `L` (checked once)."""
    return Extension("none", theta.copy(), 1.0, theta)


MapFn = Callable[..., Extension]

#: Definition 5's maps, by name; ``none`` reads the head as trained.  :data:`poskernels.extension.MAPS` joins
#: them with the ecosystem's.
ARTICLE_MAPS: dict[str, MapFn] = {
    "none": _identity,
    "pi": position_interpolation,
    "ntk": ntk_aware,
    "yarn": yarn,
}
