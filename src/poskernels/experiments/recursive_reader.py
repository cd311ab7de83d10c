"""The one-pass filing reader as a recursive filter, for a head whose weights decay exponentially in the offset.

Without a code or a rotation a head's query vector is the same at every position, ``q = E[QUERY] W_Q``, so key
``j``'s content score ``c(x_j)`` does not depend on the question.  With a bias exactly ``-s r`` and a logit scale of
1 (ALiBi; ``s = 0`` without position) key ``j``'s weight in question ``t`` is ``e^{c(x_j)} rho^{t + 1 - j}`` with
``rho = e^{-s}`` (Theorem 3 (i): a content kernel times an exponential kernel in time), so the weighted sums over
``j <= t`` obey ``y_t = rho (y_{t-1} + e^{c(x_t)} v_t)``: a first-order recursive filter, one ``O(n d)`` pass over
the filing.  :func:`recursive_decay` says which heads it applies to;
:func:`~poskernels.experiments.filings_reader.read_filing` reads them this way unless asked for the score matrix.
"""

from __future__ import annotations

import math

import numpy as np

from ..encodings import SCHEMES
from ..model.config import HeadConfig
from ..model.head import token_table
from ..model.reading import PLAIN
from ..model.score import score
from ..tasks.filings.tokens import QUERY

__all__ = ["recursive_decay"]


def recursive_decay(cfg: HeadConfig) -> float | None:
    """The decay ``rho = e^{-s}`` per position of offset of a head whose one-pass reading is a recursive filter.

    A head whose bias is exactly ``-s r`` (the scheme's ``linear_slope``: ALiBi's ``s``, 0 without position) and
    whose logit scale is 1 (Theorem 3 (i): the exponential kernel ``e^{-s r}``); None for any other.

    Parameters
    ----------
    cfg : HeadConfig
        The head.

    Returns
    -------
    float or None
        ``rho = e^{-s}`` (1 without position); None when the reading is not a fixed filter.

    Examples
    --------
    >>> round(recursive_decay(HeadConfig(scheme="alibi")), 4)  # ALiBi's default slope 0.5: e^{-0.5}
    0.6065
    >>> recursive_decay(HeadConfig(scheme="nope")), recursive_decay(HeadConfig(scheme="rope"))
    (1.0, None)
    """
    scheme = SCHEMES[cfg.scheme]
    if scheme.scale_grows:  # a logit scale s log n changes with every new key: no fixed filter
        return None
    s = scheme.linear_slope(cfg)
    return None if s is None or scheme.logit_scale(cfg, PLAIN) != 1.0 else math.exp(-s)


def _read_recursive(params: dict, cfg: HeadConfig, ids: np.ndarray, rho: float) -> np.ndarray:
    """The one-pass reader as a recursive filter (see :func:`~poskernels.experiments.filings_reader.read_filing`'s
    Notes), shape (n, C)."""
    E = token_table(params, cfg)  # (V, d)
    q = E[QUERY] @ params["W_Q"]  # (d,) the query vector, the same at every position
    c = score(params, cfg, q[None], [0.0], E @ params["W_K"], np.zeros(len(E)))[0]  # (V,) each token's key at offset 0
    w = np.exp(c - c.max())  # (V,) content kernel, shifted so the largest is 1
    EV = E @ params["W_V"]  # (V, d) value of each token
    x = w[ids][:, None] * EV[ids]  # (n, d) weighted values
    from scipy.signal import lfilter  # imported here: scipy.signal pulls scipy.stats, ~1 s at start-up

    num = lfilter([rho], [1.0, -rho], x, axis=0)  # (n, d): sum_{j <= t} w_j rho^(t+1-j) v_j
    den = lfilter([rho], [1.0, -rho], w[ids])  # (n,)
    num += w[QUERY] * EV[QUERY]  # the query's own key, offset 0
    den += w[QUERY]
    return (num / den[:, None]) @ params["W_O"]  # (n, C)
