"""The numbers the article prints for its deterministic statements, each beside ours at the article's precision.

:data:`PRINTED` lists, per part of the article, each figure it prints (as printed, with the sentence or table it is
in) and where ``numbers.json`` holds ours; :func:`markdown` renders one part as a table "ours | article", ours
rounded to the printed figure's own precision, a mark where the two differ.  The documentation's pages of the
article show these tables (regions ``printed-PART`` of :mod:`poskernels.page.readme`), so nothing in them is typed
but the article's own figures.

Examples
--------
>>> numbers = {"prop1": {"bag_reader": {"32": 0.5466305496446151, "256": 0.23407077479568417}}}
>>> print(markdown(numbers, "order"))
| the article prints | ours | article |
|---|---|---|
| best bag reader, exact, at n = 32 | 0.547 | 0.547 |
| best bag reader, exact, at n = 256 | 0.234 | 0.234 |
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import PosKernelsError

__all__ = ["PARTS", "PRINTED", "as_printed", "markdown", "ours"]

_KERNEL = [("64", "d = 64"), ("512", "d = 512"), ("8192", "d = 8192")]
_DELTAS = ("1", "4", "16", "64", "256", "1024")
_THM1_TABLE = (
    # "Position as a set of clocks", the table of (2/d) kappa_d(Delta) after Theorem 1
    [(f"(2/d) κ_d(Δ), {label}, Δ = {delta}", ("thm1", "kernel", d, delta), printed)
     for (d, label), row in zip(_KERNEL, (
         ("0.966", "0.748", "0.605", "0.435", "0.354", "0.263"),
         ("0.973", "0.768", "0.631", "0.485", "0.313", "0.186"),
         ("0.974", "0.771", "0.635", "0.487", "0.335", "0.185"),
     )) for delta, printed in zip(_DELTAS, row)]
    + [(f"limit I_b(Δ), Δ = {delta}", ("thm1", "limit", delta), printed)
       for delta, printed in zip(_DELTAS, ("0.974", "0.772", "0.635", "0.487", "0.335", "0.185"))]
    + [(f"ruler 1 − (γ + ln Δ)/ln b, Δ = {delta}", ("thm1", "ruler", delta), printed)
       for delta, printed in zip(_DELTAS, ("0.937", "0.787", "0.636", "0.486", "0.335", "0.185"))]
)  # fmt: skip

#: Part of the article -> rows (what the article prints, the path of ours in ``numbers.json``, the figure as printed).
#: A path ending in an integer index reads a list; ``printed`` is the article's text (``3.69e29`` for
#: "3.69 × 10^29"; ``> 0.999`` for a bound the article states).
PRINTED: dict[str, list[tuple[str, tuple, str]]] = {
    "order": [  # "Order, and how a mask leaks it", after Proposition 1
        ("best bag reader, exact, at n = 32", ("prop1", "bag_reader", "32"), "0.547"),
        ("best bag reader, exact, at n = 256", ("prop1", "bag_reader", "256"), "0.234"),
    ],
    "clocks": [
        *_THM1_TABLE,
        ("cost of one octave, ln 2 / ln b", ("thm1", "octave_cost"), "0.075"),
        ("largest cosine between two columns of P, d = 16, over 64 positions", ("thm1", "max_column_cosine", "64"),
         "> 0.999"),
        ("the same over 4096 positions", ("thm1", "max_column_cosine", "4096"), "0.739"),
        ("δ of a random Gaussian M, d = 16", ("thm2", "random_defect"), "0.968"),
        ("numerical rank of the 64 × 16 code", ("thm2", "numerical_rank_64"), "14"),
        ("exact condition number, W = 16", ("thm2", "condition_number", "16"), "3.69e29"),
        ("exact condition number, W = 64", ("thm2", "condition_number", "64"), "7.14e18"),
        ("exact condition number, W = 256", ("thm2", "condition_number", "256"), "1.24e11"),
        ("exact condition number, W = 4096", ("thm2", "condition_number", "4096"), "17.7"),
    ],
    "relative": [  # after Definition 3; Theorem 3 (ii) with W = 20, s = 1/2
        ("T5, 32 buckets: the last bucket holds every offset from", ("def3", "t5_last_bucket_first_offset"), "113"),
        ("T5: where the logarithmic map reaches the last bucket", ("def3", "t5_log_reach"), "112.4"),
        ("ALiBi tail bound, W = 20, s = 1/2, D = 40", ("thm3", "alibi_tail_bound", "40"), "2.54"),
        ("ALiBi tail bound, D = 60", ("thm3", "alibi_tail_bound", "60"), "1.15e-4"),
        ("ALiBi tail bound, D = 80", ("thm3", "alibi_tail_bound", "80"), "5.24e-9"),
    ],
    "rotations": [  # after Proposition 4; after Theorem 5
        ("decay envelope's octave mean, d = 128, Δ = 1", ("prop4", "envelope_octave_mean", "1"), "2018"),
        ("decay envelope's octave mean, Δ = 2048 to 4095", ("prop4", "envelope_octave_mean", "2048"), "312"),
        *[(f"wavelength of plane {j}, d = 16", ("thm5", "wavelengths", j), printed)
          for j, printed in enumerate(("6.3", "19.9", "62.8", "198.7", "628.3", "1987", "6283", "19869"))],
        ("planes completing a turn in L = 32", ("thm5", "full_turn_planes"), "2"),
        *[(f"NTK-aware factor of plane {j} at κ = 4", ("thm5", "ntk_factors", j), printed)
          for j, printed in enumerate(("1", "0.820", "0.673", "0.552", "0.453", "0.371", "0.305", "0.250"))],
        ("YaRN factor of plane 0 at κ = 4", ("thm5", "yarn_factors", 0), "0.349"),
        ("YaRN factor of plane 1", ("thm5", "yarn_factors", 1), "0.265"),
        *[(f"YaRN factor of plane {j}", ("thm5", "yarn_factors", j), "0.25") for j in range(2, 8)],
        ("Chen et al.'s constant too small by, d = 16", ("thm5", "chen_ratio", "16"), "2.56"),
        ("the same at d = 128", ("thm5", "chen_ratio", "128"), "1.15"),
        ("counterexample, d = 128: interpolation error", ("thm5", "chen_counterexample", "error"), "0.459"),
        ("its stated bound", ("thm5", "chen_counterexample", "stated"), "0.434"),
        ("its corrected bound", ("thm5", "chen_counterexample", "corrected"), "0.500"),
    ],
}  # fmt: skip

#: The parts of the article with printed deterministic figures, in the article's order.
PARTS = tuple(PRINTED)

_SCI = re.compile(r"^(-?\d+(?:\.(\d+))?)e(-?\d+)$")


def ours(numbers: dict, path: tuple) -> Any:
    """The value at ``path`` in ``numbers`` (string keys of dicts, integer indices of lists).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    path : tuple
        The keys and indices, outermost first.

    Returns
    -------
    object
        The value there.

    Raises
    ------
    PosKernelsError
        If ``numbers`` has nothing at ``path``.

    Examples
    --------
    >>> ours({"prop1": {"bag_reader": {"32": 0.547}}}, ("prop1", "bag_reader", "32"))
    0.547
    >>> ours({}, ("prop1", 0))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: numbers.json has no prop1.0
    """
    value: Any = numbers
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            raise PosKernelsError(f"numbers.json has no {'.'.join(map(str, path))}") from None
    return value


def as_printed(value: float, printed: str) -> str:
    """``value`` written at the precision of the article's ``printed`` figure.

    Parameters
    ----------
    value : float
        Our figure.
    printed : str
        The article's: decimals (``"0.547"``), scientific (``"3.69e29"``) or a bound (``"> 0.999"``).

    Returns
    -------
    str
        ``value`` at that precision; a bound that holds is written as printed.

    Examples
    --------
    >>> as_printed(3.692453283820517e29, "3.69e29"), as_printed(0.5466305496446151, "0.547"), as_printed(14, "14")
    ('3.69e29', '0.547', '14')
    >>> as_printed(0.9999999874624762, "> 0.999"), as_printed(0.99, "> 0.999")
    ('> 0.999', '0.990')
    """
    if printed.startswith("> "):
        bound = float(printed[2:])
        return printed if value > bound else as_printed(value, printed[2:])
    m = _SCI.match(printed)
    if m:
        digits = len(m.group(2) or "")
        mantissa, exponent = f"{float(value):.{digits}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    decimals = len(printed.partition(".")[2])
    return f"{float(value):.{decimals}f}"


def markdown(numbers: dict, part: str) -> str:
    """The table of one part: what the article prints, ours at its precision, the article's figure (``*``: differ).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    part : str
        One of :data:`PARTS`.

    Returns
    -------
    str
        A Markdown table, a row per printed figure.

    Raises
    ------
    PosKernelsError
        If ``part`` is unknown, or ``numbers`` lacks a figure.

    Examples
    --------
    >>> import json
    >>> from poskernels.page.readme import REFERENCE_NUMBERS
    >>> markdown(json.loads(REFERENCE_NUMBERS.read_text()), "order").splitlines()[2]
    '| best bag reader, exact, at n = 32 | 0.547 | 0.547 |'
    >>> markdown({}, "chapter")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown part of the article 'chapter'; accepted: order, clocks, relative,
    rotations
    """
    if part not in PRINTED:
        raise PosKernelsError(f"unknown part of the article {part!r}; accepted: {', '.join(PARTS)}")
    rows = ["| the article prints | ours | article |", "|---|---|---|"]
    for label, path, printed in PRINTED[part]:
        mine = as_printed(ours(numbers, path), printed)
        rows.append(f"| {label} | {mine} | {printed}{'' if mine == printed else ' *'} |")
    return "\n".join(rows)
