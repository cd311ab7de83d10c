"""The table "Beyond the article: the schemes models ship", rendered from ``numbers.json``.

One row per scheme of :data:`poskernels.encodings.SCHEMES` the tournament trained (the article's five, T5 and
Shaw, and every scheme beyond the article), side by side under identical conditions: the tournament's accuracy at
32 to 256 (``tournament.accuracy``), the cue task and the needle at 10^5 tokens (``long.length`` and
``long.distance``), the heads trained on filings on the far queries (``filings.accuracy`` for the article's
schemes, ``filings.beyond.accuracy`` for the others), each mean ± standard error over the seeds; then,
for Kerple's heads, the certified cut their learned tail allows (``long.distance.tail_cut``).
The prose is ``docs/guide/beyond.md``, which holds the whole table (:func:`markdown`); the README holds its
headline (:func:`headline`): each scheme's paper, its accuracy at 32 and 256, at 10^5 tokens and on the filings.
"""

from __future__ import annotations

from ..encodings import SCHEMES
from .registry import READER_LABELS, cell, cell_se

__all__ = ["headline", "markdown"]

#: The long readings the table quotes: the cue task at its longest length, the needle just past the window and at
#: its farthest offset.
LONG_POINTS = (("length", "100000", "cue at 100,000"), ("distance", "64", "needle at 64"),
               ("distance", "100000", "needle at 100,000"))  # fmt: skip


def _md(headers, rows) -> str:
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def _long_cell(long: dict, part: str, x: str, scheme: str) -> str:
    p = long[part]
    mean = p["accuracy"].get(scheme, {}).get(x)
    return "—" if mean is None else cell_se(mean, p["stderr"][scheme][x])


def _filings_far(filings: dict, scheme: str) -> str:
    """The scheme's filing heads on the queries whose answer is more than 32 back: the article's four in
    ``filings.accuracy``, the schemes beyond it in ``filings.beyond``; "—" for a scheme with no filing reader."""
    part = filings if scheme in filings["accuracy"] else filings.get("beyond", {})
    if scheme not in part.get("accuracy", {}):
        return "—"
    return cell_se(part["accuracy"][scheme]["far"], part["stderr"][scheme]["far"])


def markdown(numbers: dict) -> str:
    """The table, and the Kerple heads' cuts, from a ``numbers.json`` dict.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with its ``tournament``, ``long`` and ``filings`` sections.

    Returns
    -------
    str
        Markdown: a sentence, the table (a row per scheme), and the Kerple cuts where ``long.distance`` has them.

    Examples
    --------
    >>> acc = {"alibi": {"32": 1.0}}
    >>> long = {"accuracy": {"alibi": {"100000": 0.9, "64": 0.5}}, "stderr": {"alibi": {"100000": 0.01, "64": 0.1}}}
    >>> n = {"tournament": {"accuracy": acc, "stderr": {"alibi": {"32": 0.0}}, "seeds": [0]},
    ...      "long": {"length": long, "distance": long},
    ...      "filings": {"accuracy": {"alibi": {"far": 0.6}}, "stderr": {"alibi": {"far": 0.05}}}}
    >>> print(markdown(n).splitlines()[4])
    | ALiBi | Definition 3, Theorem 3 | 1.000 ± 0.000 | 0.900 ± 0.010 | 0.500 ± 0.100 | 0.900 ± 0.010 | 0.600 ± 0.050 |
    """
    t, long = numbers["tournament"], numbers["long"]
    lengths = list(next(iter(t["accuracy"].values())))
    rows = []
    for s, by_n in t["accuracy"].items():
        tour = [cell_se(by_n[k], t["stderr"][s][k]) for k in lengths]
        far = [_long_cell(long, p, x, s) for p, x, _ in LONG_POINTS]
        rows.append([READER_LABELS[s], SCHEMES[s].article, *tour, *far, _filings_far(numbers["filings"], s)])
    k = len(t["seeds"])
    headers = ["scheme", "source", *(f"n = {n}" for n in lengths), *(label for _, _, label in LONG_POINTS)]
    headers.append("filings, far")
    out = [
        f"Accuracy, mean ± standard error over {k} seeds: the tournament at n = {', '.join(lengths)} (2,000 test "
        "sequences a length), the cue task and the needle read by the streaming reader (500 sequences a point), and "
        "the heads trained on filings on the held-out filings' queries whose answer is more than 32 tokens back "
        "(filings, far; — for a scheme with no filing reader).",
        "",
        _md(headers, rows),
    ]
    cuts = long["distance"].get("tail_cut", {})
    if cuts:
        lines = []
        for s, by_seed in cuts.items():
            D = [row["cut_D"] for row in by_seed.values() if row["cut_D"] is not None]
            r1 = [row["r1"] for row in by_seed.values()]
            r2 = [row["r2"] for row in by_seed.values()]
            span = f"D from {min(D)} to {max(D)}" if D else "no cut"
            lines.append(
                [
                    READER_LABELS[s],
                    f"{cell(min(r1), 2)}–{cell(max(r1), 2)}",
                    f"{cell(min(r2), 2)}–{cell(max(r2), 2)}",
                    f"{len(D)} of {len(by_seed)}",
                    span,
                ]
            )
        out += [
            "",
            "Kerple's learned parameters over the seeds and the certified cut their tails allow (dropped weight "
            f"<= {long['eps']:g} at every length; a logarithmic head with r1 <= 1 has none):",
            "",
            _md(["scheme", "r1", "r2", "heads with a cut", "cut"], lines),
        ]
    return "\n".join(out)


def headline(numbers: dict) -> str:
    """The README's shorter table: each scheme's paper and year, the tournament at 32 and at its longest length,
    the cue task and the needle at 10^5 tokens, and the filings' far queries (the columns of :func:`markdown`).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with its ``tournament``, ``long`` and ``filings`` sections.

    Returns
    -------
    str
        A Markdown table, a row per scheme.

    Examples
    --------
    >>> acc = {"alibi": {"32": 1.0, "256": 0.9}}
    >>> long = {"accuracy": {"alibi": {"100000": 0.9}}, "stderr": {"alibi": {"100000": 0.01}}}
    >>> n = {"tournament": {"accuracy": acc, "stderr": {"alibi": {"32": 0.0, "256": 0.02}}, "seeds": [0]},
    ...      "long": {"length": long, "distance": long},
    ...      "filings": {"accuracy": {"alibi": {"far": 0.6}}, "stderr": {"alibi": {"far": 0.05}}}}
    >>> headline(n).splitlines()[4].split(" | ")[1:4]
    ['Press, Smith, and Lewis 2022', '1.000 ± 0.000', '0.900 ± 0.020']
    """
    t, long = numbers["tournament"], numbers["long"]
    lengths = list(next(iter(t["accuracy"].values())))
    first, last = lengths[0], lengths[-1]
    rows = []
    for s, by_n in t["accuracy"].items():
        scheme = SCHEMES[s]
        source = f"{scheme.paper} {scheme.year}" if scheme.paper and scheme.year else scheme.article
        rows.append([
            READER_LABELS[s],
            source,
            cell_se(by_n[first], t["stderr"][s][first]),
            cell_se(by_n[last], t["stderr"][s][last]),
            _long_cell(long, "length", "100000", s),
            _long_cell(long, "distance", "100000", s),
            _filings_far(numbers["filings"], s),
        ])  # fmt: skip
    headers = ["scheme", "paper", f"n = {first}", f"n = {last}", "cue at 10^5", "needle at 10^5", "filings, far"]
    return "\n".join([
        f"Accuracy, mean ± SE over {len(t['seeds'])} seeds, of single heads trained at {first} tokens under identical "
        "conditions (the whole table, with 64, 128 and the needle at 64: [the schemes models ship]"
        "(docs/guide/beyond.md)).",
        "",
        _md(headers, rows),
    ])  # fmt: skip
