"""The laboratory's views drawn from trained heads: score drift, scores against offset, the filing's readers.

The curves come from :mod:`poskernels.experiments.curves`, read from the tournament's heads of
:func:`shown_seed` in the cache the ``tournament`` section filled; the filing from ``numbers.json``'s
``filings.case``, which :func:`poskernels.experiments.filing_case.case_study` writes.  Nothing here trains: while a
source is missing (the section not computed, no cache, a head not cached), each function raises
:class:`poskernels.lab.common.Absent` and the page shows the view as absent with the reason.
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError
from ..experiments import curves
from ..experiments.readers import reader_label
from ..tasks.cue import N_SYMBOLS
from .common import Absent, Sources, need

__all__ = ["GROUPS", "drift", "filing_case", "reader_entries", "reader_group", "scores_against_offset", "shown_seed"]

#: The groups a figure draws in facets of its own (a few curves a panel, not twenty), in order: key -> title.
GROUPS = {
    "article": "the article's tournament",
    "reread": "RoPE re-read through each map (Definition 5)",
    "rotary": "beyond the article: the rotary family",
    "other": "beyond the article: biases, codes and training-side variants",
}


def reader_group(head: str, m: str) -> str:
    """The group of :data:`GROUPS` of a reader reading ``head`` through the map ``m``, from the scheme's fields.

    Parameters
    ----------
    head : str
        The scheme of the head read.
    m : str
        The map it is read through (``"none"``: as trained).

    Returns
    -------
    str
        A key of :data:`GROUPS`.

    Examples
    --------
    >>> reader_group("rope", "pi"), reader_group("alibi", "none"), reader_group("rope_ssmax", "none")
    ('reread', 'article', 'rotary')
    >>> reader_group("t5", "none")
    'other'
    """
    if m != "none":
        return "reread"
    s = SCHEMES.get(head)
    if s is None or s.in_article:
        return "article"
    return "rotary" if s.rotary else "other"


def shown_seed(numbers: dict) -> int:
    """The seed whose heads the curves show: the first of the tournament's block (the rebound readouts' too).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.

    Returns
    -------
    int
        ``0`` when the tournament names no seeds.

    Examples
    --------
    >>> shown_seed({"tournament": {"seeds": [1000, 1001]}}), shown_seed({"tournament": {}})
    (1000, 0)
    """
    return int(numbers.get("tournament", {}).get("seeds", [0])[0])


def reader_entries(keys) -> list[dict]:
    """The payload's readers: each one's key, label, the head it reads and the map it reads it through.

    The figures and the page style a curve by its ``map`` (dashed: a head re-read through a map), pick a family
    by its ``head`` and a facet by its ``group`` (:func:`reader_group`), never by the key's spelling
    (``rope_ssmax`` is its own head, read as trained).

    Parameters
    ----------
    keys : iterable of str
        The readers' keys.

    Returns
    -------
    list of dict
        ``key``, ``label``, ``head``, ``map`` and ``group`` of each.

    Examples
    --------
    >>> [(r["key"], r["head"], r["map"], r["group"]) for r in reader_entries(["rope_ssmax", "rope_pi"])]
    [('rope_ssmax', 'rope_ssmax', 'none', 'rotary'), ('rope_pi', 'rope', 'pi', 'reread')]
    """
    out = []
    for k in keys:
        head, m = curves.reader_of(k)
        out.append({"key": k, "label": reader_label(k), "head": head, "map": m, "group": reader_group(head, m)})
    return out


def _tournament_heads(src: Sources, schemes) -> dict:
    """The tournament's heads of :func:`shown_seed`, read from the cache the ``tournament`` section filled."""
    need(src.numbers, "tournament", "accuracy")
    if src.cache_dir is None:
        raise Absent("no cache of trained heads was given (pass a page Context or cache_dir)")
    seed = shown_seed(src.numbers)
    heads = curves.cached_heads(src.cache_dir, seed, schemes)
    if heads is None:
        raise Absent(
            f"the tournament's heads of seed {seed} are not in the cache {src.cache_dir} "
            "(run `poskernels reproduce` with the tournament section and this cache)"
        )
    return heads


def drift(src: Sources) -> dict:
    """Score of a marked key at a fixed offset as the query moves (Figure A's drift view).

    Parameters
    ----------
    src : Sources
        ``numbers.json`` and the cache of trained heads the tournament filled.

    Returns
    -------
    dict
        ``offset``, ``positions``, ``seed``, ``readers`` and each reader's ``scores``.

    Raises
    ------
    Absent
        If ``numbers.json`` has no tournament, no cache is given, or the shown seed's heads are not in it.

    Examples
    --------
    >>> drift(Sources({"tournament": {"accuracy": {}}}, None))
    Traceback (most recent call last):
    ...
    poskernels.lab.common.Absent: no cache of trained heads was given (pass a page Context or cache_dir)
    """
    readers = list(curves.DRIFT_READERS)
    part = curves.drift(_tournament_heads(src, readers))
    seed = shown_seed(src.numbers)
    return {
        "offset": part["offset"],
        "positions": part["positions"],
        "seed": seed,
        "readers": readers,
        "scores": part["scores"],
    }


def scores_against_offset(src: Sources, readers: list[str]) -> dict:
    """Each reader's learned score of a marked key against its offset r (Figure B); see
    :func:`poskernels.experiments.curves.scores_against_offset`.

    RoPE's own curve is the rebound's, read from ``numbers.json`` (``rebound.<seed>.curve``, the score at offsets
    ``0..255`` that :func:`poskernels.experiments.rebound.rebound_summary` writes and the readouts' landmarks are
    read off), not recomputed here; the other readers, and RoPE re-read through each map, from the cached heads.

    Parameters
    ----------
    src : Sources
        ``numbers.json`` and the cache of trained heads.
    readers : list of str
        The readers drawn.

    Returns
    -------
    dict
        ``offsets``, ``query_length``, ``seed`` and ``scores`` (an array per reader, in the readers' order).

    Raises
    ------
    Absent
        If ``numbers.json`` lacks the rebound's curve or the tournament, or the heads are not cached.
    PosKernelsError
        If the rebound's curve does not have the view's offsets.

    Examples
    --------
    >>> scores_against_offset(Sources({}, None), ["rope"])
    Traceback (most recent call last):
    ...
    poskernels.lab.common.Absent: numbers.json has no 'rebound' (run `poskernels reproduce` with that section)
    """
    seed = shown_seed(src.numbers)
    rope_curve = None
    if "rope" in readers:
        rope_curve = need(src.numbers, "rebound", str(seed), "curve")
    others = [r for r in readers if r != "rope"]
    # each reader reads its own head (RoPE + SSMax its own, RoPE + PI the RoPE head): the readers' table says which
    part = curves.scores_against_offset(_tournament_heads(src, curves.reader_heads(others)), others)
    scores = dict(part["scores"])
    if rope_curve is not None:
        if len(rope_curve) != len(part["offsets"]):
            raise PosKernelsError(
                f"numbers.json's rebound.{seed}.curve has {len(rope_curve)} offsets; the scores view reads"
                f" {len(part['offsets'])} (0..{part['offsets'][-1]})"
            )
        scores["rope"] = np.asarray(rope_curve, dtype=float)
    ordered = {r: scores[r] for r in readers if r in scores}  # (offsets,) each, in the readers' order
    return {"offsets": part["offsets"], "query_length": part["query_length"], "seed": seed, "scores": ordered}


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
            "and answers[reader][seed], as poskernels.experiments.filing_case.case_study writes them"
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
