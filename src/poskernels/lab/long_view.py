"""The laboratory's view of the long-context measurements: its payload part, built from ``numbers.json``'s ``long``.

Accuracy against log length (cue task) and against the log offset of a needle, one curve per reader, and each
ALiBi head's horizon ``W / s`` on the offset axis (Theorem 3 (iii)).  Every number comes from the ``long`` section
(:mod:`poskernels.experiments.long_context`); nothing is computed here but rounding and the axes.
"""

from __future__ import annotations

from . import trained
from .common import PRECISION, need, rnd

__all__ = ["build"]


def _log_axis(values, label: str) -> dict:
    xs = sorted(int(v) for v in values)
    lo, hi = (xs[0], xs[-1]) if xs[0] < xs[-1] else (xs[0] / 2, xs[0] * 2)  # one point: an octave either side
    ticks = [t for t in (1, 10, 100, 1000, 10_000, 100_000, 1_000_000) if lo <= t <= hi]
    return {"min": lo, "max": hi, "log": True, "ticks": ticks, "label": label}


def build(src) -> dict:
    """The ``long`` part: ``lengths``, ``offsets``, ``length``/``distance`` curves by reader, ``horizons``, axes.

    Parameters
    ----------
    src : Sources
        Where the numbers come from (its ``numbers.json``'s ``long`` section).

    Returns
    -------
    dict
        The part the page draws, with its ``caption``.

    Raises
    ------
    Absent
        If ``numbers.json`` has no ``long`` section.

    Examples
    --------
    >>> import json
    >>> from poskernels.lab.common import Sources
    >>> from poskernels.page.readme import REFERENCE_NUMBERS
    >>> build(Sources(json.loads(REFERENCE_NUMBERS.read_text()), None))["lengths"][:3]
    [32, 64, 128]
    >>> build(Sources({}, None))
    Traceback (most recent call last):
    ...
    poskernels.lab.common.Absent: numbers.json has no 'long' (run `poskernels reproduce` with that section)
    """
    data = need(src.numbers, "long")
    length, distance = data["length"], data["distance"]
    acc = PRECISION["accuracy"]
    readers = [r for r in data["readers"] if r in length["accuracy"]]
    part = {
        "lengths": [int(n) for n in length["lengths"]],
        "offsets": [int(r) for r in distance["offsets"]],
        "length": {r: rnd([length["accuracy"][r][n] for n in length["lengths"]], "accuracy") for r in readers},
        "distance": {r: rnd([distance["accuracy"][r][x] for x in distance["offsets"]], "accuracy") for r in readers},
        "length_stderr": {r: rnd([length.get("stderr", {}).get(r, {}).get(n) for n in length["lengths"]], "accuracy")
                          for r in readers},  # fmt: skip
        "distance_stderr": {r: rnd([distance.get("stderr", {}).get(r, {}).get(x) for x in distance["offsets"]],
                                   "accuracy") for r in readers},  # fmt: skip
        "readers": trained.reader_entries(readers),
        "groups": [{"key": k, "title": t} for k, t in trained.GROUPS.items()],
        "horizons": [{"seed": s, "horizon": round(row["horizon"], 1)} for s, row in distance["horizon"].items()],
        "x_length": _log_axis(length["lengths"], "test length n (log; trained at 32)"),
        "x_distance": _log_axis(distance["offsets"], "offset r of the one marked token (log)"),
        "y": {"min": 0.0, "max": 1.0, "log": False, "ticks": [0.0, 0.25, 0.5, 0.75, 1.0], "label": "accuracy"},
        "chance": rnd(1 / 8, "accuracy"),
        "seeds": len(data["seeds"]),
        "count": data["count"],
        "decimals": acc,
    }
    hs = [h["horizon"] for h in part["horizons"]]
    part["caption"] = (
        f"Mean of {part['seeds']} seeds, {part['count']} sequences a point. First panel: the cue task read at lengths "
        f"{part['lengths'][0]} to {part['lengths'][-1]}. Second: one marked token r positions before the query; "
        + (f"ticks mark the ALiBi heads' horizons W/s ({min(hs):.1f} to {max(hs):.1f}). " if hs else "")
        + "Past its horizon an ALiBi head's needle weighs less than the query itself (Theorem 3 (iii)); "
        "the dashed line is chance, 1/8."
    )
    return part
