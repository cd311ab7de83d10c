"""Why a relative head fails past its window: the RoPE head's score against offset (the rebound).

By Proposition 3 (iii), the score a trained RoPE head gives a key ``k`` at offset ``r`` behind its
query ``q`` is the trigonometric polynomial ``s(Delta) = sum_j rho_j cos(Delta theta_j + phi_j)`` read
at ``Delta = -r`` (a causal head looks back), divided by ``tau``.  Training pins it on offsets
``0..L-1`` only.  We read it for the query token against the mean key of the marked tokens (the
score is linear in ``k``, so this is the mean of the eight marked symbols' curves).  It is the head's one score
(:func:`poskernels.model.score.score`) written as a polynomial in the offset, which locates troughs and peaks and
names each plane's amplitude; ``tests/test_score.py`` checks the two agree.
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError
from ..model.head import PLAIN, Reading, token_table
from ..model.reading import frequencies
from ..model.train import TrainedHead
from ..tasks.registry import layout_of
from ..theory.rope import TrigPolynomial, rope_offset_score
from .curves import SCORE_LENGTH, marked_key_scores

__all__ = [
    "MAX_OFFSET",
    "marked_key_polynomial",
    "offset_scores",
    "rebound_height",
    "rebound_summary",
    "score_curve",
    "window_fall",
]

MAX_OFFSET = 255  # the longest test sequence reaches offset 255


def marked_key_polynomial(head: TrainedHead, query=None, keys=None, reading: Reading | None = None) -> TrigPolynomial:
    """Proposition 3 (iii) for a trained RoPE head: ``<q, R_theta(Delta) k>`` with ``q`` of the query token.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    query : int, optional
        Query token (default the query of the head's task, :func:`poskernels.tasks.registry.layout_of`: the cue
        task's 16).
    keys : sequence of int, optional
        Key tokens whose mean key is used (default the task's cues: the cue task's eight marked symbols).
    reading : Reading, optional
        Frequencies to read with (default the trained ``theta``).

    Returns
    -------
    TrigPolynomial
        Amplitudes ``rho_j = |q_j| |k_j|`` and phases; evaluate at ``-r`` and divide by ``tau``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary (RoPE and its variants).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> marked_key_polynomial(head).rho.shape  # one amplitude per plane of d = 16
    (8,)
    >>> alibi = train(TrainConfig(head=HeadConfig(scheme="alibi"), steps=1, batch=8), seed=0)
    >>> marked_key_polynomial(alibi)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the offset score of Proposition 3 needs a RoPE head; got 'alibi'
    """
    cfg, p = head.head, head.params
    if not SCHEMES[cfg.scheme].rotary:
        raise PosKernelsError(f"the offset score of Proposition 3 needs a RoPE head; got {cfg.scheme!r}")
    layout = layout_of(head.config.task)
    query = layout.query if query is None else int(query)
    keys = np.asarray(layout.cues if keys is None else keys)
    T = token_table(p, cfg)  # (V, d) the embedding of every token
    q = T[query] @ p["W_Q"]  # (d,)
    k = (T[keys] @ p["W_K"]).mean(axis=0)  # (d,) mean marked key
    return rope_offset_score(q, k, frequencies(cfg, PLAIN if reading is None else reading))


def offset_scores(head: TrainedHead, max_offset: int = MAX_OFFSET) -> np.ndarray:
    """The score ``s(-r) / tau`` of a marked key at offsets ``r = 0..max_offset``.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    max_offset : int, optional
        The last offset read (default :data:`MAX_OFFSET`, 255: the longest test sequence's).

    Returns
    -------
    ndarray, shape (max_offset + 1,)

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary (RoPE and its variants).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> offset_scores(head, 40).shape
    (41,)
    """
    poly = marked_key_polynomial(head)
    r = np.arange(max_offset + 1)  # (R,)
    return poly(-r) / head.head.tau


def rebound_summary(head: TrainedHead, max_offset: int = MAX_OFFSET) -> dict:
    """The landmarks of the rebound for one head.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    max_offset : int, optional
        The last offset read (default :data:`MAX_OFFSET`, 255: the longest test sequence's).

    Returns
    -------
    dict
        ``score_r1``, ``score_r31`` (the window's edge ``L - 1``), ``first_trough`` ``[r, score]`` (the first
        local minimum at ``r >= 1``, else the minimum), ``deepest`` ``[r, score]`` (the minimum over
        ``0..max_offset``), ``peak`` ``[r, score]`` (the maximum past the window, ``r >= L``), ``amplitudes``
        (``rho_j / tau`` per plane), ``top_plane`` (the plane with the largest amplitude) and ``curve`` (the score
        at every offset ``0..max_offset``, the curve the landmarks are read off).

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary (RoPE and its variants).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> summary = rebound_summary(head, 40)
    >>> sorted(summary)
    ['amplitudes', 'curve', 'deepest', 'first_trough', 'peak', 'score_r1', 'score_r31', 'top_plane']
    >>> len(summary["curve"]), len(summary["amplitudes"])
    (41, 8)
    """
    s = offset_scores(head, max_offset)  # (R,)
    L = head.head.n_train
    interior = np.flatnonzero((s[1:-1] <= s[:-2]) & (s[1:-1] < s[2:])) + 1  # local minima at r = 1..R-2
    trough = int(interior[0]) if interior.size else int(np.argmin(s))
    deepest = int(np.argmin(s))
    peak = L + int(np.argmax(s[L:]))
    rho = marked_key_polynomial(head).rho / head.head.tau  # (P,)
    return {
        "score_r1": float(s[1]),
        f"score_r{L - 1}": float(s[L - 1]),
        "first_trough": [trough, float(s[trough])],
        "deepest": [deepest, float(s[deepest])],
        "peak": [peak, float(s[peak])],
        "amplitudes": rho.tolist(),
        "top_plane": int(np.argmax(rho)),
        "curve": s.tolist(),
    }


def score_curve(head: TrainedHead, max_offset: int = MAX_OFFSET) -> np.ndarray:
    """Any rotary head's score of a marked key at offsets ``r = 0..max_offset`` (its kernel as trained).

    Read through the head's one score (:func:`poskernels.experiments.curves.marked_key_scores`) with the query at
    the end of a 256-token sequence, so a decaying rotation (xPos) is read as the head computes it; for RoPE it is
    :func:`offset_scores` (Proposition 3 (iii)), the same numbers.

    Parameters
    ----------
    head : TrainedHead
        A trained head.
    max_offset : int, optional
        The last offset read (default :data:`MAX_OFFSET`, 255).

    Returns
    -------
    ndarray, shape (max_offset + 1,)

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> bool(np.allclose(score_curve(head, 40), offset_scores(head, 40)))
    True
    """
    t = float(max(SCORE_LENGTH, max_offset + 1) - 1)
    r = np.arange(max_offset + 1, dtype=float)  # (R,)
    return marked_key_scores(head, np.full(r.size, t), t - r)


def rebound_height(curve, n_train: int) -> float:
    """How far the score climbs back past the window: ``max_{r >= L} s(r) - s(L - 1)``.

    Positive when some key past the training window outscores a key at the window's edge (the article's rebound:
    "a cue 181 positions back outscores a recent one"); the constant of a channel that does not turn cancels.

    Parameters
    ----------
    curve : array_like, shape (R,)
        The score at offsets ``0..R-1`` (:func:`score_curve`).
    n_train : int
        The training window ``L``, ``1 <= L < R``.

    Returns
    -------
    float
        ``max_{r >= L} s(r) - s(L - 1)``.

    Raises
    ------
    PosKernelsError
        If the curve does not reach past the window.

    Examples
    --------
    >>> rebound_height([5.0, 3.0, 1.0, 0.5, 2.5], 3)
    1.5
    >>> rebound_height([5.0, 3.0, 1.0, 0.5, 0.2], 3)  # a score that keeps falling does not rebound
    -0.5
    >>> rebound_height([1.0, 2.0], 3)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the curve must reach past the window (L = 3); got 2 offsets
    """
    s = np.asarray(curve, dtype=float)
    L = int(n_train)
    if not 1 <= L < s.size:
        raise PosKernelsError(f"the curve must reach past the window (L = {L}); got {s.size} offsets")
    return float(s[L:].max() - s[L - 1])


def window_fall(curve, n_train: int) -> float:
    """How far the score falls across the window, ``s(0) - s(L - 1)``: the scale :func:`rebound_height` is read on.

    Parameters
    ----------
    curve : array_like, shape (R,)
        The score at offsets ``0..R-1`` (:func:`score_curve`).
    n_train : int
        The training window ``L``, ``1 <= L <= R``.

    Returns
    -------
    float
        ``s(0) - s(L - 1)``.

    Raises
    ------
    PosKernelsError
        If the curve does not reach the window's edge.

    Examples
    --------
    >>> window_fall([5.0, 3.0, 1.0, 0.5, 2.5], 3)
    4.0
    >>> window_fall([1.0], 3)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the curve must reach the window's edge (L = 3); got 1 offsets
    """
    s = np.asarray(curve, dtype=float)
    L = int(n_train)
    if not 1 <= L <= s.size:
        raise PosKernelsError(f"the curve must reach the window's edge (L = {L}); got {s.size} offsets")
    return float(s[0] - s[L - 1])
