"""How a trained head is read, and the checks of what it reads: tokens, positions, frequencies.

A :class:`Reading` carries the per-plane frequencies and logit scale a RoPE head is read with
(Definition 5's maps); :data:`PLAIN` reads a head as trained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..encodings import SCHEMES, default_positions, omega
from ..errors import PosKernelsError
from ..extension import extend
from .config import HeadConfig
from .validate import check_positions

__all__ = ["PLAIN", "Reading", "check_tokens", "frequencies", "read_positions"]


@dataclass(frozen=True)
class Reading:
    """How a trained RoPE head is read: per-plane frequencies and a logit scale (Definition 5).

    Attributes
    ----------
    inv_freq : ndarray of shape (d/2,) or None
        Frequencies replacing ``theta = omega(d, b)``; None reads the head as trained.
    logit_scale : float
        Multiplier on ``<q, k> / tau`` (YaRN's ``(0.1 ln kappa + 1)**2``).

    Examples
    --------
    >>> from poskernels.extension import extend
    >>> from poskernels.encodings import omega
    >>> r = Reading.from_extension(extend("yarn", omega(16), 4, 32))
    >>> round(r.logit_scale, 4), r.inv_freq.shape
    (1.2965, (8,))
    """

    inv_freq: np.ndarray | None = None
    logit_scale: float = 1.0

    @classmethod
    def from_extension(cls, ext) -> Reading:
        """The reading of a :class:`poskernels.extension.Extension`."""
        return cls(np.asarray(ext.inv_freq, dtype=float), float(ext.logit_scale))

    @classmethod
    def through(cls, cfg: HeadConfig, name: str, kappa: float) -> Reading:
        """A RoPE head of ``cfg`` read through the map ``name`` at ``kappa`` (Definition 5), from its ``omega(d, b)``.

        >>> r = Reading.through(HeadConfig(scheme="rope"), "pi", 4.0)
        >>> (r.inv_freq / omega(16)).round(4).tolist()[:2], r.logit_scale
        ([0.25, 0.25], 1.0)
        """
        return cls.from_extension(extend(name, omega(cfg.d, cfg.base), kappa, cfg.n_train))

    @property
    def is_plain(self) -> bool:
        return self.inv_freq is None and self.logit_scale == 1.0


PLAIN = Reading()


def check_tokens(cfg: HeadConfig, tokens) -> np.ndarray:
    """``tokens`` as a 2-d integer array ``(B, n)`` of ids in ``[0, V)``, else :class:`PosKernelsError`.

    Parameters
    ----------
    cfg : HeadConfig
        The head (its vocabulary ``V``).
    tokens : array_like of int
        Token ids, shape ``(B, n)``.

    Returns
    -------
    ndarray of int, shape (B, n)
        The tokens.

    Raises
    ------
    PosKernelsError
        If ``tokens`` is not a 2-d integer array, or an id lies outside ``[0, V)``.

    Examples
    --------
    >>> check_tokens(HeadConfig(), [[0, 16]]).tolist()
    [[0, 16]]
    >>> check_tokens(HeadConfig(), [[0, 17]])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: token ids must lie in [0, 16]; got 0..17
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.shape[1] < 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise PosKernelsError(f"tokens must be a 2-d integer array (batch, n); got {tokens.dtype} {tokens.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= cfg.vocab):
        raise PosKernelsError(f"token ids must lie in [0, {cfg.vocab - 1}]; got {tokens.min()}..{tokens.max()}")
    return tokens


def read_positions(positions, n: int) -> np.ndarray:
    """The positions of ``n`` columns: ``0..n-1`` (one shared read-only array) or the given ones, checked.

    Parameters
    ----------
    positions : array_like or None
        One position per column, or None.
    n : int
        Columns.

    Returns
    -------
    ndarray of float64, shape (n,)
        The positions.

    Raises
    ------
    PosKernelsError
        If a given position is not finite, or there are not ``n``.

    Examples
    --------
    >>> read_positions(None, 4).tolist(), read_positions([0, 2, 4], 3).tolist()
    ([0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 4.0])
    """
    if positions is None:
        return default_positions(n)
    return check_positions(positions, n)  # finite, shape (n,)


def frequencies(cfg: HeadConfig, reading: Reading = PLAIN) -> np.ndarray | None:
    """The scheme's transform as per-plane frequencies ``(d/2,)`` (complex: a rotation with decay), or None.

    A reading with frequencies or a logit scale of its own applies to a head that turns (Definition 5's maps).

    Parameters
    ----------
    cfg : HeadConfig
        The head.
    reading : Reading
        How it is read; :data:`PLAIN` by default.

    Returns
    -------
    ndarray of shape (d/2,) or None
        The frequencies (complex for a rotation with decay), None for a scheme that does not turn.

    Raises
    ------
    PosKernelsError
        If a rescaled reading is given to a head that does not turn, or the frequencies are not ``(d/2,)``.

    Examples
    --------
    >>> frequencies(HeadConfig(scheme="rope")).shape, frequencies(HeadConfig(scheme="alibi"))
    ((8,), None)
    """
    theta = SCHEMES[cfg.scheme].transform(cfg, reading)
    if theta is None:
        if not reading.is_plain:
            raise PosKernelsError(f"a rescaled reading applies to rotary heads only; this head is {cfg.scheme!r}")
        return None
    theta = np.asarray(theta)
    if theta.shape != (cfg.d // 2,) or theta.dtype.kind not in "fiuc":
        what = "inv_freq" if reading.inv_freq is not None else f"the frequencies of scheme {cfg.scheme!r}"
        raise PosKernelsError(f"{what} must have shape ({cfg.d // 2},); got {theta.shape}")
    return theta if np.iscomplexobj(theta) else np.asarray(theta, dtype=float)
