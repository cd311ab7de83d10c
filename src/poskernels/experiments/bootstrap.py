"""The test-draw error of a mean over seeds, from the reads already made: a bootstrap over the test items.

Every seed of a cell is read on the same test items (the tournament's 2,000 sequences per length, the case study's
100 held-out filings), so the standard error over seeds does not see the draw of those items, which every seed
shares.  Resampling the items with replacement, the same resample for every seed, and taking the mean over seeds of
each resample's accuracy, the standard deviation over resamples estimates what another draw of the test set would
move the printed mean by (:func:`draw_sd`).  The items are resampled as the test set was drawn: a tournament
sequence alone, a filing with all its queries (a cluster; its accuracy is then a ratio, correct over asked).

The estimate reads one 0/1 vector per head that the cell's accuracy is the mean of, where re-reading every head on
other draws (:func:`poskernels.experiments.redraws.redraw_sd`) reads each head again per draw; ``benchmarks/
bench_draw_error.py`` sets the two side by side.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["BOOTSTRAP_SEED", "RESAMPLES", "draw_sd", "draw_sd_table", "resample_counts"]

#: Resamples of the test items; the SD of ``B`` resamples has a relative error of about ``1 / sqrt(2 B)`` (2.2%).
RESAMPLES = 1000
#: The resamples are drawn from ``default_rng(SeedSequence([BOOTSTRAP_SEED, items]))``, apart from any other seed.
BOOTSTRAP_SEED = 27_182_818


@lru_cache(maxsize=8)
def resample_counts(items: int, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """How often each of ``items`` test items is drawn in each resample, shape ``(resamples, items)``, float64.

    Each row counts ``items`` draws with replacement of ``items`` equally likely ones (a multinomial; read-only).

    >>> w = resample_counts(5, resamples=3)
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, items]))
    drawn = rng.integers(0, items, size=(resamples, items))  # each resample's items, drawn with replacement
    drawn += items * np.arange(resamples)[:, None]  # (B, items) one bin range per resample
    counts = np.bincount(drawn.ravel(), minlength=resamples * items).reshape(resamples, items).astype(float)
    counts.setflags(write=False)
    return counts


def draw_sd(
    hits, groups=None, items: int | None = None, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> float | None:
    """Bootstrap SD of the mean over heads of their accuracy, the test items resampled for all heads at once.

    Parameters
    ----------
    hits : array_like or None
        ``(S, Q)``: head ``s`` right (1) or wrong (0) on query ``q``; the cell is the mean over heads of each row's
        mean.  A ``None`` row (a head with no reading there) makes the cell ``None``.
    groups : array_like of int, optional
        ``(Q,)``: the test item each query belongs to (a filing's queries), labels ``0..G-1``; the items are
        resampled, each with all its queries.  Default: every query its own item.
    items : int, optional
        How many test items there are (``G``; default ``max(groups) + 1``): an item none of whose queries is
        counted (a filing with no far query) is still drawn, as a new draw of the test set would draw it.

    Returns
    -------
    float or None
        The standard deviation (``ddof=1``) over ``resamples`` resamples of the mean over heads.

    Examples
    --------
    As many resamples as one likes approach the closed form ``sqrt(mean((h - mean h)^2) / Q)`` of the mean over
    heads ``h`` of each query (1,000 resamples read it to about 2%):

    >>> rng = np.random.default_rng(0)
    >>> hits = rng.random((10, 2000)) < 0.7
    >>> h = hits.mean(axis=0)
    >>> round(float(np.sqrt(h.var() / h.size)), 4), round(draw_sd(hits), 4)
    (0.0033, 0.0032)
    >>> draw_sd([None, [1, 0]]) is None
    True
    """
    if hits is None or any(row is None for row in hits):
        return None
    h = np.asarray(hits, dtype=float).mean(axis=0)  # (Q,) the mean over heads of each query
    if groups is None:
        w = resample_counts(h.size, resamples, seed)  # (B, Q)
        return float((w @ h / h.size).std(ddof=1))
    groups = np.asarray(groups)
    n_items = (int(groups.max()) + 1 if groups.size else 0) if items is None else int(items)
    right = np.bincount(groups, weights=h, minlength=n_items)  # (G,) the mean over heads of right answers per item
    asked = np.bincount(groups, minlength=n_items).astype(float)  # (G,) queries per item
    w = resample_counts(n_items, resamples, seed)  # (B, G)
    drawn = w @ asked  # (B,) queries counted in each resample
    kept = drawn > 0  # a resample that draws no counted query has no accuracy (never at the case study's sizes)
    return float(((w @ right)[kept] / drawn[kept]).std(ddof=1))


def draw_sd_table(hits: dict, groups=None) -> dict:
    """:func:`draw_sd` of every cell of ``{row: {column: [hits of each head]}}``, same nesting.

    Without ``groups`` the cells of one test size are resampled in one product (each resample read once for all of
    them); every cell's value is :func:`draw_sd`'s, to rounding.

    Parameters
    ----------
    hits : dict
        ``{row: {column: hits}}``, each ``hits`` as :func:`draw_sd` reads it (``(S, Q)`` 0/1, or ``None``).
    groups : array_like of int, optional
        The test item of each query, as for :func:`draw_sd`, the same for every cell; each cell is then read by
        :func:`draw_sd` apart.  Default: every query its own item.

    Returns
    -------
    dict
        ``{row: {column: SD or None}}``, the rows and columns in the order of ``hits``.

    Examples
    --------
    >>> draw_sd_table({"a": {"32": [[1, 1], [1, 1]], "64": [None, [0, 1]]}})
    {'a': {'32': 0.0, '64': None}}
    """
    if groups is not None:
        return {row: {col: draw_sd(v, groups) for col, v in by.items()} for row, by in hits.items()}
    out: dict = {row: {} for row in hits}
    by_size: dict = {}
    for row, by in hits.items():
        for col, v in by.items():
            if v is None or any(h is None for h in v):
                out[row][col] = None
                continue
            h = np.asarray(v, dtype=float).mean(axis=0)  # (Q,)
            by_size.setdefault(h.size, []).append((row, col, h))
    for size, cells in by_size.items():
        means = resample_counts(size) @ np.stack([h for *_, h in cells], axis=1) / size  # (B, cells)
        for (row, col, _), sd in zip(cells, means.std(axis=0, ddof=1)):
            out[row][col] = float(sd)
    return {row: {col: out[row][col] for col in by} for row, by in hits.items()}  # the columns in their order
