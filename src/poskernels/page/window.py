"""Page sections for "Past the training window": the tournament and its diagnostics (Theorem 5's census, which
the article states beside RoPE, is in :mod:`poskernels.page.rotations`).

The trained keys of ``numbers.json`` are all computed by
:func:`poskernels.experiments.laboratory.run_laboratory` (:func:`lab_section`), which trains or loads the heads once
and caches the result:

- ``tournament``: ``accuracy[scheme][n]`` (mean over the seed block), ``stderr[scheme][n]``, ``per_seed[scheme][n]``,
  ``first_three`` (the mean of the first three seeds, the article's count), ``seeds``, the best bag reader (exact,
  and on the same test sequences), the learned offset kernels of ALiBi, T5 and Shaw, the settings;
- ``rescaled``: ``accuracy[reader][n]`` (and ``stderr``, ``per_seed``) for the RoPE heads re-read with PI,
  NTK-aware and YaRN at ``kappa = n/32``;
- ``rebound``: per seed, the RoPE head's score of a marked key against its offset (landmarks, plane amplitudes);
- ``sinusoidal``: the commutant-projected and query-shifted re-reads (mean, ``stderr``, ``per_seed``), the spreads
  of the score's terms;

The tables print ours as mean ± standard error over the seeds beside the article's figure, with ``*`` where
the two differ by more than three standard errors (:func:`poskernels.page.registry.differs_se`: the seeds'
spread joined with the binomial error of a 2,000-sequence test).
"""

from __future__ import annotations

import copy

import numpy as np

from ..experiments.held_out import TEST_COUNT
from ..experiments.laboratory import run_laboratory
from ..experiments.rescaled import RESCALED_LENGTHS
from ..experiments.tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES, TEST_LENGTHS
from ..seeds import mean_stderr
from .registry import READER_LABELS, Context, Section, cell, cell_se, differs_se, format_table

__all__ = [
    "ARTICLE_RESCALED",
    "ARTICLE_TOURNAMENT",
    "LABELS",
    "REBOUND",
    "RESCALED",
    "SINUSOIDAL",
    "TOURNAMENT",
    "differs",
    "lab_section",
    "rebound_stats",
]


# The article's printed figures, shown beside ours.  Section "Past the training window", its first table
# (accuracy as the mean of three seeds; "—" for the learned table past its length).
ARTICLE_TOURNAMENT = {
    "nope": {"32": 0.542, "64": 0.367, "128": 0.286, "256": 0.237},
    "sinusoidal": {"32": 0.996, "64": 0.201, "128": 0.134, "256": 0.142},
    "learned": {"32": 0.989, "64": None, "128": None, "256": None},
    "rope": {"32": 1.000, "64": 0.947, "128": 0.872, "256": 0.466},
    "alibi": {"32": 0.999, "64": 0.979, "128": 0.978, "256": 0.978},
}
# Same section, its second paragraph: "at 256 its three seeds range from about 0.31 to 0.68"; and "at length 32
# their spreads across keys are within 6% of each other in every seed" (the share of seeds, 1).
ARTICLE_ROPE_RANGE = {"256": (0.31, 0.68)}
ARTICLE_SPREAD_WITHIN_6PCT = 1.0
# Same section, "Re-reading the trained RoPE heads with each map, with no further training".
ARTICLE_RESCALED = {
    "rope": {"64": 0.947, "128": 0.872, "256": 0.466},
    "rope_pi": {"64": 0.998, "128": 0.980, "256": 0.917},
    "rope_ntk": {"64": 0.970, "128": 0.966, "256": 0.977},
    "rope_yarn": {"64": 0.998, "128": 0.979, "256": 0.914},
}
# Same section: seed 0's rebound (score at r = 1, first trough, deepest point, peak past the window);
# Figure B adds the score at r = 31, 7.70.
ARTICLE_REBOUND_SEED0 = {"score_r1": 114.10, "score_r31": 7.70, "first_trough": [34, 5.91], "deepest": [90, -55.86]}
ARTICLE_REBOUND_SEED0["peak"] = [181, 84.14]
# Section "Past the training window": projected re-read and query shift at 64, 128, 256 ("—": not printed).
ARTICLE_PROJECTED = {"64": 0.202, "128": 0.136, "256": 0.143}
ARTICLE_SHIFTED = {"64": 0.769, "128": None, "256": 0.313}

LABELS = READER_LABELS


def differs(mean, stderr, article, count: int = TEST_COUNT) -> bool:
    """:func:`poskernels.page.registry.differs_se` for the tournament's ``TEST_COUNT`` test sequences.

    Parameters
    ----------
    mean, stderr : float or None
        Our mean over seeds and its standard error.
    article : float or None
        The article's figure.
    count : int
        Items of the test.

    Returns
    -------
    bool

    Examples
    --------
    >>> differs(0.95, 0.01, 0.947), differs(0.70, 0.01, 0.872)
    (False, True)
    """
    return differs_se(mean, stderr, article, count)


def _pair(mean, stderr, article) -> list:
    if article is None and mean is None:
        return ["—", ""]
    mark = "*" if differs(mean, stderr, article) else ""
    return [cell_se(mean, stderr), "" if article is None else f"{cell(article)}{mark}"]


def _seed_range(seeds) -> str:
    return f"{len(seeds)} seeds ({seeds[0]}-{seeds[-1]})"


def _per_seed_table(data: dict, rows_of, lengths, title: str) -> str:
    """Rows ``(label, n)`` and one column per seed."""
    seeds = data["seeds"]
    rows = [[label, n] + [cell(v) for v in data["per_seed"][key][n]] for key, label in rows_of for n in lengths]
    return format_table(["", "n", *map(str, seeds)], rows, title=title)


def lab_section(ctx: Context, key: str) -> dict:
    """Key ``key`` of :func:`poskernels.experiments.laboratory.run_laboratory`'s result for ``ctx`` (a copy).

    The run is read once per context (``ctx.runs``): the five sections it feeds share it.

    Parameters
    ----------
    ctx : Context
        The page's context (cache folder, seeds, the runs read so far).
    key : str
        A section of the laboratory's result (``"rebound"``, ...).

    Returns
    -------
    dict
        A deep copy: a section may be edited without touching the run the others share.

    Examples
    --------
    >>> ctx = Context(first_seed=0)
    >>> ctx.runs["laboratory", str(ctx.cache_dir), ctx.seeds] = {"rebound": {"0": {"peak": [180, 80.0]}}}
    >>> part = lab_section(ctx, "rebound")  # read from ctx.runs: nothing trains
    >>> part, part is ctx.runs["laboratory", str(ctx.cache_dir), ctx.seeds]["rebound"]
    ({'0': {'peak': [180, 80.0]}}, False)
    """
    name = ("laboratory", str(ctx.cache_dir), ctx.seeds)
    if name not in ctx.runs:
        ctx.runs[name] = run_laboratory(ctx.cache_dir, ctx.log, seeds=ctx.seeds)
    # a copy: numbers.json's sections may be merged into or edited; the run they share must not be
    return copy.deepcopy(ctx.runs[name][key])


# --------------------------------------------------------------------------- tournament


def _tournament(ctx: Context) -> dict:
    return lab_section(ctx, "tournament")


def _tournament_render(data: dict) -> str:
    lengths = [str(n) for n in TEST_LENGTHS]
    headers = ["scheme"] + [h for n in lengths for h in (n, "article")]
    rows = []
    schemes = [s for s in ARTICLE_SCHEMES + EXTRA_SCHEMES if s in data["accuracy"]]
    for s in schemes:
        art = ARTICLE_TOURNAMENT.get(s, {})
        rows.append(
            [LABELS[s]] + [c for n in lengths for c in _pair(data["accuracy"][s][n], data["stderr"][s][n], art.get(n))]
        )
    rows.append(["best bag reader, exact"] + [c for n in lengths for c in (cell(data["bag_reader"][n]), "")])
    rows.append(
        ["best bag reader, same tests"] + [c for n in lengths for c in (cell(data["bag_reader_heldout"][n]), "")]
    )
    title = f"Accuracy, mean ± standard error over {_seed_range(data['seeds'])} (* differs from the article by > 3 SE)"
    out = [format_table(headers, rows, title=title)]
    first = [[LABELS[s]] + [cell(data["first_three"][s][n]) for n in lengths] for s in schemes]
    out.append(format_table(["scheme", *lengths], first, title="Mean of the first three seeds (the article's count)"))
    out.append(_per_seed_table(data, [(s, LABELS[s]) for s in schemes], lengths, "Per seed"))

    offsets = list(next(iter(data["offset_kernel"].values())))
    rows = [[LABELS[s]] + [f"{data['offset_kernel'][s][r]:.2f}" for r in offsets] for s in data["offset_kernel"]]
    out.append(
        format_table(
            ["bias at offset r", *offsets], rows, title="Learned kernels over offsets (query token; mean of seeds)"
        )
    )
    st = data["settings"]
    out.append(
        f"settings: d = {st['d']}, {st['steps']} Adam steps at length {st['n_train']}, batch {st['batch']} fresh "
        f"each step, lr {st['lr']}, betas {st['betas']}, eps {st['eps']}; E ~ N(0, {st['embed_std']}^2), each "
        f"map ~ N(0, {st['map_std']}^2); ALiBi slope {st['alibi_slope']}; T5 {st['t5'][0]} buckets to "
        f"{st['t5'][1]}; Shaw clip K = {st['shaw_clip']}"
    )
    return "\n\n".join(out)


# --------------------------------------------------------------------------- rescaled


def _rescaled(ctx: Context) -> dict:
    return lab_section(ctx, "rescaled")


def _rescaled_render(data: dict) -> str:
    lengths = [str(n) for n in RESCALED_LENGTHS]
    headers = ["RoPE head read with"] + [h for n in lengths for h in (n, "article")]
    rows = [
        [LABELS[r]]
        + [c for n in lengths for c in _pair(data["accuracy"][r][n], data["stderr"][r][n], ARTICLE_RESCALED[r].get(n))]
        for r in data["accuracy"]
    ]
    kappas = ", ".join(f"{k:g}" for k in data["kappa"].values())
    title = f"Re-read at kappa = n/32 ({kappas}), no further training; mean ± SE over {_seed_range(data['seeds'])}"
    out = [format_table(headers, rows, title=title)]
    first = [[LABELS[r]] + [cell(data["first_three"][r][n]) for n in lengths] for r in data["accuracy"]]
    out.append(format_table(["reader", *lengths], first, title="Mean of the first three seeds"))
    out.append(_per_seed_table(data, [(r, LABELS[r]) for r in data["accuracy"]], lengths, "Per seed"))
    return "\n\n".join(out)


# --------------------------------------------------------------------------- rebound


def _rebound(ctx: Context) -> dict:
    return lab_section(ctx, "rebound")


def rebound_stats(data: dict, edge: int = 31) -> dict:
    """Mean and standard error over seeds of each landmark of the rebound, and the share of seeds with a property.

    Parameters
    ----------
    data : dict
        ``{seed: landmarks}``: ``score_r1``, ``score_r{edge}``, ``first_trough``, ``deepest``, ``peak`` (each
        ``[r, score]``) and ``top_plane``.
    edge : int
        The window's edge ``r``.

    Returns
    -------
    dict
        ``mean`` and ``stderr`` of ``score_r1``, ``score_r31``, ``first_trough_r`` / ``_score``, ``deepest_r`` /
        ``_score``, ``peak_r`` / ``_score``; ``positive_edge`` (share of seeds scoring a key at the window's edge
        above 0), ``trough_at_edge`` (share whose first trough lies within 3 of ``r = 31``), ``top_plane_3``.

    Examples
    --------
    >>> one = {"score_r1": 100.0, "score_r31": 5.0, "first_trough": [33, 4.0], "deepest": [90, -50.0],
    ...        "peak": [180, 80.0], "top_plane": 3}
    >>> rebound_stats({"0": one, "1": {**one, "score_r31": -1.0}})["positive_edge"]
    0.5
    """
    seeds = list(data)
    values = {
        "score_r1": [data[s]["score_r1"] for s in seeds],
        f"score_r{edge}": [data[s][f"score_r{edge}"] for s in seeds],
    }
    for mark in ("first_trough", "deepest", "peak"):
        values[f"{mark}_r"] = [data[s][mark][0] for s in seeds]
        values[f"{mark}_score"] = [data[s][mark][1] for s in seeds]
    stats = {k: mean_stderr(v) for k, v in values.items()}
    return {
        "mean": {k: m for k, (m, _) in stats.items()},
        "stderr": {k: se for k, (_, se) in stats.items()},
        "positive_edge": float(np.mean([data[s][f"score_r{edge}"] > 0 for s in seeds])),
        "trough_at_edge": float(np.mean([abs(data[s]["first_trough"][0] - edge) <= 3 for s in seeds])),
        "top_plane_3": float(np.mean([data[s]["top_plane"] == 3 for s in seeds])),
    }


def _rebound_render(data: dict) -> str:
    headers = ["seed", "r = 1", "r = 31", "first trough", "deepest", "peak past 31", "top plane"]

    def at(pair):
        return f"{pair[1]:.2f} at {pair[0]}"

    rows = [
        [seed, d["score_r1"], d["score_r31"], at(d["first_trough"]), at(d["deepest"]), at(d["peak"]), d["top_plane"]]
        for seed, d in data.items()
    ]
    st = rebound_stats(data)
    m, se = st["mean"], st["stderr"]

    def at_se(mark):
        return f"{cell_se(m[mark + '_score'], se[mark + '_score'], 1)} at {cell_se(m[mark + '_r'], se[mark + '_r'], 1)}"

    rows.append(
        [
            "mean ± SE",
            cell_se(m["score_r1"], se["score_r1"], 1),
            cell_se(m["score_r31"], se["score_r31"], 1),
            at_se("first_trough"),
            at_se("deepest"),
            at_se("peak"),
            f"3 in {st['top_plane_3']:.0%}",
        ]
    )
    a = ARTICLE_REBOUND_SEED0
    rows.append(
        ["article, 0", a["score_r1"], a["score_r31"], at(a["first_trough"]), at(a["deepest"]), at(a["peak"]), 3]
    )
    title = "RoPE: pre-softmax score <q, R(-r) k>/tau of the mean marked key at offset r"
    table = format_table(headers, rows, title=title)
    share = (
        f"score at the window's edge (r = 31) above 0 in {st['positive_edge']:.0%} of {len(data)} seeds; "
        f"first trough within 3 of r = 31 in {st['trough_at_edge']:.0%}"
    )
    amps = [[seed] + [f"{v:.1f}" for v in d["amplitudes"]] for seed, d in data.items()]
    planes = [str(j) for j in range(len(next(iter(data.values()))["amplitudes"]))]
    amps_table = format_table(["seed", *planes], amps, title="Per-plane amplitudes rho_j / tau")
    return table + "\n" + share + "\n\n" + amps_table


# --------------------------------------------------------------------------- sinusoidal


def _sinusoidal(ctx: Context) -> dict:
    return lab_section(ctx, "sinusoidal")


def _sinusoidal_render(data: dict) -> str:
    lengths = list(data["projected"])
    headers = ["sinusoidal head", *[h for n in lengths for h in (n, "article")]]
    se = data["stderr"]
    rows = [
        ["pos-pos term projected"]
        + [c for n in lengths for c in _pair(data["projected"][n], se["projected"][n], ARTICLE_PROJECTED.get(n))],
        ["query shifted to 31"]
        + [c for n in lengths for c in _pair(data["shifted"][n], se["shifted"][n], ARTICLE_SHIFTED.get(n))],
    ]
    title = f"Re-read with one change (mean ± SE over {_seed_range(data['seeds'])})"
    out = [format_table(headers, rows, title=title)]
    rows_of = [("projected", "pos-pos term projected"), ("shifted", "query shifted to 31")]
    out.append(_per_seed_table(data, rows_of, lengths, "Per seed"))
    sp = data["spreads"]
    rows = [
        [seed, sp["pos_pos"][i], sp["pos_content"][i], sp["content_pos"][i], data["spread_ratio"][i]]
        for i, seed in enumerate(data["seeds"])
    ]
    rows.append(["mean ± SE", "", "", "", cell_se(data["spread_ratio_mean"], data["spread_ratio_stderr"])])
    out.append(
        format_table(
            ["seed", "pos-pos", "pos-content", "content-pos", "pos-content / pos-pos"],
            rows,
            title="Spread across keys at length 32 (std over keys of each term, /tau)",
        )
    )
    return "\n\n".join(out)


TOURNAMENT = Section(
    "tournament", "Past the training window: the length tournament", _tournament, _tournament_render, True
)
RESCALED = Section("rescaled", "RoPE re-read with PI, NTK-aware and YaRN", _rescaled, _rescaled_render, True)
REBOUND = Section("rebound", "RoPE's score against offset: the rebound", _rebound, _rebound_render, True)
SINUSOIDAL = Section("sinusoidal", "Why the added code collapses", _sinusoidal, _sinusoidal_render, True)
