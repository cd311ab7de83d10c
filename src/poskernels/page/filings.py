"""Page section for "Finance case study: which company was named last?" (the ``filings`` key of ``numbers.json``).

Everything is computed by :func:`poskernels.experiments.filings.filings_results` (heads trained or loaded from the
cache, results cached as JSON).  The tables print ours as mean ± standard error over the seed block beside the
article's figures, with ``*`` where the two differ by more than three standard errors (the seeds' spread joined with
the binomial error of the article's query count, :func:`poskernels.page.registry.differs_se`).
"""

from __future__ import annotations

from ..experiments.filing_maps import FILING_READERS
from ..experiments.filings import filings_results
from ..experiments.filings_beyond import beyond_results
from ..experiments.readers import reader_label
from .registry import READER_LABELS, Context, Section, cell, cell_se, differs_se, format_table

__all__ = ["FILINGS", "ARTICLE_ACCURACY", "ARTICLE_CORPUS", "ARTICLE_HORIZON", "LABELS", "beyond_markdown",
           "distance_markdown"]  # fmt: skip

# The article's printed figures.  Section "Finance case study", its first paragraph: 300 training and 100
# held-out filings, median length 198 tokens, 8 company mentions, 19,285 queries, 7,895 (41%) far; fourth
# paragraph: the first company named is right on 76.6% of all queries and 73.9% of the far ones.
ARTICLE_CORPUS = {
    "train_docs": 300,
    "test_docs": 100,
    "median_tokens": 198,
    "median_mentions": 8,
    "queries": 19_285,
    "far_queries": 7_895,
    "far_fraction": 0.41,
    "first_named_all": 0.766,
    "first_named_far": 0.739,
}
# Same section, its accuracy table (mean of three seeds; all queries, answer more than 32 back).
ARTICLE_ACCURACY = {
    "nope": (0.613, 0.528),
    "sinusoidal": (0.762, 0.712),
    "rope": (0.878, 0.721),
    "alibi": (0.828, 0.580),
    "rope_pi": (0.991, 0.986),
    "rope_ntk": (0.913, 0.788),
    "rope_yarn": (0.990, 0.985),
}
# Same section, the horizon table: (trained on, seed) -> (horizon W/s, inside half of it, beyond it).
ARTICLE_HORIZON = {
    ("filings", 0): (51.1, 1.000, 0.723),
    ("filings", 1): (53.0, 1.000, 0.487),
    ("filings", 2): (55.8, 1.000, 0.319),
    ("synthetic", 0): (38.7, 1.000, 0.112),
    ("synthetic", 1): (35.8, 1.000, 0.087),
    ("synthetic", 2): (37.0, 1.000, 0.108),
}

# Same section, the laboratory's filing at "the company" (token 109): "In seed 0 the heads without position, with
# the added code, with RoPE, and with ALiBi all answer Marrow Freight ... 5 of the 12 answers across seeds are
# Fenwick."  The four plain readers, the article's three seeds.
PLAIN_READERS = ("nope", "sinusoidal", "rope", "alibi")
ARTICLE_CASE = {"marrow_in_first_seed": 4, "fenwick_of_twelve": 5}

LABELS = {
    reader: READER_LABELS[reader]
    for reader in ("nope", "sinusoidal", "rope", "alibi", "rope_pi", "rope_ntk", "rope_yarn")
}


def _compute(ctx: Context) -> dict:
    out = dict(filings_results(ctx.cache_dir, ctx.log, seeds=ctx.seeds))  # the article's schemes and readers
    out["beyond"] = beyond_results(ctx.cache_dir, ctx.log, seeds=ctx.seeds)  # every registered scheme beyond them
    return out


def _render(data: dict) -> str:
    out = []
    c, a = data["corpus"], ARTICLE_CORPUS
    rows = [
        ["training filings", c["train_docs"], a["train_docs"]],
        ["held-out filings", c["test_docs"], a["test_docs"]],
        ["median length (tokens)", cell(c["median_tokens"], 1), a["median_tokens"]],
        ["median company mentions", cell(c["median_mentions"], 1), a["median_mentions"]],
        ["queries (held out)", c["queries"], a["queries"]],
        ["  answer more than 32 back", c["far_queries"], a["far_queries"]],
        ["  fraction far", cell(c["far_fraction"]), cell(a["far_fraction"], 2)],
        ["first company named is right, all", cell(c["first_named_all"]), cell(a["first_named_all"])],
        ["first company named is right, far", cell(c["first_named_far"]), cell(a["first_named_far"])],
    ]
    out.append(format_table(["corpus", "ours", "article"], rows, title="The synthetic filings"))

    out.append(_accuracy_tables(data))
    out.append(_horizon_table(data))
    out.append(_case_table(data["case"]))
    if "beyond" in data:
        out.append(_beyond_table(data["beyond"]))
    return "\n\n".join(out)


def _beyond_rows(b: dict) -> list[list[str]]:
    acc, se = b["accuracy"], b["stderr"]
    return [[reader_label(s), cell_se(acc[s]["all"], se[s]["all"]), cell_se(acc[s]["far"], se[s]["far"])]
            for s in b["schemes"]]  # fmt: skip


def _beyond_table(b: dict) -> str:
    seeds = b["seeds"]
    title = f"Beyond the article: each scheme trained on filings and read as trained, mean ± SE over {len(seeds)} seeds"
    rows = _beyond_rows(b) + [[reader_label(s), "not read", why] for s, why in b["not_read"].items()]
    return format_table(["scheme", "all", "> 32 back"], rows, title=title)


def _accuracy_tables(data: dict) -> str:
    n_all, n_far = ARTICLE_CORPUS["queries"], ARTICLE_CORPUS["far_queries"]
    acc, se, seeds = data["accuracy"], data["stderr"], data["seeds"]
    rows = []
    for reader in FILING_READERS:
        art_all, art_far = ARTICLE_ACCURACY[reader]
        rows.append(
            [
                LABELS[reader],
                cell_se(acc[reader]["all"], se[reader]["all"]),
                cell(art_all) + ("*" if differs_se(acc[reader]["all"], se[reader]["all"], art_all, n_all) else ""),
                cell(data["first_three"][reader]["all"]),
                cell_se(acc[reader]["far"], se[reader]["far"]),
                cell(art_far) + ("*" if differs_se(acc[reader]["far"], se[reader]["far"], art_far, n_far) else ""),
                cell(data["first_three"][reader]["far"]),
            ]
        )
    title = (
        f"Accuracy, mean ± SE over {len(seeds)} seeds ({seeds[0]}-{seeds[-1]}; * differs from the article by > 3 SE);"
        f" kappa = {data['kappa']}"
    )
    headers = ["reader", "all", "article", "first 3", "> 32 back", "article", "first 3"]
    out = [format_table(headers, rows, title=title)]
    rows = [
        [LABELS[r], part] + [cell(v) for v in data["per_seed"][r][part]]
        for r in FILING_READERS
        for part in ("all", "far")
    ]
    out.append(format_table(["reader", "queries", *map(str, seeds)], rows, title="Per seed"))
    return "\n\n".join(out)


def _horizon_table(data: dict) -> str:
    rows, index = [], {}
    for row in data["horizon"]:
        i = index[row["trained_on"]] = index.get(row["trained_on"], -1) + 1  # the article's seeds are the first 3
        art = ARTICLE_HORIZON.get((row["trained_on"], i), (None, None, None))
        rows.append(
            [
                f"{row['trained_on']}, seed {row['seed']}",
                cell(row["W"], 1),
                cell(row["horizon"], 1),
                cell(art[0], 1),
                f"{cell(row['inside_half'])} ({row['inside_queries']})",
                cell(art[1]),
                f"{cell(row['beyond'])} ({row['beyond_queries']})",
                cell(art[2]),
            ]
        )
    for trained_on, st in data["horizon_stats"].items():
        m, se = st["mean"], st["stderr"]
        art = [v for (on, _), v in ARTICLE_HORIZON.items() if on == trained_on]
        art_mean = [sum(a[k] for a in art) / len(art) for k in range(3)]
        rows.append(
            [
                f"{trained_on}, mean ± SE",
                cell_se(m["W"], se["W"], 1),
                cell_se(m["horizon"], se["horizon"], 1),
                cell(art_mean[0], 1),
                cell_se(m["inside_half"], se["inside_half"]),
                cell(art_mean[1]),
                cell_se(m["beyond"], se["beyond"]),
                cell(art_mean[2]),
            ]
        )
    headers = ["trained on", "W", "horizon W/s", "article", "inside half (queries)", "article", "beyond", "article"]
    title = "ALiBi horizon (Theorem 3 (iii)); W = range of q k_v / tau over the vocabulary, offsets r from the query"
    return format_table(headers, rows, title=title)


def _case_table(case: dict) -> str:
    names, last, at = case["companies"], case["last_mention"], case["the_company"]
    fenwick = case["truth"][last]
    shown = sorted(case["answers"][next(iter(FILING_READERS))], key=int)
    rows = []
    for reader in FILING_READERS:
        answers = case["answers"][reader]
        rows.append(
            [
                LABELS[reader],
                # a head may answer a symbol no company of this filing carries: shown as the bare symbol
                ", ".join(names[a] if a < len(names) else f"symbol {a}" for a in (answers[s][at] for s in shown)),
                " ".join(map(str, case["right_from_last"][reader])),
                " ".join(map(str, case["right"][reader])),
            ]
        )
    seeds = case["seeds"]
    title = (
        f"The laboratory's filing ({len(case['tokens'])} tokens): {names[fenwick]} named last at token {last}, "
        f"'the company' at {at}; answers of seeds {', '.join(shown)}, counts per seed {seeds[0]}-{seeds[-1]}"
    )
    headers = [
        "reader",
        f"answer at token {at}",
        f"{names[fenwick]} from {last} on (of {len(case['tokens']) - last})",
        f"right (of {case['queries']})",
    ]
    return format_table(headers, rows, title=title)


FILINGS = Section(
    key="filings",
    title="Finance case study: which company was named last?",
    compute=_compute,
    render=_render,
    trained=True,
)


def distance_markdown(numbers: dict) -> str:
    """Each reader's accuracy by the distance of the answer (tokens back from the asked position), mean over seeds,
    with the queries in each bin and the share of them whose answer is the filer (Markdown).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with its ``filings`` section (``by_distance``, ``horizon_stats``, ``seeds``).

    Returns
    -------
    str
        The table, then a sentence on the ALiBi heads beyond their horizon.

    Examples
    --------
    >>> import json
    >>> from poskernels.page.readme import REFERENCE_NUMBERS
    >>> distance_markdown(json.loads(REFERENCE_NUMBERS.read_text())).splitlines()[0]
    '| reader | 0-3 back | 4-15 back | 16-32 back | 33-64 back | 65-128 back | 129+ back |'
    """
    f = numbers["filings"]
    d = f["by_distance"]
    bins = list(d["bins"])
    header = "| reader | " + " | ".join(f"{b} back" for b in bins) + " |"
    lines = [header, "|---" * (len(bins) + 1) + "|"]
    lines.append("| queries | " + " | ".join(str(d["queries"][b]) for b in bins) + " |")
    lines.append("| answer is the filer | " + " | ".join(cell(d["filer_share"][b]) for b in bins) + " |")
    for reader in FILING_READERS:
        means = []
        for b in bins:
            values = [v for v in d["per_seed"][reader][b] if v is not None]
            means.append(cell(sum(values) / len(values)) if values else "—")
        lines.append(f"| {LABELS[reader]} | " + " | ".join(means) + " |")
    h = f["horizon_stats"]
    beyond = {t: (h[t]["mean"]["beyond"], h[t]["stderr"]["beyond"]) for t in h}
    not_filer = {t: (h[t]["mean"].get("beyond_not_filer"), h[t]["stderr"].get("beyond_not_filer")) for t in h}
    lines += [
        "",
        f"ALiBi heads beyond their horizon, mean ± SE over {len(f['seeds'])} seeds: all queries"
        f" {cell_se(*beyond['filings'])} (filings) against {cell_se(*beyond['synthetic'])} (stream); queries whose"
        f" answer is not the filer {cell_se(*not_filer['filings'])} against {cell_se(*not_filer['synthetic'])}.",
    ]
    return "\n".join(lines)


def beyond_markdown(numbers: dict) -> str:
    """The schemes beyond the article on the held-out filings, each read as trained: accuracy on all queries and on
    those whose answer is more than 32 tokens back, mean ± SE over the seeds (Markdown).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict with ``filings.beyond``.

    Returns
    -------
    str
        A sentence, then a row per scheme (and one per scheme not read, saying why).

    Examples
    --------
    >>> b = {"schemes": ["t5"], "accuracy": {"t5": {"all": 0.9, "far": 0.8}},
    ...      "stderr": {"t5": {"all": 0.01, "far": 0.02}}, "seeds": [0, 1], "not_read": {}}
    >>> print(beyond_markdown({"filings": {"beyond": b}}).splitlines()[-1])
    | T5 buckets (beyond) | 0.900 ± 0.010 | 0.800 ± 0.020 |
    """
    b = numbers["filings"]["beyond"]
    lines = [f"Mean ± SE over {len(b['seeds'])} seeds, each head read as trained on the held-out filings.", ""]
    lines += ["| scheme | all | > 32 back |", "|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in _beyond_rows(b)]
    for s, why in b["not_read"].items():
        lines.append(f"| {reader_label(s)} | not read: {why} | |")
    return "\n".join(lines)
