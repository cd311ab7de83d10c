"""ALiBi's horizon on filings (Theorem 3 (iii)): each head's width ``W``, its horizon ``W / s``, and its accuracy there.

:func:`horizon_row` reads an ALiBi head's content width ``W`` off its weights
(:func:`~poskernels.experiments.filings_reader.content_width`), its horizon ``W / s``, and its accuracy on the
queries whose answer lies at an offset ``r <= W / (2 s)`` from the query token (inside half the horizon),
``W / (2 s) < r <= W / s`` (between) and ``r > W / s`` (beyond it), for the filing heads and for the tournament's
ALiBi heads (trained on the cue stream), one row per head; :func:`horizon_stats` gives the mean and standard error
of each column (:data:`HORIZON_COLUMNS`) over the seeds, per training stream.
"""

from __future__ import annotations

from ..model.train import TrainedHead
from ..seeds import mean_stderr
from ..tasks.filings import FilingTokens
from .filing_answers import FILER, _answer, _truth
from .filings_reader import content_width

__all__ = ["horizon_row", "horizon_stats"]


#: Columns of the horizon table summarized over seeds.
HORIZON_COLUMNS = ("W", "horizon", "inside_half", "between", "beyond", "beyond_not_filer")


def horizon_stats(rows: list[dict]) -> dict:
    """Mean, standard error and per-seed values of each horizon column, per training stream.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`horizon_row` (each with ``trained_on``, ``seed`` and the columns of :data:`HORIZON_COLUMNS`;
        a missing or None value is left out of its column's statistic).

    Returns
    -------
    dict
        ``{trained_on: {"mean", "stderr", "per_seed", "seeds"}}``, the first three by column.

    Examples
    --------
    >>> rows = [{"trained_on": "filings", "seed": s, "W": 20.0 + s, "horizon": 40.0 + 2 * s, "inside_half": 1.0,
    ...          "between": 0.9, "beyond": None if s else 0.5} for s in (0, 1)]
    >>> st = horizon_stats(rows)["filings"]
    >>> st["mean"]["horizon"], st["stderr"]["horizon"], st["mean"]["beyond"], st["seeds"]
    (41.0, 1.0, 0.5, [0, 1])
    """
    out = {}
    for trained_on in dict.fromkeys(r["trained_on"] for r in rows):
        mine = [r for r in rows if r["trained_on"] == trained_on]
        per_seed = {c: [r.get(c) for r in mine] for c in HORIZON_COLUMNS}
        # a head with no query beyond its horizon reads None there: the statistic is over those that have one
        present = {c: [v for v in vs if v is not None] for c, vs in per_seed.items()}
        stats = {c: mean_stderr(vs) for c, vs in present.items()}
        out[trained_on] = {
            "mean": {c: m for c, (m, _) in stats.items()},
            "stderr": {c: se for c, (_, se) in stats.items()},
            "per_seed": per_seed,
            "seeds": [int(r["seed"]) for r in mine],
        }
    return out


def horizon_row(head: TrainedHead, trained_on: str, docs: list[FilingTokens], known: dict | None = None) -> dict:
    """One row of the ALiBi horizon table (Theorem 3 (iii)): ``W``, ``W / s``, accuracy inside half of it and beyond.

    Parameters
    ----------
    head : TrainedHead
        An ALiBi head.
    trained_on : str
        What it was trained on (``"filings"``, ``"synthetic"``), kept in the row.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    known : dict, optional
        Answers already read (:func:`~poskernels.experiments.filing_answers.answer_all`).

    Returns
    -------
    dict
        ``trained_on``, ``seed``, ``W``, ``horizon``, ``inside_half``, ``beyond``, ``inside_queries``,
        ``beyond_queries``, ``between`` (accuracy for ``W / (2 s) < r <= W / s``), ``beyond_not_filer`` (beyond the
        horizon, on the queries whose answer is not the filer: a head that falls back on the filer scores 0 there).

    Raises
    ------
    PosKernelsError
        If the head has a code or a rotation (it has no content width).

    Examples
    --------
    >>> import numpy as np
    >>> from poskernels.experiments.filing_heads import filings_config
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.filings import encode_filing, laboratory_filing
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> row = horizon_row(untrained("alibi"), "filings", [doc])
    >>> row["inside_queries"], row["beyond_queries"], row["inside_half"]  # untrained: W tiny, every answer beyond
    (0, 209, None)
    """
    W = content_width(head.params, head.head)
    horizon = W / head.head.alibi_slope  # Theorem 3 (iii): past W / s a key weighs less than the query itself
    answers, r, _ = _truth(docs)
    ok = _answer(head, "alibi", docs, known) == answers  # (Q,)
    inside, beyond = r <= horizon / 2, r > horizon
    between = ~inside & ~beyond
    not_filer = answers != FILER  # (Q,) queries a head that falls back on the filer cannot answer that way

    def acc(mask):
        return float(ok[mask].mean()) if mask.any() else None

    return {
        "trained_on": trained_on,
        "seed": int(head.seed),
        "W": W,
        "horizon": horizon,
        "inside_half": acc(inside),
        "beyond": acc(beyond),
        "between": acc(between),
        "beyond_not_filer": acc(beyond & not_filer),
        "inside_queries": int(inside.sum()),
        "beyond_queries": int(beyond.sum()),
    }
