"""The page's sections: each computes one top-level key of ``numbers.json`` and prints its table.

The module of each part of the article defines its sections as constants; :data:`poskernels.page.SECTIONS` lists
them in order, and the command line, the payload and the tests loop over that tuple.  ``compute`` returns JSON-ready
data (keys of lengths, dimensions, offsets and seeds are decimal strings); ``render`` turns that data into text.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..experiments.readers import READER_LABELS  # the one label table, re-exported for the page's modules
from ..seeds import seed_block

__all__ = [
    "READER_LABELS",
    "Context",
    "Section",
    "cell",
    "cell_se",
    "differs",
    "differs_se",
    "format_table",
]


@dataclass
class Context:
    """What a section may use besides pure functions.

    Attributes
    ----------
    cache_dir : Path
        Where trained weights and results are cached (``.npz`` without pickle, JSON); default
        ``.cache/poskernels`` in the current directory.
    numbers : dict
        Sections computed so far, by key (a later section may read an earlier one).
    log : callable
        ``log(message)`` for progress; writes to stderr by default.
    first_seed : int
        First seed of the block every trained section is a statistic over; required, as a keyword (a caller
        that wants the environment's block passes :func:`poskernels.seeds.first_seed` ``()``, as the command
        line does: no section reads the environment).
    runs : dict
        Experiment results this context has read, by run: the sections that share one run (the tournament's
        laboratory, keyed by its cache and seeds) read it once per context, never through a module-level memo.
    """

    cache_dir: Path = field(default_factory=lambda: Path(".cache") / "poskernels")
    numbers: dict = field(default_factory=dict)
    log: Callable[[str], None] = field(default=lambda msg: print(msg, file=sys.stderr, flush=True))
    first_seed: int = field(kw_only=True)
    runs: dict = field(default_factory=dict)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seed block of the trained sections (:func:`poskernels.seeds.seed_block` from :attr:`first_seed`)."""
        return seed_block(first=self.first_seed)


@dataclass(frozen=True)
class Section:
    """One key of ``numbers.json``.

    Attributes
    ----------
    key : str
        Top-level key in ``numbers.json`` (``"thm1"``, ``"tournament"``, ...).
    title : str
        Heading printed above its tables.
    compute : callable
        ``compute(ctx) -> dict``, JSON-ready.
    render : callable
        ``render(data) -> str``, aligned text tables.
    trained : bool
        True if it trains models (cached); False if it is deterministic arithmetic.
    merge : bool
        If true, ``compute``'s dict is merged into an existing key instead of replacing it
        (``thm2.sinusoidal_defect`` comes from training, the rest of ``thm2`` does not).
    """

    key: str
    title: str
    compute: Callable[[Context], dict]
    render: Callable[[dict], str]
    trained: bool = False
    merge: bool = False


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if 1e-3 <= abs(value) < 1e5 or value == 0 else f"{value:.3g}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence], title: str | None = None) -> str:
    """Aligned text table; numbers right-aligned, text left-aligned.

    Parameters
    ----------
    headers : sequence of str
        The column titles.
    rows : sequence of sequence
        The rows; a float to three decimals (three significant digits outside [0.001, 1e5)), anything else as
        `str` writes it.
    title : str, optional
        A line printed above the table; default None.

    Returns
    -------
    str
        The table, one line per row, without a final newline.

    Examples
    --------
    >>> print(format_table(["d", "kappa"], [[64, 0.9661], ["limit", 0.974]]))
    d      kappa
    -----  -----
       64  0.966
    limit  0.974
    """
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    numeric = [
        [isinstance(row[i], int | float) and not isinstance(row[i], bool) for row in rows] for i in range(len(headers))
    ]

    def line(values, is_num):
        out = [v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, is_num)]
        return "  ".join(out).rstrip()

    lines = [] if title is None else [title]
    lines.append(line([str(h) for h in headers], [False] * len(headers)))
    lines.append("  ".join("-" * w for w in widths))
    for k, row in enumerate(cells):
        lines.append(line(row, [numeric[i][k] for i in range(len(headers))]))
    return "\n".join(lines)


def differs(ours, article, count: int) -> bool:
    """Whether two accuracies differ by more than three standard errors of a ``count``-item test.

    The standard error is the article's binomial one, ``sqrt(p (1 - p) / count)`` at ``p`` = the
    article's value (kept one item away from 0 and 1).  A value missing on one side only differs.

    Parameters
    ----------
    ours, article : float or None
        The two accuracies.
    count : int
        Items of the test.

    Returns
    -------
    bool

    Examples
    --------
    >>> differs(0.95, 0.947, 2000), differs(0.70, 0.872, 2000), differs(None, None, 2000)
    (False, True, False)
    """
    if ours is None or article is None:
        return (ours is None) != (article is None)
    p = min(max(article, 1.0 / count), 1.0 - 1.0 / count)
    return abs(ours - article) > 3.0 * math.sqrt(p * (1.0 - p) / count)


def cell(value, digits: int = 3) -> str:
    """A table cell: ``value`` to ``digits`` decimals, or a dash when it is missing.

    Parameters
    ----------
    value : float or None
        The number.
    digits : int
        Decimals.

    Returns
    -------
    str

    Examples
    --------
    >>> cell(0.98765), cell(None), cell(196.5, 1)
    ('0.988', '—', '196.5')
    """
    return "—" if value is None else f"{value:.{digits}f}"


def differs_se(mean, stderr, article, count: int) -> bool:
    """Whether a mean over seeds differs from the article's figure by more than three standard errors.

    The standard error joins the seeds' ``stderr`` (the spread of training) with the binomial one of a
    ``count``-item test at the article's value, ``sqrt(p (1 - p) / count)``: every seed is read on the same test
    items, so the seeds' spread does not hold the test's own sampling error, which the article's figure carries.
    A value missing on one side only differs; a missing ``stderr`` counts as 0.

    Parameters
    ----------
    mean : float or None
        Our mean over seeds.
    stderr : float or None
        Its standard error over seeds.
    article : float or None
        The article's figure.
    count : int
        Items of the test.

    Returns
    -------
    bool

    Examples
    --------
    >>> differs_se(0.92, 0.004, 0.947, 2000), differs_se(0.92, 0.01, 0.947, 2000), differs_se(None, None, None, 9)
    (True, False, False)
    """
    if mean is None or article is None:
        return (mean is None) != (article is None)
    p = min(max(article, 1.0 / count), 1.0 - 1.0 / count)
    se = math.sqrt((stderr or 0.0) ** 2 + p * (1.0 - p) / count)
    return abs(mean - article) > 3.0 * se


def cell_se(mean, stderr, digits: int = 3) -> str:
    """A table cell ``mean ± stderr`` (``—`` when missing; the mean alone when there is no standard error).

    Parameters
    ----------
    mean : float or None
        The mean.
    stderr : float or None
        Its standard error.
    digits : int
        Decimals.

    Returns
    -------
    str

    Examples
    --------
    >>> cell_se(0.93149, 0.0112), cell_se(None, None), cell_se(0.5, None)
    ('0.931 ± 0.011', '—', '0.500')
    """
    if mean is None:
        return "—"
    return cell(mean, digits) if stderr is None else f"{mean:.{digits}f} ± {stderr:.{digits}f}"
