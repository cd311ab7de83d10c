"""What each generated region of the README and the documentation holds: :data:`REGIONS`, from ``numbers.json``.

A region is a Markdown table (or a few) rendered from a ``numbers.json`` dict by one function of :data:`REGIONS`:
the laboratory's tables (the headline, the tournament, the re-reads, the rebound, the sinusoidal head's diagnostics,
the kernels), the filings', the long-context reading's, the schemes beyond the article, the claims, each
deterministic section's table as ``poskernels reproduce`` prints it, and the article's printed figures beside ours.
:mod:`poskernels.page.readme` writes them into the pages between their markers.

Examples
--------
>>> import json
>>> from poskernels.page.readme import REFERENCE_NUMBERS
>>> REGIONS["section-prop1"](json.loads(REFERENCE_NUMBERS.read_text())).splitlines()[0]
'```text'
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from . import fidelity, printed, scheme_table
from . import filings as pf
from . import window as pt
from .claims_page import claims_markdown, unresolved_markdown
from .clocks import ARTICLE_DEFECT
from .long_context import markdown as long_markdown
from .registry import READER_LABELS, cell, cell_se, differs_se

__all__ = ["REGIONS"]


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
