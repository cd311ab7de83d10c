"""What the long readings say about the heads that cut their past: ALiBi's horizon and a learned tail's cut.

For each ALiBi head, its content width ``W`` and horizon ``W / s`` (Theorem 3 (iii)), its certified cut at
:data:`EPS` and its mean accuracy at the needle's offsets inside half the horizon and beyond twice it
(:func:`horizon_rows`); for each head cut by its learned tail (Kerple's ``tail_bound``), its width, its cut and the
numbers its tail reads (:func:`tail_cut_rows`).  The long-context reading
(:mod:`poskernels.experiments.long_context`) reads every head back to these cuts.
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES
from ..model.engine.cut import HeavyTail, certified_cut, has_cut
from ..tasks.cue import N_SYMBOLS, query_token

__all__ = ["EPS", "horizon_rows", "tail_cut_rows"]

EPS = 1e-12  # ALiBi's certified cut: the weight it drops, at most


def horizon_rows(alibi_heads, distance: dict) -> dict:
    """Theorem 3 (iii) for each ALiBi head: ``W``, the horizon ``W / s``, the cut ``D``, and accuracy by region.

    ``inside_half`` is the head's mean accuracy over the offsets ``r <= W / (2 s)``, ``beyond_twice`` over
    ``r > 2 W / s`` (None where the grid has no such offset).

    Parameters
    ----------
    alibi_heads : sequence of TrainedHead
        ALiBi heads, in seed order.
    distance : dict
        ``{str(r): read_point(...)}`` of the distance task: ``distance[str(r)]["alibi"][k]`` is head ``k``'s
        accuracy at offset ``r``.

    Returns
    -------
    dict
        ``{str(seed): {"W", "horizon", "cut_D", "inside_half", "beyond_twice"}}``, the content width, the horizon
        ``W / s``, the certified cut at :data:`EPS` (:func:`poskernels.model.engine.cut.certified_cut`) and the two
        mean accuracies.

    Examples
    --------
    >>> from poskernels.experiments.long_context import read_point
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> alibi = train(TrainConfig(head=HeadConfig(scheme="alibi"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> distance = {str(r): read_point({"alibi": [alibi]}, "distance", r, count=20) for r in (1, 64)}
    >>> row = horizon_rows([alibi], distance)["0"]
    >>> sorted(row), row["cut_D"], row["inside_half"]
    (['W', 'beyond_twice', 'cut_D', 'horizon', 'inside_half'], 57, None)
    """
    offsets = [int(r) for r in distance]
    rows = {}
    for k, h in enumerate(alibi_heads):
        cut = certified_cut(h.params, h.head, [query_token(N_SYMBOLS)], EPS)
        horizon = cut.W / cut.s
        acc = [distance[str(r)]["alibi"][k] for r in offsets]
        inside = [a for r, a in zip(offsets, acc) if r <= horizon / 2]
        beyond = [a for r, a in zip(offsets, acc) if r > 2 * horizon]
        rows[str(h.seed)] = {
            "W": cut.W,
            "horizon": horizon,
            "cut_D": cut.D,
            "inside_half": float(np.mean(inside)) if inside else None,
            "beyond_twice": float(np.mean(beyond)) if beyond else None,
        }
    return rows


def tail_cut_rows(heads) -> dict:
    """For each head cut by its learned tail (its scheme's ``tail_bound``: Kerple's): its content width ``W``, its
    certified cut ``D`` at :data:`EPS` (None: a heavy tail, read in full) and the learned numbers its tail reads
    (its scheme's ``tail_parameters``: Kerple's ``r1`` and ``r2``).

    ``{scheme: {seed: {"r1", "r2", "W", "cut_D"}}}`` for Kerple.

    Parameters
    ----------
    heads : iterable of TrainedHead
        Heads of any scheme; those without a learned tail bound (or with a linear slope, ALiBi's) are passed over.

    Returns
    -------
    dict
        ``{scheme: {str(seed): {"r1", "r2", "W", "cut_D"}}}``.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> tr = lambda s: train(TrainConfig(head=HeadConfig(scheme=s), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> rows = tail_cut_rows([tr("rope"), tr("kerple_power")])
    >>> list(rows), sorted(rows["kerple_power"]["0"]), rows["kerple_power"]["0"]["cut_D"]
    (['kerple_power'], ['W', 'cut_D', 'r1', 'r2'], 50)
    """
    rows: dict = {}
    for h in heads:
        scheme = SCHEMES[h.head.scheme]
        if scheme.linear_slope(h.head) is not None or scheme.tail_bound(h.params, h.head) is None:
            continue
        try:
            cut = certified_cut(h.params, h.head, [query_token(N_SYMBOLS)], EPS) if has_cut(h.params, h.head) else None
        except HeavyTail:  # a finite bound that stays above EPS: no cut, the head is read in full
            cut = None
        row = {**scheme.tail_parameters(h.params), "W": None if cut is None else cut.W}
        row["cut_D"] = None if cut is None else cut.D
        rows.setdefault(h.head.scheme, {})[str(h.seed)] = row
    return rows
