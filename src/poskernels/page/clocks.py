"""Page sections for "Position as a set of clocks".

Keys of ``numbers.json``:

- ``thm1``: the kernel table with its limit and ruler rows, the octave cost and the column cosines (Theorem 1);
- ``thm2``: the deterministic part of Theorem 2 (random defect, numerical rank, condition numbers beside
  double precision's attempt);
- ``thm2.sinusoidal_defect``: ``delta(M)`` of each trained sinusoidal head at initialization and after training
  (:data:`THM2_TRAINED`, merged into ``thm2``; it reads the tournament's laboratory run, so ``--no-train`` skips it).

Every number comes from :mod:`poskernels.theory` (and the trained defects from
:func:`poskernels.experiments.laboratory.run_laboratory`); this module only chooses the grid and prints it.
"""

from __future__ import annotations

import numpy as np

from ..encodings import DEFAULT_BASE
from ..model.cache import cached_by_source
from ..theory import conditioning
from ..theory import ruler as ruler_module
from ..theory.commutant import expected_random_defect
from ..theory.conditioning import condition_number_exact, condition_number_float64, numerical_rank
from ..theory.kernel import I_b, max_column_cosine, normalized_kernel, octave_cost, ruler
from .registry import Context, Section, cell, cell_se, format_table
from .window import lab_section

__all__ = [
    "ARTICLE_DEFECT",
    "CODE_WIDTH",
    "COND_WINDOWS",
    "COSINE_WINDOWS",
    "KERNEL_DIMS",
    "KERNEL_OFFSETS",
    "THM1",
    "THM2",
    "THM2_TRAINED",
]

KERNEL_DIMS = (64, 512, 8192)  # rows of the kernel table
KERNEL_OFFSETS = (1, 4, 16, 64, 256, 1024)  # its columns
CODE_WIDTH = 16  # the tournament head's d, for the code matrix P
COSINE_WINDOWS = (64, 4096)
COND_WINDOWS = (16, 64, 256, 4096)
DIGITS = 200  # working precision of the exact condition numbers
# Section "Position as a set of clocks", after Theorem 2: the three sinusoidal heads' defects.
ARTICLE_DEFECT = {"init": [0.970, 0.956, 0.979], "trained": [0.971, 0.955, 0.973]}


# --------------------------------------------------------------------------- Theorem 1


def _cosine_integral_limit(ctx: Context, offsets: list[int]) -> list[float]:
    """``I_b`` at the offsets, cached as JSON under them, the base and :mod:`poskernels.theory.ruler`'s source.

    Its ``Ci`` is ``scipy.special.sici``, and importing ``scipy.special`` is 0.15 s of every run
    (:func:`poskernels.model.cache.cached_by_source`).
    """
    description = {"what": "I_b", "offsets": offsets, "b": DEFAULT_BASE}
    return cached_by_source(
        ctx.cache_dir, "cosine-integral", ruler_module, description, lambda: I_b(offsets).tolist(), ctx.log
    )


def _thm1(ctx: Context) -> dict:
    offsets = list(KERNEL_OFFSETS)
    return {
        # Theorem 1 (i): (2/d) kappa_d(Delta)
        "kernel": {str(d): dict(zip(map(str, offsets), normalized_kernel(offsets, d).tolist())) for d in KERNEL_DIMS},
        # Theorem 1 (ii): the cosine-integral limit and the logarithmic ruler
        "limit": dict(zip(map(str, offsets), _cosine_integral_limit(ctx, offsets))),
        "ruler": dict(zip(map(str, offsets), ruler(offsets).tolist())),
        "octave_cost": octave_cost(),
        "max_column_cosine": {str(W): max_column_cosine(W, CODE_WIDTH) for W in COSINE_WINDOWS},
    }


def _thm1_render(data: dict) -> str:
    head = ["Delta", *map(str, KERNEL_OFFSETS)]
    row = lambda label, values: [label, *(values[str(x)] for x in KERNEL_OFFSETS)]  # noqa: E731
    rows = [row(f"d = {d}", data["kernel"][str(d)]) for d in KERNEL_DIMS]
    rows += [row("limit I_b(Delta)", data["limit"]), row("ruler 1 - (gamma + ln Delta)/ln b", data["ruler"])]
    kernel = format_table(head, rows, title="(2/d) kappa_d(Delta), b = 10^4")
    cos_rows = [
        [str(W), f"{c:.6f}", f"{1 - c:.3g}"]
        for W, c in ((W, data["max_column_cosine"][str(W)]) for W in COSINE_WINDOWS)
    ]
    head = ["positions W", "max |cos|", "1 - max |cos|"]
    cosines = format_table(head, cos_rows, title=f"largest cosine between two columns of P, d = {CODE_WIDTH}")
    return f"{kernel}\n\ncost of one octave, ln 2 / ln b = {data['octave_cost']:.3f}\n\n{cosines}"


# --------------------------------------------------------------------------- Theorem 2 (deterministic part)


def _exact_condition_numbers(ctx: Context) -> dict:
    """``condition_number_exact`` at every window, cached as JSON: 200-digit arithmetic is 0.4 s of every run.

    Keyed by the arguments and :mod:`poskernels.theory.conditioning`'s source, where the exact arithmetic lives
    (:func:`poskernels.model.cache.cached_by_source`).
    """
    description = {"what": "condition_number_exact", "W": list(COND_WINDOWS), "d": CODE_WIDTH, "digits": DIGITS}
    return cached_by_source(
        ctx.cache_dir,
        "condition",
        conditioning,
        description,
        lambda: {str(W): condition_number_exact(W, CODE_WIDTH, digits=DIGITS) for W in COND_WINDOWS},
        ctx.log,
    )


def _thm2(ctx: Context) -> dict:
    return {
        "random_defect": expected_random_defect(CODE_WIDTH),  # sqrt(1 - 1/d)
        "numerical_rank_64": numerical_rank(64, CODE_WIDTH),
        "condition_number": _exact_condition_numbers(ctx),
        "condition_number_float64": {str(W): condition_number_float64(W, CODE_WIDTH) for W in COND_WINDOWS},
    }


def _thm2_render(data: dict) -> str:
    lines = [
        f"random Gaussian M, d = {CODE_WIDTH}: delta = sqrt(1 - 1/d) = {data['random_defect']:.3f}",
        f"numerical rank of the 64 x {CODE_WIDTH} code matrix: {data['numerical_rank_64']}",
        "",
    ]
    rows = [
        [str(W), f"{data['condition_number'][str(W)]:.3g}", f"{data['condition_number_float64'][str(W)]:.3g}"]
        for W in COND_WINDOWS
    ]
    head = ["positions W", f"cond(P), {DIGITS} digits", "float64 attempt"]
    return "\n".join(lines) + format_table(head, rows, title=f"condition number of the W x {CODE_WIDTH} code matrix")


# --------------------------------------------------------------------------- Theorem 2 (trained heads)


def _thm2_trained(ctx: Context) -> dict:
    return lab_section(ctx, "thm2")


def _thm2_trained_render(data: dict) -> str:
    d = data["sinusoidal_defect"]

    def article(kind, i):
        return cell(ARTICLE_DEFECT[kind][i]) if i < len(ARTICLE_DEFECT[kind]) else ""

    rows = [
        [str(seed), d["init"][i], article("init", i), d["trained"][i], article("trained", i)]
        for i, seed in enumerate(d["seeds"])
    ]
    rows.append(
        [
            "mean ± SE",
            cell_se(d["mean"]["init"], d["stderr"]["init"]),
            cell(float(np.mean(ARTICLE_DEFECT["init"]))),
            cell_se(d["mean"]["trained"], d["stderr"]["trained"]),
            cell(float(np.mean(ARTICLE_DEFECT["trained"]))),
        ]
    )
    random = expected_random_defect(16)  # sqrt(E delta^2) of a Gaussian 16 x 16 matrix
    return format_table(
        ["seed", "delta at init", "article", "delta trained", "article"],
        rows,
        title=f"Relativity defect delta(W_Q W_K^T) of the sinusoidal heads (a random matrix: {random:.3f})",
    )


THM1 = Section("thm1", "Theorem 1 — the stationary kernel and the logarithmic ruler", _thm1, _thm1_render)
THM2 = Section(
    "thm2",
    "Theorem 2 — relativity defect and the code matrix's conditioning",
    _thm2,
    _thm2_render,
    merge=True,  # the trained heads' defects (THM2_TRAINED) join this key
)
THM2_TRAINED = Section(
    "thm2", "Theorem 2 on the trained sinusoidal heads", _thm2_trained, _thm2_trained_render, trained=True, merge=True
)
