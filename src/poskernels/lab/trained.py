"""The laboratory's views drawn from trained heads: score drift, scores against offset, the filing's readers.

These read the tournament's cached heads through the head API (issue 3) and the filings section's
``filings.case`` (issue 4).  While a source is missing, each function raises
:class:`poskernels.lab.payload.Absent` and the page shows the view as absent with the reason.
"""

from __future__ import annotations

from ..errors import PosKernelsError

__all__ = ["drift", "filing_case", "scores_against_offset"]


def _absent(why: str):
    from .payload import Absent

    return Absent(why)


def _head_api(src):
    from .payload import _module

    if src.cache_dir is None:
        raise _absent("no cache of trained heads was given (pass a page Context or cache_dir)")
    return _module("poskernels.experiments.tournament")


def drift(src, d: int) -> dict:
    """Score of a marked key at a fixed offset as the query moves (Figure A's drift view)."""
    _head_api(src)
    raise _absent("the head API does not yet expose the score against absolute position")


def scores_against_offset(src, readers: list[str]) -> dict:
    """Each reader's learned score of a marked key against its offset r (Figure B)."""
    _head_api(src)
    raise _absent("the head API does not yet expose the score against offset")


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
        ``tokens``, ``marked``, ``companies``, ``truth`` and ``answers[reader][seed]`` as company indices
        (None where no question is asked), plus ``readers`` in the order given and ``seeds``.

    Examples
    --------
    >>> c = filing_case({"tokens": ["Acme", "grew"], "marked": [True, False], "companies": ["Acme"],
    ...                  "truth": [None, 0], "answers": {"rope": {"0": [None, "Acme"]}}})
    >>> c["answers"]["rope"]["0"], c["seeds"]
    ([None, 0], ['0'])
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
            if not 0 <= k < len(companies):
                raise PosKernelsError(f"answer {a!r} names no company of {companies}")
            return k

        truth = [as_index(a) for a in case["truth"]]
        answers = {
            reader: {str(seed): [as_index(a) for a in row] for seed, row in by_seed.items()}
            for reader, by_seed in case["answers"].items()
        }
    except (KeyError, TypeError, ValueError) as err:
        raise PosKernelsError(
            f"filings.case is not in the form the lab reads ({err!r}); see notes/lab_needs.md"
        ) from err
    rows = [truth, marked] + [r for by_seed in answers.values() for r in by_seed.values()]
    if any(len(r) != n for r in rows):
        raise PosKernelsError(
            f"filings.case rows must have one entry per token ({n}); got {sorted({len(r) for r in rows})}"
        )
    seeds = sorted({s for by_seed in answers.values() for s in by_seed}, key=int)
    extra = {k: v for k, v in case.items() if k in ("title", "far_from", "window")}
    # the company a marked token names (its token is the company's name), for colouring mentions
    company = [index.get(t) if m else None for t, m in zip(tokens, marked)]
    return {
        "tokens": tokens,
        "marked": marked,
        "company": company,
        "companies": companies,
        "truth": truth,
        "readers": list(answers),
        "seeds": seeds,
        "answers": answers,
        **extra,
    }
