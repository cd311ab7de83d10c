"""The whole single-head laboratory in one call: train (or load) every head, read it, diagnose it.

:func:`run_laboratory` returns the JSON-ready data of the page's trained sections (``tournament``,
``rescaled``, ``rebound``, ``sinusoidal`` and the trained part of ``thm2``).  The result is itself
cached as verified JSON under a key of every head's key and the test sets, so a warm run reads one
file and trains nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..encodings import SCHEMES, scheme_settings
from ..model.cache import cache_key, cached_or_build
from ..model.config import TrainConfig, preset
from ..model.train import TrainedHead, bundles, head_path, stacks, train_bundle
from ..pool import available_cpus, run_jobs
from ..seeds import ARTICLE_COUNT, mean_stderr, stat_table
from ..tasks.registry import CUE
from ..theory.counting import bag_reader_accuracy
from . import rebound as rb
from . import sinusoidal as sn
from .bootstrap import RESAMPLES, draw_sd_table
from .held_out import TEST_COUNT, TEST_SEED, head_hits, heldout, hit_rate, read_accuracies, read_hits
from .rescaled import RESCALED_LENGTHS, RESCALED_READERS, read_rescaled_hits, rescaled_table
from .tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES, TEST_LENGTHS, offset_kernel, tournament_jobs, tournament_table

__all__ = ["KERNEL_OFFSETS", "LAB_VERSION", "read_head", "result_path", "run_laboratory"]

#: Bump when what is computed from the trained heads changes.
LAB_VERSION = "lab-10"  # 9: each cell's test-draw SD, resampled; 10: randomized heads read as the paper reads them
#: Offsets at which the learned offset kernels (T5, Shaw) are reported beside ALiBi's.
KERNEL_OFFSETS = (0, 1, 8, 16, 24, 31, 32, 48, 64, 128, 255)


#: How far apart the sinusoidal head's two spreads may be (as a ratio) to count as "within 6%", the article's words.
SPREAD_TOLERANCE = 0.06


def _description(jobs) -> dict:
    return {
        "lab": LAB_VERSION,
        "heads": [head_path(Path("."), c, s).name for c, s in jobs],
        "test": {"count": TEST_COUNT, "seed": TEST_SEED, "lengths": list(TEST_LENGTHS)},
    }


def _default(setting: str):
    """A scheme setting's value in the tournament's heads: its default (the tournament sets none)."""
    return scheme_settings()[setting].default


def _settings(config: TrainConfig) -> dict:
    h = config.head
    return {
        "d": h.d,
        "n_train": h.n_train,
        "steps": config.steps,
        "batch": config.batch,
        "lr": config.lr,
        "betas": [config.beta1, config.beta2],
        "eps": config.eps,
        "embed_std": h.embed_scale,
        "map_std": h.map_scale / np.sqrt(h.d),
        "alibi_slope": _default("alibi_slope"),
        "t5": [_default("t5_buckets"), _default("t5_max_distance")],
        "shaw_clip": _default("shaw_clip"),
    }


def read_head(head: TrainedHead) -> dict:
    """Everything the page reads off one trained head (JSON-ready but ``hits``; run in the worker that trained it).

    Parameters
    ----------
    head : TrainedHead
        A trained head of the tournament's task (not diverged).

    Returns
    -------
    dict
        ``accuracy`` at every test length; for RoPE ``rescaled`` (every map) and ``rebound``; for every rotary
        head ``rebound_height`` and ``window_fall`` (:mod:`poskernels.experiments.rebound`, of its score curve); for the
        sinusoidal code ``defect``, ``projected``, ``shifted`` and ``spreads``; for the bias schemes
        ``offset_kernel`` at :data:`KERNEL_OFFSETS`; and ``final_loss``.  ``hits`` holds, for each of those
        accuracies, the 0/1 vector over the test sequences it is the mean of (``{"accuracy": {n: ...}, ...}``), from
        which the laboratory resamples the test-draw error of each cell and which it then drops.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training (it has no accuracy).

    Examples
    --------
    >>> from poskernels.model import HeadConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> r = read_head(head)
    >>> sorted(r)
    ['accuracy', 'final_loss', 'hits', 'rebound', 'rebound_height', 'rescaled', 'window_fall']
    >>> r["accuracy"]
    {'32': 0.1335, '64': 0.1405, '128': 0.1305, '256': 0.13}
    """
    cfg = head.head
    hits = {"accuracy": read_hits(head)}
    if cfg.scheme == "rope":  # the article's re-reads and rebound are RoPE's
        hits["rescaled"] = read_rescaled_hits(head)
    if cfg.scheme == "sinusoidal":
        long = [n for n in TEST_LENGTHS if n > cfg.n_train]
        hits["projected"] = {str(n): head_hits(head, n, score_shift=sn.projected_shift(head, n)) for n in long}
        hits["shifted"] = {str(n): head_hits(head, n, positions=sn.shifted_positions(n, cfg.n_train)) for n in long}
    rates = lambda by: {n: hit_rate(h) for n, h in by.items()}  # noqa: E731
    out = {k: rates(by) for k, by in hits.items() if k != "rescaled"}
    if "rescaled" in hits:
        out["rescaled"] = {reader: rates(by) for reader, by in hits["rescaled"].items()}
    if getattr(cfg, "random_positions", 0):  # the paper's reading above; the consecutive 0..n-1 beside it
        out["consecutive"] = read_accuracies(head, consecutive=True)
    out["final_loss"] = float(head.losses[-50:].mean())
    out["hits"] = hits
    if cfg.scheme == "rope":
        out["rebound"] = rb.rebound_summary(head)
    if SCHEMES[cfg.scheme].rotary:  # the rotary family's rebound, beside RoPE's, on one statistic
        curve = rb.score_curve(head)  # (256,)
        out["rebound_height"] = rb.rebound_height(curve, cfg.n_train)
        out["window_fall"] = rb.window_fall(curve, cfg.n_train)
    if cfg.scheme == "sinusoidal":
        out["defect"] = list(sn.defects(head))
        out["spreads"] = sn.term_spreads(head, heldout(cfg.n_train)[0])
    if SCHEMES[cfg.scheme].where == "score":  # a bias on the logits: ALiBi, T5, Shaw
        out["offset_kernel"] = dict(zip(map(str, KERNEL_OFFSETS), offset_kernel(head, KERNEL_OFFSETS).tolist()))
    return out


def _cells(per_head: list[dict]) -> dict:
    """``[{n: hits}]`` of each head -> ``{n: [hits of each head]}``."""
    return {n: [h[n] for h in per_head] for n in per_head[0]}


def _job(args) -> list[tuple[list, float]]:
    bundle, cache_dir = args
    start = time.perf_counter()
    stacks_ = train_bundle(bundle, cache_dir)  # the seeds of one scheme train as one stack, the bundle on one draw
    trained = time.perf_counter() - start
    out = []
    for heads in stacks_:
        begin = time.perf_counter()
        out.append(([read_head(head) for head in heads], trained / len(stacks_) + time.perf_counter() - begin))
    return out


def _first_three(per_seed: dict) -> dict:
    """The mean of the first :data:`~poskernels.seeds.ARTICLE_COUNT` seeds (the article's three), same nesting."""
    return {
        k: _first_three(v) if isinstance(v, dict) else mean_stderr(v[:ARTICLE_COUNT])[0] for k, v in per_seed.items()
    }


def _assemble(readings: dict, config: TrainConfig, seeds: tuple) -> dict:
    schemes = [s for s in ARTICLE_SCHEMES + EXTRA_SCHEMES if (s, seeds[0]) in readings]
    tour = tournament_table(readings, schemes, seeds)
    tour["first_three"] = _first_three(tour["per_seed"])
    hits = {s: [readings[s, seed]["hits"] for seed in seeds] for s in schemes}
    # the test-draw SD of each cell, resampled from the sequences every seed read (a bootstrap, not more reads)
    tour["draw_sd"] = draw_sd_table({s: _cells([h["accuracy"] for h in hits[s]]) for s in schemes})
    tour["draw_resamples"] = RESAMPLES
    tour["bag_reader"] = {str(n): bag_reader_accuracy(n) for n in TEST_LENGTHS}  # exact, by counting
    tour["bag_reader_heldout"] = {str(n): float(CUE.exact_reader(*heldout(n)).mean()) for n in TEST_LENGTHS}
    kernels = {
        s: {str(r): [readings[s, seed]["offset_kernel"][str(r)] for seed in seeds] for r in KERNEL_OFFSETS}
        for s in schemes
        if SCHEMES[s].where == "score"
    }
    tour["offset_kernel"], tour["offset_kernel_stderr"] = stat_table(kernels)
    rotary = [s for s in schemes if SCHEMES[s].rotary]
    for key in ("rebound_height", "window_fall"):
        tour[key] = {s: [readings[s, seed][key] for seed in seeds] for s in rotary}
    tour["final_loss"] = {s: [readings[s, seed]["final_loss"] for seed in seeds] for s in schemes}
    # heads trained at randomized positions: the per-seed table reads them as Ruoss et al. do (each test sequence at
    # its own ordered random subset of [0, L_max)); here at the consecutive positions 0..n-1 they never trained on
    randomized = [s for s in schemes if "consecutive" in readings[s, seeds[0]]]
    tour["consecutive"] = {
        s: {str(n): [readings[s, seed]["consecutive"][str(n)] for seed in seeds] for n in TEST_LENGTHS}
        for s in randomized
    }
    tour["settings"] = _settings(config)
    # the article: "at 256 its three seeds range from about 0.31 to 0.68"; every seed's range and the first three's
    tour["seed_range"] = {
        "rope": {
            n: {"all": [min(v), max(v)], "first_three": [min(v[:ARTICLE_COUNT]), max(v[:ARTICLE_COUNT])]}
            for n, v in tour["per_seed"]["rope"].items()
        }
    }

    rescaled = rescaled_table(readings, seeds)
    rescaled["first_three"] = _first_three(rescaled["per_seed"])
    rescaled["kappa"] = {str(n): n / config.head.n_train for n in RESCALED_LENGTHS}
    rescaled["readers"] = dict(RESCALED_READERS)
    rescaled["draw_sd"] = draw_sd_table({r: _cells([h["rescaled"][r] for h in hits["rope"]]) for r in RESCALED_READERS})

    rebound = {str(s): readings["rope", s]["rebound"] for s in seeds}

    sin = [readings["sinusoidal", s] for s in seeds]
    defect = {"init": [r["defect"][0] for r in sin], "trained": [r["defect"][1] for r in sin], "seeds": list(seeds)}
    defect["mean"], defect["stderr"] = stat_table({k: defect[k] for k in ("init", "trained")})
    per_seed = {k: {n: [r[k][n] for r in sin] for n in sin[0][k]} for k in ("projected", "shifted")}
    mean, stderr = stat_table(per_seed)
    sinusoidal = {
        "projected": mean["projected"],
        "shifted": mean["shifted"],
        "stderr": stderr,
        "per_seed": per_seed,
        "seeds": list(seeds),
        "spread_ratio": [r["spreads"]["ratio"] for r in sin],
        "spreads": {k: [r["spreads"][k] for r in sin] for k in ("pos_pos", "pos_content", "content_pos")},
    }
    sinusoidal["draw_sd"] = draw_sd_table({k: _cells([h[k] for h in hits["sinusoidal"]]) for k in per_seed})
    sinusoidal["spread_ratio_mean"], sinusoidal["spread_ratio_stderr"] = mean_stderr(sinusoidal["spread_ratio"])
    # the article: the two terms' spreads across keys "are within 6% of each other in every seed"
    within = [abs(x - 1.0) <= SPREAD_TOLERANCE for x in sinusoidal["spread_ratio"]]
    sinusoidal["spread_within_6pct"] = float(np.mean(within))
    return {
        "tournament": tour,
        "rescaled": rescaled,
        "rebound": rebound,
        "sinusoidal": sinusoidal,
        "thm2": {"sinusoidal_defect": defect},
    }


def _read_all(jobs, cache_dir, log, workers) -> dict:
    """Train or load every head and read it, on a process pool (one task per bundle of stacks of seeds)."""
    workers = max(1, workers or available_cpus())
    groups = bundles(stacks(jobs, parts=workers), parts=workers)
    workers = min(len(groups), workers)
    cached = 0 if cache_dir is None else sum(head_path(cache_dir, c, s).exists() for c, s in jobs)
    if log is not None:
        log(
            f"[lab] {len(jobs)} heads ({cached} cached) in {sum(map(len, groups))} stacks, {len(groups)} bundles on "
            f"{workers} process(es)"
        )
    args = [(bundle, cache_dir) for bundle in groups]
    readings = {}

    def done(stack, result):
        stack_readings, seconds = result
        config, seeds = stack
        for seed, reading in zip(seeds, stack_readings):
            readings[config.head.scheme, seed] = reading
        if log is not None:
            acc = np.mean([[np.nan if a is None else a for a in r["accuracy"].values()] for r in stack_readings], 0)
            acc = ", ".join("-" if np.isnan(a) else f"{a:.3f}" for a in acc)
            log(f"[lab] {config.head.scheme} seeds {list(seeds)}: mean accuracy {acc} ({seconds:.1f} s)")

    for i, results in run_jobs(_job, args, workers):
        for stack, result in zip(groups[i], results):
            done(stack, result)
    return readings


def result_path(cache_dir: Path, config: TrainConfig | None = None, extra: bool = True, *, seeds) -> Path:
    """Where :func:`run_laboratory` caches its result: ``cache_dir/results/laboratory-<key>.json``.

    The key hashes every head's cache key (so the seeds), the test sets and :data:`LAB_VERSION`.

    Parameters
    ----------
    cache_dir : Path
        The cache.
    config : TrainConfig, optional
        The run (default :func:`poskernels.model.config.preset` ``"tournament"``).
    extra : bool, optional
        Whether the schemes beyond the article are trained too (default True).
    seeds : sequence of int
        The seeds of every scheme.

    Returns
    -------
    Path
        ``cache_dir/results/laboratory-<key>.json``.

    Examples
    --------
    >>> result_path(Path("c"), seeds=range(10)).parent.name
    'results'
    """
    config = preset("tournament") if config is None else config
    jobs = tournament_jobs(config, extra, seeds=seeds)
    return Path(cache_dir) / "results" / f"laboratory-{cache_key(_description(jobs))}.json"


def run_laboratory(
    cache_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
    workers: int | None = None,
    config: TrainConfig | None = None,
    extra: bool = True,
    *,
    seeds,
) -> dict:
    """Train or load the tournament's heads and compute every trained section of the page.

    Parameters
    ----------
    cache_dir : Path, optional
        Cache for heads (``heads/*.npz``) and the result (``results/laboratory-<key>.json``); None
        computes everything in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes for training (default: the CPUs available).
    config : TrainConfig, optional
        The run (default :func:`poskernels.model.config.preset` ``"tournament"``).
    extra : bool
        Also train the schemes beyond the article (T5, Shaw, Kerple's two, FIRE); False trains the
        article's five.
    seeds : sequence of int
        The seeds of every scheme (a block of :func:`poskernels.seeds.seed_block`; required).

    Returns
    -------
    dict
        ``{"tournament": ..., "rescaled": ..., "rebound": ..., "sinusoidal": ..., "thm2": ...}``.

    Examples
    --------
    The article's five schemes, one seed, trained 3 steps each (cheap; the page's run is the preset's 1,500), cached
    in a temporary directory:

    >>> import tempfile
    >>> cheap = TrainConfig(steps=3, batch=8)
    >>> with tempfile.TemporaryDirectory() as cache:
    ...     out = run_laboratory(cache, config=cheap, extra=False, seeds=[0], workers=1)
    ...     cached = result_path(cache, cheap, extra=False, seeds=[0]).is_file()
    >>> sorted(out), cached
    (['rebound', 'rescaled', 'sinusoidal', 'thm2', 'tournament'], True)
    """
    config = preset("tournament") if config is None else config
    seeds = tuple(int(s) for s in seeds)
    jobs = tournament_jobs(config, extra, seeds=seeds)
    path = None if cache_dir is None else result_path(cache_dir, config, extra, seeds=seeds)

    def build():
        start = time.perf_counter()
        data = _assemble(_read_all(jobs, cache_dir, log, workers), config, seeds)
        if log is not None:
            log(f"[lab] trained, read and diagnosed {len(jobs)} heads in {time.perf_counter() - start:.1f} s")
        return data

    return cached_or_build(path, _description(jobs), build, log)
