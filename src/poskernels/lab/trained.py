"""The laboratory's views drawn from trained heads: score drift, scores against offset, the filing's readers.

These read the tournament's cached heads (:func:`poskernels.model.train.train_many` over the tournament's
preset, through the head's own scores) and ``numbers.json``'s ``filings.case``, which
:func:`poskernels.experiments.filings.case_study` writes.  While a source is missing (the section not computed,
no cache), each function raises :class:`poskernels.lab.payload.Absent` and the page shows the view as absent with
the reason.
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES, omega
from ..errors import PosKernelsError
from ..model.config import preset
from ..model.train import train_many

__all__ = ["DRIFT_OFFSET", "drift", "filing_case", "marked_key_scores", "scores_against_offset", "shown_seed"]


#: Figure A's drift view: the offset of the marked key whose score follows the query along the sequence.
DRIFT_OFFSET = 1


def _absent(why: str):
    from .payload import Absent

    return Absent(why)


def shown_seed(numbers: dict) -> int:
    """The seed whose heads the curves show: the first of the tournament's block (the rebound readouts' too).

    >>> shown_seed({"tournament": {"seeds": [1000, 1001]}}), shown_seed({"tournament": {}})
    (1000, 0)
    """
    return int(numbers.get("tournament", {}).get("seeds", [0])[0])


def _tournament_heads(src, schemes) -> dict:
    """The tournament's heads of :func:`shown_seed`, read from the cache the ``tournament`` section filled."""
    from .payload import _need

    _need(src.numbers, "tournament", "accuracy")
    if src.cache_dir is None:
        raise _absent("no cache of trained heads was given (pass a page Context or cache_dir)")
    jobs = [(preset("tournament", s), shown_seed(src.numbers)) for s in schemes]
    return dict(zip(schemes, train_many(jobs, src.cache_dir, workers=1)))


def marked_key_scores(head, t, j, reading=None, keys=None) -> np.ndarray:
    """The pre-softmax score of the query token at positions ``t`` against the mean marked key at ``j``.

    The head's own score (:func:`poskernels.model.head.query_forward` computes the same ``z``):
    ``z = <q_t, k_j> / tau + bias(t - j)``, with ``h = E[x] + p(position)`` for an additive code and the
    rotation by ``j - t`` for RoPE (Proposition 3 (i)), read through ``reading`` (a rescaled RoPE).  The key is
    the mean of the eight marked symbols' keys: the score is linear in the key, so this is the mean of their
    scores, as :mod:`poskernels.experiments.rebound` reads it.

    Parameters
    ----------
    head : poskernels.model.train.TrainedHead
    t, j : array_like, shape (R,)
        Query and key positions, ``j <= t``.
    reading : poskernels.model.head.Reading, optional
    keys : sequence of int, optional
        Key tokens whose mean key is scored (default the eight marked symbols).

    Returns
    -------
    ndarray, shape (R,)
        The scores; NaN where the scheme has no code (a learned table past its length).
    """
    from ..model.head import PLAIN, token_table
    from ..model.schemes import HEAD_SCHEMES
    from ..tasks.cue import N_SYMBOLS, query_token, token_id

    reading = PLAIN if reading is None else reading
    cfg, p = head.head, head.params
    scheme = HEAD_SCHEMES[cfg.scheme]
    t, j = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(j, dtype=float))  # (R,) each
    out = np.full(t.shape, np.nan)  # (R,)
    ok = np.ones(t.shape, dtype=bool)
    if not SCHEMES[cfg.scheme].defined_everywhere:  # Definition 1: a learned table has rows 0..L-1 only
        ok = (t <= cfg.n_train - 1) & (j >= 0)
    t, j = t[ok], j[ok]
    keys = token_id(np.arange(N_SYMBOLS), True) if keys is None else np.asarray(keys)
    T = token_table(p, cfg)  # (V, d) the embedding of every token
    hq = np.tile(T[query_token(N_SYMBOLS)], (t.size, 1))  # (R, d)
    hk = np.tile(T[keys].mean(axis=0), (t.size, 1))  # (R, d) the mean marked embedding
    if scheme.code(p, cfg, np.zeros(1)) is not None:
        hq = hq + scheme.code(p, cfg, t)
        hk = hk + scheme.code(p, cfg, j)
    q, k = hq @ p["W_Q"], hk @ p["W_K"]  # (R, d) each
    if scheme.rotary:
        theta = omega(cfg.d, cfg.base) if reading.inv_freq is None else np.asarray(reading.inv_freq)  # (d/2,)
        e = np.exp(1j * (j - t)[:, None] * theta)  # (R, d/2): Proposition 3 (i), the key turned by j - t
        z = (q.view(np.complex128).conj() * k.view(np.complex128) * e).real.sum(-1) * reading.logit_scale  # (R,)
    else:
        z = (q * k).sum(-1)  # (R,)
    z = z / cfg.tau
    bias = scheme.bias(p, cfg, q, t - j)  # (R,) or (R, R) (a query-dependent bias: row i is query i)
    if bias is not None:
        bias = np.asarray(bias)
        z = z + (np.diagonal(bias) if bias.ndim == 2 else bias)
    out[ok] = z
    return out


def drift(src, d: int) -> dict:
    """Score of a marked key at a fixed offset as the query moves (Figure A's drift view)."""
    readers = ["sinusoidal", "rope", "alibi"]
    heads = _tournament_heads(src, readers)
    r = DRIFT_OFFSET
    t = np.arange(r, 256)  # (T,) query positions; the key sits r before
    return {
        "offset": r,
        "positions": t.tolist(),
        "seed": shown_seed(src.numbers),
        "readers": readers,
        "scores": {s: marked_key_scores(heads[s], t, t - r) for s in readers},
    }


def scores_against_offset(src, readers: list[str]) -> dict:
    """Each reader's learned score of a marked key against its offset r (Figure B).

    The query sits at the end of a 256-token sequence (position 255; the learned table's at its last row, L - 1),
    the key r before it; RoPE + PI / NTK /
    YaRN read the RoPE head through the map at kappa = 256 / 32, as the re-read table does at 256.
    """
    from ..extension import extend
    from ..model.head import Reading

    n = 256
    maps = {r: r[len("rope_") :] for r in readers if r.startswith("rope_")}  # reader -> map of Definition 5
    schemes = [r for r in readers if r not in maps] + (["rope"] if maps and "rope" not in readers else [])
    heads = _tournament_heads(src, schemes)
    offsets = np.arange(n)  # (n,)
    t = np.full(n, n - 1)
    scores = {}
    for reader in readers:
        if reader in schemes:
            # Definition 1: a learned table has no row past L - 1, so its query sits at L - 1
            q = t if SCHEMES[reader].defined_everywhere else np.full(n, heads[reader].head.n_train - 1)
            scores[reader] = marked_key_scores(heads[reader], q, q - offsets)
        else:
            cfg = heads["rope"].head  # read at kappa = n / L, as the re-read table does at n
            reading = Reading.from_extension(extend(maps[reader], omega(cfg.d, cfg.base), n / cfg.n_train, cfg.n_train))
            scores[reader] = marked_key_scores(heads["rope"], t, t - offsets, reading)
    return {"offsets": offsets.tolist(), "query_length": n, "seed": shown_seed(src.numbers), "scores": scores}


def filing_case(case: dict) -> dict:
    """The laboratory's filing as the page draws it: tokens, truth, and every reader's answer per position.

    Parameters
    ----------
    case : dict
        ``numbers.json``'s ``filings.case``: ``tokens`` (strings), ``marked`` (bools), ``companies`` (names by
        symbol), ``truth`` (symbol or None per position) and ``answers[reader][seed]`` (symbol or None per
        position).  Answers may also be company names.

    Returns
    -------
    dict
        ``tokens``, ``marked``, ``companies``, ``truth`` and ``answers[reader][seed]`` as symbols (None where no
        question is asked), ``labels`` naming every symbol, plus ``readers`` in the order given and ``seeds``.

    Examples
    --------
    >>> c = filing_case({"tokens": ["Acme", "grew"], "marked": [True, False], "companies": ["Acme"],
    ...                  "truth": [None, 0], "answers": {"rope": {"0": [None, "Acme"]}}})
    >>> c["answers"]["rope"]["0"], c["seeds"], c["back"], c["wrong_share"]
    ([None, 0], ['0'], [None, 1], [None, 0.0])
    """
    try:
        from ..tasks.cue import N_SYMBOLS

        tokens, companies = [str(t) for t in case["tokens"]], [str(c) for c in case["companies"]]
        n = len(tokens)
        marked = [bool(x) for x in case["marked"]]
        index = {name: k for k, name in enumerate(companies)}

        def as_index(a):
            if a is None:
                return None
            k = index[a] if isinstance(a, str) else int(a)
            if not 0 <= k < N_SYMBOLS:
                raise PosKernelsError(f"answer {a!r} is not a company of {companies} nor a symbol 0..{N_SYMBOLS - 1}")
            return k

        truth = [as_index(a) for a in case["truth"]]
        answers = {
            reader: {str(seed): [as_index(a) for a in row] for seed, row in by_seed.items()}
            for reader, by_seed in case["answers"].items()
        }
    except (KeyError, TypeError, ValueError) as err:
        raise PosKernelsError(
            f"filings.case is not in the form the lab reads ({err!r}): expected tokens, marked, companies, truth "
            "and answers[reader][seed], as poskernels.experiments.filings.case_study writes them"
        ) from err
    rows = [truth, marked] + [r for by_seed in answers.values() for r in by_seed.values()]
    if any(len(r) != n for r in rows):
        raise PosKernelsError(
            f"filings.case rows must have one entry per token ({n}); got {sorted({len(r) for r in rows})}"
        )
    seeds = sorted({s for by_seed in answers.values() for s in by_seed}, key=int)
    extra = {k: case[k] for k in ("doc_id", "last_mention", "the_company", "right") if k in case}
    # the company a marked token names (its token is the company's name), for colouring mentions
    company = [index.get(t) if m else None for t, m in zip(tokens, marked)]
    # how far back the last mention is, and the share of (reader, seed) answers that miss it, per position
    last = np.maximum.accumulate(np.where(marked, np.arange(n), -1)) if n else np.zeros(0, int)  # (n,)
    back = [int(i - j) if j >= 0 and truth[i] is not None else None for i, j in enumerate(last)]
    rows = [row for by_seed in answers.values() for row in by_seed.values()]
    wrong = [
        None if truth[i] is None else round(sum(row[i] != truth[i] for row in rows) / max(len(rows), 1), 2)
        for i in range(n)
    ]
    asked = [i for i in range(n) if truth[i] is not None]
    focus = max(asked, key=lambda i: (wrong[i], -i)) if asked else 0  # the first position most readers miss
    if case.get("the_company") is not None:  # the article's clause: "the company", long after the last mention
        focus = int(case["the_company"])
    return {
        "tokens": tokens,
        "marked": marked,
        "company": company,
        "companies": companies,
        # a head may answer any of the task's symbols, also one that labels no company of this filing
        "labels": companies + [f"symbol {k} (no company here)" for k in range(len(companies), N_SYMBOLS)],
        "truth": truth,
        "back": back,
        "wrong_share": wrong,
        "focus": focus,
        "readers": list(answers),
        "seeds": seeds,
        "answers": answers,
        **extra,
    }
