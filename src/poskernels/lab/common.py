"""What every view of the laboratory's payload shares: the page's precision, the rounding, the axes, the sources,
and the "absent" rule (a view whose source is missing says why instead of drawing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["PRECISION", "Absent", "Sources", "axis", "need", "rnd", "sig"]

#: Decimals the page shows, by kind of number (frequencies keep 6 significant digits instead).
PRECISION = {"kernel": 3, "accuracy": 3, "score": 2, "factor": 3, "wavelength": 1, "offset": 0}


class Absent(Exception):
    """A part's source is missing; the message says which and how to get it."""


def rnd(x, kind: str):
    """Round a number (or nested list/array) to the page's precision; NaN and inf become ``None``.

    Parameters
    ----------
    x : float, list, tuple, ndarray, dict or None
        The value; a dict's keys become strings.
    kind : str
        A key of :data:`PRECISION`.

    Returns
    -------
    float, list, dict or None

    Examples
    --------
    >>> rnd([0.12345, float("nan"), -0.0], "kernel"), rnd({1: 2.345}, "score")
    ([0.123, None, 0.0], {'1': 2.35})
    """
    if isinstance(x, dict):
        return {str(k): rnd(v, kind) for k, v in x.items()}
    if isinstance(x, list | tuple | np.ndarray):
        return [rnd(v, kind) for v in x]
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return round(x, PRECISION[kind]) + 0.0  # + 0.0 turns -0.0 into 0.0


def sig(x, digits: int = 6) -> float:
    """Round to ``digits`` significant digits (frequencies span four decades).

    Parameters
    ----------
    x : float
        The number.
    digits : int
        Significant digits kept.

    Returns
    -------
    float

    Examples
    --------
    >>> sig(0.000123456789), sig(0)
    (0.000123457, 0.0)
    """
    x = float(x)
    return 0.0 if x == 0 else round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def _flat(values) -> np.ndarray:
    out = []
    for v in values if isinstance(values, list | tuple) else [values]:
        out.extend(_flat(v) if isinstance(v, list | tuple) else [v])
    return np.asarray([x for x in out if x is not None], dtype=float)


def axis(values, step: float, label: str, ticks=None, log: bool = False) -> dict:
    """An axis the page draws as given: limits (the data's range widened outward to multiples of ``step``),
    tick positions and a label.

    Parameters
    ----------
    values : float or nested list
        The data drawn on it (None left out).
    step : float
        The limits' multiple, and the ticks' spacing when ``ticks`` is None.
    label : str
        The axis's label.
    ticks : sequence of float, optional
        The tick positions (default: every ``step`` between the limits).
    log : bool
        Whether the page draws it logarithmic.

    Returns
    -------
    dict
        ``min``, ``max``, ``log``, ``ticks`` and ``label``.

    Examples
    --------
    >>> axis([0.1, 0.93], 0.25, "kernel")
    {'min': 0.0, 'max': 1.0, 'log': False, 'ticks': [0.0, 0.25, 0.5, 0.75, 1.0], 'label': 'kernel'}
    """
    v = _flat(values)
    lo, hi = math.floor(v.min() / step) * step, math.ceil(v.max() / step) * step
    if ticks is None:
        ticks = np.arange(lo, hi + step / 2, step)
    return {
        "min": round(lo, 6) + 0.0,
        "max": round(hi, 6) + 0.0,
        "log": log,
        "ticks": [round(float(t), 6) + 0.0 for t in ticks],
        "label": label,
    }


def need(numbers: dict, *path: str):
    """``numbers[path[0]][path[1]]...``, or :class:`Absent` naming the missing key.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    *path : str
        The keys, outermost first.

    Returns
    -------
    object
        The value there.

    Raises
    ------
    Absent
        If a key is missing (the page then shows the part as absent).

    Examples
    --------
    >>> need({"a": {"b": 1}}, "a", "b")
    1
    >>> need({"a": {}}, "a", "b")
    Traceback (most recent call last):
    ...
    poskernels.lab.common.Absent: numbers.json has no 'a.b' (run `poskernels reproduce` with that section)
    """
    node = numbers
    for i, key in enumerate(path):
        if not isinstance(node, dict) or key not in node:
            where = ".".join(path[: i + 1])
            raise Absent(f"numbers.json has no '{where}' (run `poskernels reproduce` with that section)")
        node = node[key]
    return node


@dataclass(frozen=True)
class Sources:
    """Where a part's numbers come from: ``numbers.json`` so far, and the cache of trained heads."""

    numbers: dict
    cache_dir: Path | None
