"""The tables of trained results in the README and the documentation, rendered from ``numbers.json``: no trained
figure is typed by hand.

Each table lives in a Markdown page (:data:`DOCUMENTS`: the README's headline table, the documentation's pages of
the article) between two marker lines, ``<!-- numbers:NAME begin -->`` and ``<!-- numbers:NAME end -->``;
:func:`rewrite` replaces what lies between them with :data:`REGIONS` ``[NAME]`` rendered from a ``numbers.json``.
The package ships the ``numbers.json`` the pages were made from (:data:`REFERENCE_NUMBERS`, a full
``poskernels reproduce`` with seeds 0-9); ``tests/test_readme.py`` checks that every page equals its rendering,
that every region is on some page, and that a fresh run agrees with the shipped numbers within the seeds' error.

Usage (from the repository's root; with no page named, every page of :data:`DOCUMENTS`)::

    python -m poskernels.page.readme results/numbers.json                  # rewrite the regions
    python -m poskernels.page.readme --check results/numbers.json README.md  # exit 1 if a region is stale

Examples
--------
>>> text = "a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb\\n"
>>> print(rewrite(text, {"x": "| new |"}), end="")
a
<!-- numbers:x begin -->
| new |
<!-- numbers:x end -->
b
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atomic import write_text_atomic
from ..errors import PosKernelsError
from . import fidelity, printed, scheme_table
from . import filings as pf
from . import window as pt
from .claims_page import claims_markdown, unresolved_markdown
from .clocks import ARTICLE_DEFECT
from .long_context import markdown as long_markdown
from .registry import READER_LABELS, cell, cell_se, differs_se

__all__ = ["DOCUMENTS", "DOC_REGIONS", "REFERENCE_NUMBERS", "REGIONS", "main", "regions_in", "render", "rewrite"]

#: The ``numbers.json`` (trained sections and the rest) the README's tables were rendered from.
REFERENCE_NUMBERS = Path(__file__).parent / "reference_numbers.json"

_MARK = re.compile(r"<!-- numbers:([a-z0-9_-]+) (begin|end) -->")


def _md(headers, rows) -> str:
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


def _pair(mean, se, article, count) -> list:
    mark = " *" if article is not None and differs_se(mean, se, article, count) else ""
    return [cell_se(mean, se), "" if article is None else cell(article) + mark]


def _seeds(seeds) -> str:
    return f"{len(seeds)} seeds, {seeds[0]}–{seeds[-1]}"


# --------------------------------------------------------------------------- the single-head laboratory


def _headline(n: dict) -> str:
    """The article's opening table (accuracy at 32 and 256), ours beside it."""
    t, r = n["tournament"], n["rescaled"]
    rows = []
    for key in ("nope", "sinusoidal", "rope", "rope_pi", "alibi"):
        art = pt.ARTICLE_TOURNAMENT.get(key) or {"32": pt.ARTICLE_TOURNAMENT["rope"]["32"], **pt.ARTICLE_RESCALED[key]}
        # RoPE + PI reads length 32 at kappa = 32/32 = 1: the plain RoPE reading of the same heads
        src = t if key in t["accuracy"] else r
        at32 = (t["accuracy"]["rope"]["32"], t["stderr"]["rope"]["32"]) if src is r else None
        m32, s32 = at32 or (src["accuracy"][key]["32"], src["stderr"][key]["32"])
        m256, s256 = src["accuracy"][key]["256"], src["stderr"][key]["256"]
        rows.append(
            [
                READER_LABELS[key],
                *_pair(m32, s32, art["32"], pt.TEST_COUNT),
                *_pair(m256, s256, art["256"], pt.TEST_COUNT),
            ]
        )
    return (
        f"Accuracy of single heads trained at length 32 and read at 32 and 256 (mean ± SE over {_seeds(t['seeds'])}; "
        "* = more than 3 SE from the article).\n\n" + _md(["scheme", "at 32", "article", "at 256", "article"], rows)
    )


def _tournament(n: dict) -> str:
    t = n["tournament"]
    lengths = list(t["accuracy"]["rope"])
    rows = []
    for s, by_n in t["accuracy"].items():
        art = pt.ARTICLE_TOURNAMENT.get(s, {})
        rows.append(
            [READER_LABELS[s]]
            + [c for k in lengths for c in _pair(by_n[k], t["stderr"][s][k], art.get(k), pt.TEST_COUNT)]
        )
    for label, key in (
        ("best bag reader, exact (Prop. 1)", "bag_reader"),
        ("best bag reader, our tests", "bag_reader_heldout"),
    ):
        rows.append([label] + [c for k in lengths for c in (cell(t[key][k]), "")])
    table = _md(["scheme"] + [h for k in lengths for h in (k, "article")], rows)
    first = [[READER_LABELS[s]] + [cell(t["first_three"][s][k]) for k in lengths] for s in t["accuracy"]]
    return (
        f"Mean ± standard error over {_seeds(t['seeds'])}; * = more than 3 standard errors from the article's "
        "figure.\n\n"
        f"{table}\n\nThe mean of the first three seeds (the article's count):\n\n{_md(['scheme', *lengths], first)}"
    )


def _rescaled(n: dict) -> str:
    r = n["rescaled"]
    lengths = list(r["accuracy"]["rope"])
    rows = [
        [READER_LABELS[k]]
        + [c for m in lengths for c in _pair(v[m], r["stderr"][k][m], pt.ARTICLE_RESCALED[k].get(m), pt.TEST_COUNT)]
        for k, v in r["accuracy"].items()
    ]
    return f"Mean ± SE over {_seeds(r['seeds'])}.\n\n" + _md(
        ["RoPE head read with"] + [h for m in lengths for h in (m, "article")], rows
    )


def _rebound(n: dict) -> str:
    data = n["rebound"]
    st = pt.rebound_stats(data)
    m, se = st["mean"], st["stderr"]
    a = pt.ARTICLE_REBOUND_SEED0
    first = data[sorted(data, key=int)[0]]
    rows = [
        [
            "score at r = 1",
            cell_se(m["score_r1"], se["score_r1"], 1),
            cell(first["score_r1"], 1),
            cell(a["score_r1"], 2),
        ],
        [
            "score at r = 31 (the window's edge)",
            cell_se(m["score_r31"], se["score_r31"], 1),
            cell(first["score_r31"], 1),
            cell(a["score_r31"], 2),
        ],
    ]
    for mark, label in (
        ("first_trough", "first trough"),
        ("deepest", "deepest point"),
        ("peak", "highest past the window"),
    ):
        rows.append(
            [
                f"{label}: offset r",
                cell_se(m[mark + "_r"], se[mark + "_r"], 1),
                str(first[mark][0]),
                str(a[mark][0]),
            ]
        )
        rows.append(
            [
                f"{label}: score",
                cell_se(m[mark + "_score"], se[mark + "_score"], 1),
                cell(first[mark][1], 1),
                cell(a[mark][1], 2),
            ]
        )
    table = _md(
        ["RoPE rebound", f"ours, {_seeds(list(data))}", f"ours, seed {sorted(data, key=int)[0]}", "article, seed 0"],
        rows,
    )
    k = len(data)
    return (
        f"{table}\n\nSeeds whose score at the window's edge is positive (the article's +7.70): "
        f"{round(st['positive_edge'] * k)} of {k}; whose first trough lies within 3 of r = 31: "
        f"{round(st['trough_at_edge'] * k)} of {k}; whose largest amplitude is plane 3: "
        f"{round(st['top_plane_3'] * k)} of {k}."
    )


def _sinusoidal(n: dict) -> str:
    s, d = n["sinusoidal"], n["thm2"]["sinusoidal_defect"]
    rows = [
        [
            "δ(W_Q W_K^T) at initialization",
            cell_se(d["mean"]["init"], d["stderr"]["init"]),
            cell(float(np.mean(ARTICLE_DEFECT["init"]))),
        ],
        [
            "δ(W_Q W_K^T) trained",
            cell_se(d["mean"]["trained"], d["stderr"]["trained"]),
            cell(float(np.mean(ARTICLE_DEFECT["trained"]))),
        ],
    ]
    for key, label, art in (
        ("projected", "pos-pos term projected", pt.ARTICLE_PROJECTED),
        ("shifted", "query shifted to 31", pt.ARTICLE_SHIFTED),
    ):
        for k in s[key]:
            ours, theirs = _pair(s[key][k], s["stderr"][key][k], art.get(k), pt.TEST_COUNT)
            rows.append([f"{label}, accuracy at {k}", ours, theirs or "—"])
    rows.append(
        [
            "spread across keys, pos-content / pos-pos",
            cell_se(s["spread_ratio_mean"], s["spread_ratio_stderr"]),
            "within 6% of 1",
        ]
    )
    return f"Sinusoidal heads, mean ± SE over {_seeds(s['seeds'])} (a random 16 × 16 matrix: δ = 0.968).\n\n" + _md(
        ["diagnostic", "ours", "article (mean of 3 seeds)"], rows
    )


def _kernels(n: dict) -> str:
    k = n["tournament"]["offset_kernel"]
    offsets = list(next(iter(k.values())))
    rows = [[READER_LABELS[s]] + [cell(v[r], 2) for r in offsets] for s, v in k.items()]
    return "Bias a key r back from the query token adds to its score, mean of seeds:\n\n" + _md(
        ["scheme", *offsets], rows
    )


# --------------------------------------------------------------------------- the finance case study


def _filings_accuracy(n: dict) -> str:
    f = n["filings"]
    n_all, n_far = pf.ARTICLE_CORPUS["queries"], pf.ARTICLE_CORPUS["far_queries"]
    rows = []
    for reader, (art_all, art_far) in pf.ARTICLE_ACCURACY.items():
        acc, se = f["accuracy"][reader], f["stderr"][reader]
        rows.append(
            [
                READER_LABELS[reader],
                *_pair(acc["all"], se["all"], art_all, n_all),
                *_pair(acc["far"], se["far"], art_far, n_far),
            ]
        )
    return f"Mean ± SE over {_seeds(f['seeds'])}; * = more than 3 SE from the article.\n\n" + _md(
        ["reader", "all", "article", "> 32 back", "article"], rows
    )


def _filings_horizon(n: dict) -> str:
    f = n["filings"]
    rows = []
    for on, st in f["horizon_stats"].items():
        m, se = st["mean"], st["stderr"]
        art = [v for (o, _), v in pf.ARTICLE_HORIZON.items() if o == on]
        every = sum(v == 1.0 for v in st["per_seed"]["inside_half"])
        beyond = [v for v in st["per_seed"]["beyond"] if v is not None]
        rows.append(
            [
                on,
                cell_se(m["horizon"], se["horizon"], 1),
                cell(float(np.mean([a[0] for a in art])), 1),
                f"{every} of {len(st['seeds'])}",
                cell_se(m["inside_half"], se["inside_half"]),
                cell_se(m["beyond"], se["beyond"]),
                f"{cell(min(beyond))}–{cell(max(beyond))}",
                f"{cell(min(a[2] for a in art))}–{cell(max(a[2] for a in art))}",
            ]
        )
    headers = [
        "ALiBi heads trained on",
        "horizon W/s",
        "article",
        "answer every query inside half",
        "inside half",
        "beyond",
        "beyond, range over seeds",
        "article, range",
    ]
    return (
        f"Mean ± SE over {_seeds(f['seeds'])} per stream (article: 3 seeds, every head answers every query "
        "inside half).\n\n" + _md(headers, rows)
    )


def _filings_case(n: dict) -> str:
    case = n["filings"]["case"]
    names, at = case["companies"], case["the_company"]
    fenwick = case["truth"][case["last_mention"]]
    shown = sorted(case["answers"]["nope"], key=int)
    rows = []
    for reader in pf.FILING_READERS:
        answers = case["at_the_company"][reader]
        right_there = sum(a == fenwick for a in answers)
        first = ", ".join(names[case["answers"][reader][s][at]].split()[0] for s in shown)
        from_last = np.asarray(case["right_from_last"][reader], dtype=float)
        right = np.asarray(case["right"][reader], dtype=float)
        rows.append(
            [
                READER_LABELS[reader],
                first,
                f"{right_there} of {len(answers)}",
                cell_se(from_last.mean(), from_last.std(ddof=1) / np.sqrt(from_last.size), 1),
                cell_se(right.mean(), right.std(ddof=1) / np.sqrt(right.size), 1),
            ]
        )
    tail = len(case["tokens"]) - case["last_mention"]
    headers = [
        "reader",
        f"answer at token {at}, seeds {', '.join(shown)}",
        f"{names[fenwick]} at {at}, seeds",
        f"right from {case['last_mention']} on (of {tail})",
        f"right (of {case['queries']})",
    ]
    return _md(headers, rows)


def _differences(n: dict) -> str:
    """Every trained cell more than 3 SE from the article's figure (our seeds, the article's three, the binomial
    and, where ``numbers.json`` holds ``fidelity``, the test draw joined) or starred in the tables
    (:func:`poskernels.page.fidelity.differing`), with its cause where known; then the article's other figures."""
    out = []
    for c in fidelity.differing(n):
        where = "filings, " if c["section"] == "filings" else ""
        what = f"{c['column']} queries" if c["section"] == "filings" else f"at {c['column']}"
        draw = (
            ""
            if c["draw"] is None
            else f", test draw {cell(c['draw'])}, the article's three seeds {cell(c['article_seeds'])}"
        )
        within = "" if c["z"] > fidelity.Z else "; starred by the seeds' SE and the binomial alone, within 3 joined"
        line = (
            f"{where}{fidelity.LABELS[c['reader']]}, {what}: {cell_se(c['ours'], c['stderr'])} against"
            f" {cell(c['article'])} ({c['z']:.1f} SE{draw}{within})"
        )
        out.append(line + (f": {c['cause']}" if c["cause"] else ""))
    out += _printed_differences(n)
    return "\n".join(f"- {line}" for line in out) if out else "- none"


def _printed_differences(n: dict) -> list[str]:
    """The article's figures that are not a mean over seeds (a range, a share of seeds, a count of answers), where
    ours differ: a range end by more than 0.05 (the article says "about"), a share or a count at all."""
    out = []
    t, sin = n["tournament"], n["sinusoidal"]
    for length, (lo, hi) in pt.ARTICLE_ROPE_RANGE.items():
        ours = t.get("seed_range", {}).get("rope", {}).get(length)
        if ours and max(abs(ours["first_three"][0] - lo), abs(ours["first_three"][1] - hi)) > 0.05:
            a, b = ours["first_three"]
            c, d = ours["all"]
            out.append(
                f"RoPE at {length}, range of the first three seeds: {cell(a)} to {cell(b)} (all {len(t['seeds'])}:"
                f" {cell(c)} to {cell(d)}) against about {cell(lo, 2)} to {cell(hi, 2)}"
            )
    share = sin.get("spread_within_6pct")
    if share is not None and share != pt.ARTICLE_SPREAD_WITHIN_6PCT:
        k = round(share * len(sin["spread_ratio"]))
        out.append(
            f"sinusoidal head's two spreads within 6% of each other: {k} seeds of {len(sin['spread_ratio'])}"
            " against every seed"
        )
    case = n["filings"]["case"]
    names = case["companies"]
    marrow, fenwick = names.index("Marrow Freight"), case["truth"][case["last_mention"]]
    first = [case["at_the_company"][r][0] for r in pf.PLAIN_READERS]
    twelve = [a for r in pf.PLAIN_READERS for a in case["at_the_company"][r][:3]]
    plain, at = len(pf.PLAIN_READERS), case["the_company"]
    if (m := sum(a == marrow for a in first)) != pf.ARTICLE_CASE["marrow_in_first_seed"]:
        out.append(
            f"laboratory filing at token {at}, plain heads answering Marrow Freight in seed {case['seeds'][0]}:"
            f" {m} of {plain} against {pf.ARTICLE_CASE['marrow_in_first_seed']} of {plain}"
        )
    if (f := sum(a == fenwick for a in twelve)) != pf.ARTICLE_CASE["fenwick_of_twelve"]:
        out.append(
            f"laboratory filing at token {at}, plain heads' answers that are Fenwick Logistics over the first three"
            f" seeds: {f} of {len(twelve)} against {pf.ARTICLE_CASE['fenwick_of_twelve']} of {len(twelve)}"
        )
    return out


#: Region name -> renderer of the README's markdown from ``numbers.json``.
REGIONS: dict[str, Callable[[dict], str]] = {
    "headline": _headline,
    "tournament": _tournament,
    "rescaled": _rescaled,
    "rebound": _rebound,
    "sinusoidal": _sinusoidal,
    "kernels": _kernels,
    "filings-accuracy": _filings_accuracy,
    "filings-horizon": _filings_horizon,
    "filings-case": _filings_case,
    "differences": _differences,
    "long": lambda numbers: long_markdown(numbers["long"]).strip("\n"),
    "beyond": scheme_table.markdown,
    "beyond-headline": scheme_table.headline,
    "claims-unresolved": unresolved_markdown,
    "claims-all": claims_markdown,
    "filings-distance": pf.distance_markdown,
    "filings-beyond": pf.beyond_markdown,
}


def _section_table(key: str) -> Callable[[dict], str]:
    """A deterministic section's table, exactly as ``poskernels reproduce`` prints it, from ``numbers[key]``."""
    from . import SECTIONS  # the page package imports this module's siblings; read its registry when called

    def render_section(numbers: dict) -> str:
        (section,) = [s for s in SECTIONS if s.key == key and not s.trained]
        return f"```text\n{section.render(numbers[key]).rstrip()}\n```"

    return render_section


for _key in ("prop1", "thm1", "thm2", "def3", "thm3", "prop4", "thm5"):
    REGIONS[f"section-{_key}"] = _section_table(_key)
for _part in printed.PARTS:  # the article's printed figures of each part, ours beside them
    REGIONS[f"printed-{_part}"] = functools.partial(printed.markdown, part=_part)


#: The regions rendered into a documentation page rather than the README: page (from the repository root) -> names.
#: Every other region of :data:`REGIONS` is the README's.
DOC_REGIONS: dict[str, tuple[str, ...]] = {
    "docs/article/order.md": ("printed-order", "section-prop1"),
    "docs/article/clocks.md": ("printed-clocks", "section-thm1", "section-thm2"),
    "docs/article/relative.md": ("printed-relative", "section-def3", "section-thm3"),
    "docs/article/rotations.md": ("printed-rotations", "section-prop4", "section-thm5"),
    "docs/article/window.md": ("tournament", "rescaled", "rebound", "sinusoidal", "kernels", "differences"),
    "docs/article/filings.md": ("filings-accuracy", "filings-horizon", "filings-case"),
    "docs/article/long-context.md": ("long",),
    "docs/guide/beyond.md": ("beyond",),
    "docs/guide/claims.md": ("claims-unresolved", "claims-all"),
    # ``filings-gaps`` of this page is written by ``examples/filings_gaps.py``, not from ``numbers.json``
    "docs/guide/filings.md": ("filings-distance", "filings-beyond"),
}

#: Every page that holds generated regions, relative to the repository's root.
DOCUMENTS: tuple[str, ...] = ("README.md", *DOC_REGIONS)


def render(numbers: dict) -> dict[str, str]:
    """Every region's markdown from a ``numbers.json`` dict (its trained sections must be present).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.

    Returns
    -------
    dict of str to str
        ``{region name: markdown}``, one per renderer of :data:`REGIONS`.

    Raises
    ------
    PosKernelsError
        If a trained section is missing.

    Examples
    --------
    >>> import json
    >>> sorted(render(json.loads(REFERENCE_NUMBERS.read_text()))) == sorted(REGIONS)
    True
    >>> render({"tournament": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: numbers.json lacks the trained section(s) ['filings', 'long', ...
    """
    missing = sorted({"tournament", "rescaled", "rebound", "sinusoidal", "thm2", "filings", "long"} - set(numbers))
    if missing:
        raise PosKernelsError(f"numbers.json lacks the trained section(s) {missing}; got keys {sorted(numbers)}")
    return {name: fn(numbers) for name, fn in REGIONS.items()}


def regions_in(text: str) -> dict[str, str]:
    """The current content of every marked region of ``text`` (name -> text between its markers).

    Parameters
    ----------
    text : str
        A page.

    Returns
    -------
    dict of str to str

    Raises
    ------
    PosKernelsError
        If a region opens inside another, is not closed, or an end marker closes no open region.

    Examples
    --------
    >>> regions_in("a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb")
    {'x': 'old'}
    >>> regions_in("<!-- numbers:x begin -->")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: region 'x' has no end marker
    """
    out, open_name, start = {}, None, 0
    for m in _MARK.finditer(text):
        name, which = m.groups()
        if which == "begin":
            if open_name is not None:
                raise PosKernelsError(f"region {open_name!r} is not closed before {name!r} begins")
            open_name, start = name, m.end()
        else:
            if name != open_name:
                raise PosKernelsError(f"end marker of {name!r} closes no open region; got open {open_name!r}")
            out[name] = text[start : m.start()].strip("\n")
            open_name = None
    if open_name is not None:
        raise PosKernelsError(f"region {open_name!r} has no end marker")
    return out


def rewrite(text: str, regions: dict[str, str], partial: bool = False) -> str:
    """``text`` with every marked region replaced by ``regions[name]``.

    A region not in ``regions`` is an error, unless ``partial``: then it is left as it is, for another writer.

    Parameters
    ----------
    text : str
        A page.
    regions : dict of str to str
        The new content of each region (:func:`render`).
    partial : bool
        Leave the regions ``regions`` lacks as they are.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If a region has no new content and not ``partial``, or the markers are malformed (:func:`regions_in`).

    Examples
    --------
    >>> text = "a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb"
    >>> regions_in(rewrite(text, {"x": "new"})), rewrite(text, {}, partial=True) == text
    ({'x': 'new'}, True)
    >>> rewrite(text, {})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: README regions ['x'] have no renderer; accepted:
    """
    unknown = sorted(set(regions_in(text)) - set(regions))
    if unknown and not partial:
        raise PosKernelsError(f"README regions {unknown} have no renderer; accepted: {', '.join(sorted(regions))}")

    def sub(m):
        if m.group(1) not in regions:
            return m.group(0)
        return f"<!-- numbers:{m.group(1)} begin -->\n{regions[m.group(1)]}\n<!-- numbers:{m.group(1)} end -->"

    return re.sub(r"<!-- numbers:([a-z0-9_-]+) begin -->.*?<!-- numbers:\1 end -->", sub, text, flags=re.S)


def main(argv=None) -> int:
    """Rewrite (or, with ``--check``, verify) the generated regions of the pages from a ``numbers.json``.

    Parameters
    ----------
    argv : list of str, optional
        ``[NUMBERS.json] [PAGE ...] [--check] [--partial]`` (default: ``sys.argv[1:]``; the shipped numbers and
        :data:`DOCUMENTS`).

    Returns
    -------
    int
        ``0``; ``1`` with ``--check`` when a region is stale; ``2`` for a file that cannot be read or a region
        without a renderer.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "page.md"
    >>> _ = page.write_text("<!-- numbers:printed-order begin -->\\nold\\n<!-- numbers:printed-order end -->\\n")
    >>> main([str(REFERENCE_NUMBERS), str(page), "--check"])  # doctest: +ELLIPSIS
    readme: stale regions ['.../page.md:printed-order']
    1
    >>> main([str(REFERENCE_NUMBERS), str(page)])  # doctest: +ELLIPSIS
    readme: 1 regions in 1 pages rendered from .../reference_numbers.json
    0
    >>> main([str(REFERENCE_NUMBERS), str(page), "--check"])
    readme: up to date
    0
    """
    p = argparse.ArgumentParser(prog="python -m poskernels.page.readme", description=__doc__.split("\n")[0])
    p.add_argument(
        "numbers", type=Path, nargs="?", default=REFERENCE_NUMBERS, help="numbers.json (default: the shipped one)"
    )
    p.add_argument("pages", type=Path, nargs="*", help="Markdown pages (default: DOCUMENTS, from the current folder)")
    p.add_argument("--check", action="store_true", help="exit 1 if a region differs from its rendering")
    p.add_argument("--partial", action="store_true", help="leave regions without a renderer here as they are")
    args = p.parse_args(argv)
    pages = args.pages or [Path(d) for d in DOCUMENTS]
    try:
        rendered = render(json.loads(args.numbers.read_text(encoding="utf-8")))
        texts = {page: page.read_text(encoding="utf-8") for page in pages}
        new = {page: rewrite(text, rendered, partial=args.partial) for page, text in texts.items()}
    except (OSError, ValueError, PosKernelsError) as err:
        print(f"readme: error: {err}", file=sys.stderr)
        return 2
    if args.check:
        stale = [
            f"{page}:{k}"
            for page in pages
            for k, v in regions_in(new[page]).items()
            if regions_in(texts[page]).get(k) != v
        ]
        print(f"readme: stale regions {stale}" if stale else "readme: up to date")
        return 1 if stale else 0
    for page in pages:
        if new[page] != texts[page]:
            write_text_atomic(page, new[page])
    count = sum(len(regions_in(t)) for t in new.values())
    print(f"readme: {count} regions in {len(pages)} pages rendered from {args.numbers}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
