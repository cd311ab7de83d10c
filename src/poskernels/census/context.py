"""What a RoPE's frequencies mean for a context of ``N`` tokens, and what reading them may cost.

:func:`context_census` (critical dimension, the kernel's first negative offset, the smallest base, the planes reading
unseen angles) and :func:`logit_multiplier` are parts of every census (:func:`~poskernels.census.compute.census`);
:func:`census_work` counts the kernel terms a census or an ``advise`` would evaluate and :func:`check_work` refuses
them past :data:`WORK_BUDGET` before any is.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import PosKernelsError
from ..theory.context import (
    MAX_SCAN,
    BaseBounds,
    base_bounds,
    context_verdicts,
    critical_dimension,
    extrapolation_bound,
)
from .config import RopeConfig

__all__ = [
    "BASE_GRID",
    "BASE_SCAN_MAX",
    "WORK_BUDGET",
    "census_work",
    "check_work",
    "context_census",
    "logit_multiplier",
]


#: The most kernel terms (one offset at one plane) one census, or one ``advise``, may evaluate: checked before any
#: is (the worst case, a kernel nonnegative through ``N``; about ten seconds on one loaded core).
WORK_BUDGET = 4 * 10**9


#: What one term of a direct sum of cosines (the base scan's first offsets) costs against one of the blocked engine.
_DIRECT = 8


def census_work(d: int, N: int, kernels: int, scan_base: bool) -> tuple[int, int]:
    """The worst-case kernel terms of the kernel scans (``kernels`` frequency sets) and of the base scan at ``N``.

    Parameters
    ----------
    d : int
        Rotary width.
    N : int
        Target length.
    kernels : int
        Frequency sets scanned (the native one and each map's).
    scan_base : bool
        Whether the smallest-base scan runs.

    Returns
    -------
    tuple of (int, int)
        The terms of the kernel scans, and of the base scan (0 when it does not run).

    Examples
    --------
    >>> census_work(128, 16384, 11, False)
    (11534336, 0)
    """
    planes, scan = d // 2, min(N, MAX_SCAN + 1)
    base = 0
    if scan_base and N <= BASE_SCAN_MAX:
        grid = math.ceil(BASE_GRID * math.log10(1e12 / 2)) + 1  # every grid base on its first 512 offsets
        span = math.ceil(BASE_GRID * math.log10(20)) + 1  # the bases past the first that passes, checked whole
        base = (_DIRECT * grid * min(N, 512) + span * N) * planes
    return kernels * scan * planes, base


def check_work(what: str, d: int, N: int, terms: int, per_offset: int) -> None:
    """Refuse, before any is evaluated, ``terms`` kernel terms past :data:`WORK_BUDGET`, with the target that fits.

    Parameters
    ----------
    what : str
        The work, for the message (``"census"``).
    d, N : int
        Rotary width and target length, for the message.
    terms : int
        The kernel terms the work would evaluate (:func:`census_work`).
    per_offset : int
        Terms per offset, to say which target fits.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If ``terms`` exceeds :data:`WORK_BUDGET`.

    Examples
    --------
    >>> check_work("census", 128, 16384, 10**6, 64)  # within the budget: nothing to say
    >>> check_work("census", 128, 10**9, 5 * 10**9, 64)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: census at d = 128 to N = 1000000000 ...; a target length up to 62500000 fits
    """
    if terms > WORK_BUDGET:
        fits = WORK_BUDGET // per_offset
        raise PosKernelsError(
            f"{what} at d = {d} to N = {N} would evaluate {terms:.3g} kernel terms (offsets x planes, worst case), "
            f"past the budget of {WORK_BUDGET:.3g}; a target length up to {fits} fits"
        )



#: Largest target length whose smallest nonnegative base is scanned by the census (a few seconds at d = 128),
#: and the scan's grid (bases per decade; a finer grid can find a smaller base: the passing set has islands).
BASE_SCAN_MAX = 1 << 17
BASE_GRID = 50


@functools.lru_cache(maxsize=64)
def _base_bounds(d: int, N: int) -> BaseBounds:
    """The scan depends on ``(d, N)`` alone: one per pair per process (``advise`` reads five maps at one ``N``)."""
    return base_bounds(d, N, steps_per_decade=BASE_GRID)


def context_census(cfg: RopeConfig, N: int, maps: dict, scan_base: bool = True) -> dict:
    """What the frequencies mean for a context of ``N`` tokens (:mod:`poskernels.theory.context`), JSON-ready.

    ``critical_dimension`` and ``extrapolation_bound`` (Liu et al. 2023) at the training length;
    ``first_negative_offset`` of the kernel ``sum_j cos(Delta f_j)`` up to ``N - 1`` (None: nonnegative
    throughout) for the native frequencies and after each map (Men et al. 2024); ``base_bound``: on a grid of
    :data:`BASE_GRID` bases per decade, the smallest base whose native kernel stays nonnegative on ``0..N-1`` and the
    base from which every grid base checked passes (:func:`~poskernels.theory.context.base_bounds`; scanned up to
    :data:`BASE_SCAN_MAX`), ``smallest_base`` the first of them; ``unseen_planes``: Theorem 5 (i)'s planes that see
    angles training never produced.

    Parameters
    ----------
    cfg : RopeConfig
        A parsed config (:func:`~poskernels.census.config.parse_config`).
    N : int
        The target length.
    maps : dict
        The census's maps (each with ``inv_freq``).
    scan_base : bool
        Whether the smallest-base scan runs.

    Returns
    -------
    dict
        ``critical_dimension``, ``extrapolation_bound``, ``kernel_scanned_to``, ``first_negative_offset``,
        ``smallest_base``, ``base_bound``, ``unseen_planes`` and the scan's grid.

    Examples
    --------
    >>> from poskernels.census.config import load_config
    >>> c = context_census(load_config("llama-2-7b"), 16384, {}, scan_base=False)
    >>> c["critical_dimension"], c["first_negative_offset"]
    (92, {'native': 1707})
    """
    L, d, b, theta = cfg.training_length, cfg.rotary_dim, cfg.base, cfg.theta
    last = min(N - 1, MAX_SCAN)
    freqs = {"native": theta} | {name: np.asarray(m["inv_freq"]) for name, m in maps.items() if name != "none"}
    scanned = scan_base and N <= BASE_SCAN_MAX
    bounds = _base_bounds(d, N) if scanned else None
    base = bounds.smallest_passing if bounds else None
    verdicts = context_verdicts(theta, freqs, L, N, last)  # one check of theta, L, N and last for every map
    return {
        "critical_dimension": critical_dimension(L, d, b),
        "extrapolation_bound": extrapolation_bound(L, d, b),
        "kernel_scanned_to": last,
        "first_negative_offset": {name: v.first_negative_offset for name, v in verdicts.items()},
        "smallest_base": base,
        "smallest_base_grid_per_decade": BASE_GRID if scanned else None,
        "base_bound": None
        if bounds is None
        else {
            "smallest_passing": bounds.smallest_passing,
            "every_base_passes_from": bounds.every_base_passes_from,
            "checked_to": bounds.checked_to,
            "steps_per_decade": bounds.steps_per_decade,
            "step": bounds.step,
            "on": "the grid 2 * 10**(k / steps_per_decade): a finer grid can find a smaller passing base and a "
            "failing base above every_base_passes_from",
        },
        "unseen_planes": {name: v.unseen_planes.tolist() for name, v in verdicts.items()},
    }


def logit_multiplier(cfg: RopeConfig, attention_factor: float, N: int) -> dict:
    """The factor the model's attention logits carry beyond ``q.k / sqrt(head_dim)``, with its parts.

    Parts: the rotary attention factor on cos and sin, squared in the logits; YaRN's
    ``mscale(factor, mscale_all_dim)**2`` where the family's attention applies it (DeepSeek); Gemma's
    ``sqrt(head_dim / query_pre_attn_scalar)``; Llama 4's attention-temperature tuning at the target length,
    ``1 + attn_scale log1p(floor(N / floor_scale))``, on its layers without RoPE only (not in the total).

    Parameters
    ----------
    cfg : RopeConfig
        A parsed config (:func:`~poskernels.census.config.parse_config`).
    attention_factor : float
        The map's attention factor on cos and sin.
    N : int
        The target length.

    Returns
    -------
    dict
        ``total`` and its ``parts`` by name.

    Examples
    --------
    >>> from poskernels.census.config import load_config
    >>> round(logit_multiplier(load_config("qwen2.5-7b-yarn"), 1.1386, 131072)["total"], 4)  # YaRN's, squared
    1.2964
    >>> logit_multiplier(load_config("llama-2-7b"), 1.0, 8192)["total"]
    1.0
    """
    att = cfg.attention
    parts = {"rotary attention factor squared": attention_factor**2}
    factor = cfg.scaling.get("factor")
    mscale_all = cfg.scaling.get("mscale_all_dim")
    if att.get("mscale_all_dim_in_attention") and cfg.rope_type != "default" and mscale_all and factor:
        m = 0.1 * float(mscale_all) * math.log(float(factor)) + 1.0 if factor > 1 else 1.0
        parts["attention mscale(factor, mscale_all_dim)^2"] = m * m
    if "query_pre_attn_scalar" in att:
        parts["query_pre_attn_scalar: sqrt(head_dim / query_pre_attn_scalar)"] = math.sqrt(
            cfg.head_dim / att["query_pre_attn_scalar"]
        )
    total = math.prod(parts.values())
    out = {"total": total, "parts": parts}
    tuning = att.get("attn_temperature_tuning")
    if tuning:
        out["layers_without_rope"] = {
            "count": att["layers_without_rope"],
            "of": att["layers"],
            "temperature_at_target": 1 + tuning["attn_scale"] * math.log1p(math.floor(N / tuning["floor_scale"])),
        }
    return out


