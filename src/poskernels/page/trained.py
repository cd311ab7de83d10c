"""Page sections for the trained half of "Past the training window": the tournament and its diagnostics.

Keys of ``numbers.json`` (all computed by :func:`poskernels.experiments.laboratory.run_laboratory`, which
trains or loads the heads once and caches the result):

- ``tournament``: ``accuracy[scheme][n]`` (mean of seeds 0-2), ``per_seed[scheme][n]``, the best bag reader
  (exact, and on the same test sequences),
  RoPE's spread over ten seeds, the learned offset kernels of ALiBi, T5 and Shaw, the settings;
- ``rescaled``: ``accuracy[reader][n]`` for the RoPE heads re-read with PI, NTK-aware and YaRN at ``kappa = n/32``;
- ``rebound``: per seed, the RoPE head's score of a marked key against its offset (landmarks, plane amplitudes);
- ``sinusoidal``: the commutant-projected and query-shifted re-reads, the spreads of the score's terms;
- ``thm2.sinusoidal_defect``: ``delta(M)`` of each sinusoidal head at initialization and after training.

The tables print the article's figure beside ours, with ``*`` where the two differ by more than three
standard errors of a 2,000-sequence test (``3 sqrt(p (1 - p) / 2000)``).
"""

from __future__ import annotations

import copy

from ..experiments.laboratory import run_laboratory
from ..experiments.tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES, RESCALED_LENGTHS, TEST_COUNT, TEST_LENGTHS
from ..theory.commutant import expected_random_defect
from .registry import READER_LABELS, Context, Section, cell, format_table, register
from .registry import differs as _differs

__all__ = ["ARTICLE_RESCALED", "ARTICLE_TOURNAMENT", "LABELS", "differs"]

# The article's printed figures, shown beside ours.  Section "Past the training window", its first table
# (accuracy as the mean of three seeds; "—" for the learned table past its length).
ARTICLE_TOURNAMENT = {
    "nope": {"32": 0.542, "64": 0.367, "128": 0.286, "256": 0.237},
    "sinusoidal": {"32": 0.996, "64": 0.201, "128": 0.134, "256": 0.142},
    "learned": {"32": 0.989, "64": None, "128": None, "256": None},
    "rope": {"32": 1.000, "64": 0.947, "128": 0.872, "256": 0.466},
    "alibi": {"32": 0.999, "64": 0.979, "128": 0.978, "256": 0.978},
}
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
# Section "Position as a set of clocks", after Theorem 2: the three sinusoidal heads' defects.
ARTICLE_DEFECT = {"init": [0.970, 0.956, 0.979], "trained": [0.971, 0.955, 0.973]}
# Section "Past the training window": projected re-read and query shift at 64, 128, 256 ("—": not printed).
ARTICLE_PROJECTED = {"64": 0.202, "128": 0.136, "256": 0.143}
ARTICLE_SHIFTED = {"64": 0.769, "128": None, "256": 0.313}

LABELS = READER_LABELS


def differs(ours, article, count: int = TEST_COUNT) -> bool:
    """:func:`poskernels.page.registry.differs` for the tournament's ``TEST_COUNT`` test sequences.

    >>> differs(0.95, 0.947), differs(0.70, 0.872)
    (False, True)
    """
    return _differs(ours, article, count)


def _pair(ours, article) -> list:
    if article is None and ours is None:
        return ["—", ""]
    mark = "*" if differs(ours, article) else ""
    return [cell(ours), "" if article is None else f"{cell(article)}{mark}"]


def _lab(ctx: Context, key: str) -> dict:
    # a copy: numbers.json's sections may be merged into or edited; the laboratory's memo must not be
    return copy.deepcopy(run_laboratory(ctx.cache_dir, ctx.log)[key])


# --------------------------------------------------------------------------- tournament


def _tournament(ctx: Context) -> dict:
    return _lab(ctx, "tournament")


def _tournament_render(data: dict) -> str:
    lengths = [str(n) for n in TEST_LENGTHS]
    headers = ["scheme"] + [h for n in lengths for h in (n, "article")]
    rows = []
    schemes = [s for s in ARTICLE_SCHEMES + EXTRA_SCHEMES if s in data["accuracy"]]
    for s in schemes:
        art = ARTICLE_TOURNAMENT.get(s, {})
        rows.append([LABELS[s]] + [c for n in lengths for c in _pair(data["accuracy"][s][n], art.get(n))])
    rows.append(["best bag reader, exact"] + [c for n in lengths for c in (cell(data["bag_reader"][n]), "")])
    rows.append(
        ["best bag reader, same tests"] + [c for n in lengths for c in (cell(data["bag_reader_heldout"][n]), "")]
    )
    out = [format_table(headers, rows, title="Accuracy, mean of seeds 0-2 (* differs from the article by > 3 SE)")]

    per = [[LABELS[s], str(seed)] + [cell(data["per_seed"][s][n][i]) for n in lengths]
           for s in schemes for i, seed in enumerate(data["seeds"])]  # fmt: skip
    out.append(format_table(["scheme", "seed", *lengths], per, title="Per seed"))

    sp = data["rope_spread"]
    rows = [[stat] + [f"{sp[stat][n]:.3f}" for n in lengths] for stat in ("mean", "std", "min", "max")]
    title = f"RoPE over {len(sp['seeds'])} seeds ({sp['seeds'][0]}-{sp['seeds'][-1]}); the article: 3 seeds"
    out.append(format_table(["RoPE", *lengths], rows, title=title))

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
    return _lab(ctx, "rescaled")


def _rescaled_render(data: dict) -> str:
    lengths = [str(n) for n in RESCALED_LENGTHS]
    headers = ["RoPE head read with"] + [h for n in lengths for h in (n, "article")]
    rows = [
        [LABELS[r]] + [c for n in lengths for c in _pair(data["accuracy"][r][n], ARTICLE_RESCALED[r].get(n))]
        for r in data["accuracy"]
    ]
    kappas = ", ".join(f"{k:g}" for k in data["kappa"].values())
    return format_table(
        headers, rows, title=f"Re-read at kappa = n/32 ({kappas}), no further training; mean of 3 seeds"
    )


# --------------------------------------------------------------------------- rebound


def _rebound(ctx: Context) -> dict:
    return _lab(ctx, "rebound")


def _rebound_render(data: dict) -> str:
    headers = ["seed", "r = 1", "r = 31", "first trough", "deepest", "peak past 31", "top plane"]

    def at(pair):
        return f"{pair[1]:.2f} at {pair[0]}"

    rows = [
        [seed, d["score_r1"], d["score_r31"], at(d["first_trough"]), at(d["deepest"]), at(d["peak"]), d["top_plane"]]
        for seed, d in data.items()
    ]
    a = ARTICLE_REBOUND_SEED0
    rows.append(
        ["article, 0", a["score_r1"], a["score_r31"], at(a["first_trough"]), at(a["deepest"]), at(a["peak"]), 3]
    )
    title = "RoPE: pre-softmax score <q, R(-r) k>/tau of the mean marked key at offset r"
    table = format_table(headers, rows, title=title)
    amps = [[seed] + [f"{v:.1f}" for v in d["amplitudes"]] for seed, d in data.items()]
    planes = [str(j) for j in range(len(next(iter(data.values()))["amplitudes"]))]
    return table + "\n\n" + format_table(["seed", *planes], amps, title="Per-plane amplitudes rho_j / tau")


# --------------------------------------------------------------------------- sinusoidal


def _sinusoidal(ctx: Context) -> dict:
    return _lab(ctx, "sinusoidal")


def _sinusoidal_render(data: dict) -> str:
    lengths = list(data["projected"])
    headers = ["sinusoidal head", *[h for n in lengths for h in (n, "article")]]
    rows = [
        ["pos-pos term projected"]
        + [c for n in lengths for c in _pair(data["projected"][n], ARTICLE_PROJECTED.get(n))],
        ["query shifted to 31"] + [c for n in lengths for c in _pair(data["shifted"][n], ARTICLE_SHIFTED.get(n))],
    ]
    out = [format_table(headers, rows, title="Re-read with one change (mean of 3 seeds)")]
    sp = data["spreads"]
    rows = [
        [i, sp["pos_pos"][i], sp["pos_content"][i], sp["content_pos"][i], data["spread_ratio"][i]]
        for i in range(len(data["spread_ratio"]))
    ]
    out.append(
        format_table(
            ["seed", "pos-pos", "pos-content", "content-pos", "pos-content / pos-pos"],
            rows,
            title="Spread across keys at length 32 (std over keys of each term, /tau)",
        )
    )
    return "\n\n".join(out)


# --------------------------------------------------------------------------- thm2 (trained part)


def _thm2(ctx: Context) -> dict:
    return _lab(ctx, "thm2")


def _thm2_render(data: dict) -> str:
    d = data["sinusoidal_defect"]
    rows = [
        [str(i), d["init"][i], ARTICLE_DEFECT["init"][i], d["trained"][i], ARTICLE_DEFECT["trained"][i]]
        for i in range(len(d["init"]))
    ]
    random = expected_random_defect(16)  # sqrt(E delta^2) of a Gaussian 16 x 16 matrix
    return format_table(
        ["seed", "delta at init", "article", "delta trained", "article"],
        rows,
        title=f"Relativity defect delta(W_Q W_K^T) of the sinusoidal heads (a random matrix: {random:.3f})",
    )


register(
    Section("tournament", "Past the training window: the length tournament", _tournament, _tournament_render, True)
)
register(Section("rescaled", "RoPE re-read with PI, NTK-aware and YaRN", _rescaled, _rescaled_render, True))
register(Section("rebound", "RoPE's score against offset: the rebound", _rebound, _rebound_render, True))
register(Section("sinusoidal", "Why the added code collapses", _sinusoidal, _sinusoidal_render, True))
register(Section("thm2", "Theorem 2 on the trained sinusoidal heads", _thm2, _thm2_render, trained=True, merge=True))
