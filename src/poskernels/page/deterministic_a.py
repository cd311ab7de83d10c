"""Page sections for "Order, and how a mask leaks it" and "Position as a set of clocks".

Keys of ``numbers.json``:

- ``prop1``: the exact best bag reader (Proposition 1);
- ``thm1``: the kernel table with its limit and ruler rows, the octave cost and the column cosines (Theorem 1);
- ``thm2``: the deterministic part of Theorem 2 (random defect, numerical rank, condition numbers beside
  double precision's attempt).  The trained heads' defects are merged into ``thm2`` by another section.

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..theory.commutant import (
    condition_number_exact,
    condition_number_float64,
    expected_random_defect,
    numerical_rank,
)
from ..theory.counting import bag_reader_accuracy
from ..theory.kernel import I_b, max_column_cosine, normalized_kernel, octave_cost, ruler
from .registry import Context, Section, format_table, register

__all__ = ["BAG_LENGTHS", "CODE_WIDTH", "COND_WINDOWS", "KERNEL_DIMS", "KERNEL_OFFSETS", "COSINE_WINDOWS"]

BAG_LENGTHS = (32, 64, 128, 256)  # the tournament's test lengths
KERNEL_DIMS = (64, 512, 8192)  # rows of the kernel table
KERNEL_OFFSETS = (1, 4, 16, 64, 256, 1024)  # its columns
CODE_WIDTH = 16  # the tournament head's d, for the code matrix P
COSINE_WINDOWS = (64, 4096)
COND_WINDOWS = (16, 64, 256, 4096)
DIGITS = 200  # working precision of the exact condition numbers


# --------------------------------------------------------------------------- Proposition 1


def _prop1(ctx: Context) -> dict:
    # Proposition 1 (ii): the best reader of a bag, exact by counting
    return {"bag_reader": {str(n): bag_reader_accuracy(n) for n in BAG_LENGTHS}}


def _prop1_render(data: dict) -> str:
    rows = [["best bag reader", *(data["bag_reader"][str(n)] for n in BAG_LENGTHS)]]
    return format_table(["length n", *map(str, BAG_LENGTHS)], rows)


# --------------------------------------------------------------------------- Theorem 1


def _thm1(ctx: Context) -> dict:
    offsets = list(KERNEL_OFFSETS)
    return {
        # Theorem 1 (i): (2/d) kappa_d(Delta)
        "kernel": {str(d): dict(zip(map(str, offsets), normalized_kernel(offsets, d).tolist())) for d in KERNEL_DIMS},
        # Theorem 1 (ii): the cosine-integral limit and the logarithmic ruler
        "limit": dict(zip(map(str, offsets), I_b(offsets).tolist())),
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


def _thm2(ctx: Context) -> dict:
    return {
        "random_defect": expected_random_defect(CODE_WIDTH),  # sqrt(1 - 1/d)
        "numerical_rank_64": numerical_rank(64, CODE_WIDTH),
        "condition_number": {str(W): condition_number_exact(W, CODE_WIDTH, digits=DIGITS) for W in COND_WINDOWS},
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


register(Section("prop1", "Proposition 1 — the best bag reader, exact", _prop1, _prop1_render))
register(Section("thm1", "Theorem 1 — the stationary kernel and the logarithmic ruler", _thm1, _thm1_render))
register(
    Section(
        "thm2",
        "Theorem 2 — relativity defect and the code matrix's conditioning",
        _thm2,
        _thm2_render,
        merge=True,  # the trained heads' defects (thm2.sinusoidal_defect) come from another section
    )
)
