"""How far the reference code's YaRN ramp (:mod:`poskernels.extension.yarn_reference`) departs from the article's.

Write ``t_j = L theta_j / (2 pi)`` for the turns plane ``j`` makes in the training window and ``gamma_j``
for the weight on the trained frequency (1 = kept, 0 = divided by ``kappa``).  The paper and the article
take ``gamma_j = (t_j - 1)/31`` on ``1 <= t_j <= 32``.  The reference code takes ``gamma_j = u_j``, linear
in ``j``; since ``t_j`` is geometric in ``j``, ``t_j = 32**u_j``, so on the ramp the article's weight is
``(32**u - 1)/31 <= u``.  The reference ramp keeps more of each middle plane's trained frequency; without
truncation the gap peaks at ``u* = log_32(31 / ln 32)`` (``t = 8.9`` turns) with the value
:func:`yarn_ramp_gap_max` ``= 0.376`` (independent of the model), a factor gap of ``0.376 (1 - 1/kappa)``.
Truncation moves both ramp ends outward to whole planes and changes the figure per model (0.356 to 0.373
on the bundled configs at ``kappa = 4``; on Llama 2 it also interpolates a plane the article keeps, by 0.03);
the census prints it per config (see :func:`compare_yarn_ramps`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import check_bool
from .article import _check, _ramp_by_turns
from .yarn_reference import _yarn_ramp_index

__all__ = ["compare_yarn_ramps", "yarn_ramp_gap_max"]


def yarn_ramp_gap_max() -> float:
    """The largest gap between the reference and the article's YaRN weights, untruncated and dense planes.

    ``max_u [u - (32**u - 1)/31] = log_32(31 / ln 32) - (31 / ln 32 - 1)/31``, at ``t = 31 / ln 32`` turns.

    Returns
    -------
    float
        The largest gap in the weight on the trained frequency.

    Examples
    --------
    >>> round(yarn_ramp_gap_max(), 4)
    0.3759
    """
    t = 31 / math.log(32)  # turns at the widest gap
    return math.log(t) / math.log(32) - (t - 1) / 31


def compare_yarn_ramps(theta: ArrayLike, kappa: float, L: int, truncate: bool = True) -> dict:
    """Where and by how much the reference YaRN (:func:`yarn_hf`) departs from the article's (Definition 5).

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies.
    kappa : float
        The extension ratio, at least 1.
    L : int
        The training length.
    truncate : bool, optional
        Whether the reference ramp's ends are floored and ceiled, as transformers does by default; default True.

    Returns
    -------
    dict
        ``gamma_article``, ``gamma_reference`` (lists, one per plane), ``max_gap`` (largest
        ``|gamma_ref - gamma_article|``), ``plane`` (where), ``factor_gap`` (the same gap in per-plane factor,
        ``max_gap (1 - 1/kappa)``), ``planes_differing`` (count with a gap above ``1e-9``).

    Raises
    ------
    PosKernelsError
        If `theta` is not positive frequencies, `kappa` below 1 or `L` not a positive integer.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> c = compare_yarn_ramps(omega(128, 1e6), 4, 32768)
    >>> round(c["max_gap"], 3), c["plane"], c["planes_differing"]
    (0.361, 30, 16)
    """
    theta, kappa, L = _check(theta, kappa, L)
    return compare_yarn_ramps_core(theta, kappa, L, check_bool("truncate", truncate))


def compare_yarn_ramps_core(theta: np.ndarray, kappa: float, L: int, truncate: bool = True) -> dict:
    """:func:`compare_yarn_ramps` on arguments checked once: trusts all of them (a core shared with the census).

    The census checks `theta`, `kappa` and `L` once (:func:`poskernels.extension.map_arguments`) and compares the
    truncated and untruncated ramps through this core; not in ``__all__``.

    Parameters
    ----------
    theta : ndarray, shape (d/2,)
        Checked float64 frequencies.
    kappa : float
        The checked extension ratio.
    L : int
        The checked training length.
    truncate : bool, optional
        Whether the reference ramp's ends are floored and ceiled; default True.

    Returns
    -------
    dict
        As :func:`compare_yarn_ramps` returns it.

    Examples
    --------
    >>> from poskernels.extension import map_arguments
    >>> from poskernels.encodings import omega
    >>> c = compare_yarn_ramps_core(*map_arguments(omega(128, 1e6), 4, 32768))
    >>> round(c["max_gap"], 3), c["plane"]
    (0.361, 30)
    """
    g_art = _ramp_by_turns(theta, L, 1.0, 32.0)  # (d/2,)  the paper's alpha = 1, beta = 32
    g_ref = _yarn_ramp_index(theta, L, 32.0, 1.0, truncate)  # (d/2,)  yarn_ramp_index's defaults
    gap = np.abs(g_ref - g_art)  # (d/2,)
    j = int(np.argmax(gap))
    return {
        "gamma_article": g_art.tolist(),
        "gamma_reference": g_ref.tolist(),
        "max_gap": float(gap[j]),
        "plane": j,
        "factor_gap": float(gap[j] * (1 - 1 / kappa)),
        "planes_differing": int(np.sum(gap > 1e-9)),
    }
