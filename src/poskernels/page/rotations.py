"""Page sections for "Rotations: RoPE, and stretching it": ``prop4`` and ``thm5``.

- ``prop4``: the long-term-decay envelope's mean per octave of offsets at ``d = 128`` (Proposition 4 (i)).
- ``thm5``: the wavelength census with PI / NTK-aware / YaRN factors per plane at ``d = 16``, ``L = 32``,
  ``kappa = 4`` (Theorem 5 (i)-(iii)), and Chen et al.'s constant against the corrected one (Theorem 5 (iv)),
  from :mod:`poskernels.theory.census`.

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..encodings import DEFAULT_BASE
from ..experiments.readers import MAP_TITLES
from ..theory.census import (
    chen_constant,
    chen_counterexample,
    chen_ratio,
    full_turn_planes,
    rescaling_factors,
    sum_theta_sq,
    wavelength_census,
)
from ..theory.decay import envelope_octave_means
from .registry import Context, Section, format_table

__all__ = ["ENVELOPE_LAST_OCTAVE", "ENVELOPE_WIDTH", "PROP4", "THM5"]

ENVELOPE_WIDTH = 128  # d of Proposition 4's measurement
ENVELOPE_LAST_OCTAVE = 2048
CENSUS_WIDTH, TRAIN_LENGTH, KAPPA = 16, 32, 4.0  # the tournament head, its training length, 32 -> 128
CHEN_DIMS = (16, 128)
COUNTEREXAMPLE_WIDTH = 128  # d of the counterexample to Chen et al.'s constant


# --------------------------------------------------------------------------- Proposition 4


def _prop4(ctx: Context) -> dict:
    means = envelope_octave_means(ENVELOPE_WIDTH, DEFAULT_BASE, ENVELOPE_LAST_OCTAVE)
    # Proposition 4 (i): the envelope sum_j |S_j|, averaged over each octave [2^k, 2^(k+1) - 1]
    return {"d": ENVELOPE_WIDTH, "envelope_octave_mean": {str(start): m for start, m in means.items()}}


def _prop4_render(data: dict) -> str:
    planes = data["d"] // 2
    rows = [
        [start if start == "1" else f"{start}-{2 * int(start) - 1}", mean, mean / planes]
        for start, mean in data["envelope_octave_mean"].items()
    ]
    title = f"RoPE's decay envelope sum_j |S_j|, d = {data['d']}: mean over each octave of offsets"
    return format_table(["offsets", "envelope", "per plane"], rows, title=title)


PROP4 = Section("prop4", "Proposition 4 — the long-term-decay envelope", _prop4, _prop4_render)


# --------------------------------------------------------------------------- Theorem 5


def _thm5(ctx: Context) -> dict:
    d, L, kappa = CENSUS_WIDTH, TRAIN_LENGTH, KAPPA
    census = wavelength_census(L, d)
    ce = chen_counterexample(COUNTEREXAMPLE_WIDTH)
    return {
        "d": d,
        "L": L,
        "kappa": kappa,
        # Theorem 5 (i): wavelengths and the planes that turn a whole circle over offsets 0..L-1 (a count)
        "wavelengths": [row.wavelength for row in census],
        "turns": [row.turns for row in census],
        "full_turn_planes": int(full_turn_planes(L, d).size),
        # Definition 5 per plane; Theorem 5 (ii) PI divides every plane, (iii) NTK keeps plane 0, divides the last
        "pi_factors": rescaling_factors("pi", d, kappa=kappa, L=L).tolist(),
        "ntk_factors": rescaling_factors("ntk", d, kappa=kappa, L=L).tolist(),
        "yarn_factors": rescaling_factors("yarn", d, kappa=kappa, L=L).tolist(),
        # Theorem 5 (iv): sum_j theta_j^2 against Chen et al.'s d / (4 ln b)
        "sum_theta_sq": {str(n): sum_theta_sq(n) for n in CHEN_DIMS},
        "chen_constant": {str(n): chen_constant(n) for n in CHEN_DIMS},
        "chen_ratio": {str(n): chen_ratio(n) for n in CHEN_DIMS},
        "chen_counterexample": {
            "d": COUNTEREXAMPLE_WIDTH,
            "error": ce.error,
            "stated": ce.stated,
            "corrected": ce.corrected,
        },
    }


def _thm5_render(data: dict) -> str:
    rows = [
        [j, lam, turns, "yes" if turns >= 1 else "no", pi, ntk, yarn]
        for j, (lam, turns, pi, ntk, yarn) in enumerate(
            zip(data["wavelengths"], data["turns"], data["pi_factors"], data["ntk_factors"], data["yarn_factors"])
        )
    ]
    head = ["plane", "wavelength", "turns in 0..L-1", "full turn", *(MAP_TITLES[m] for m in ("pi", "ntk", "yarn"))]
    title = f"wavelength census, d = {data['d']}, L = {data['L']}; factors on theta_j at kappa = {data['kappa']:g}"
    census = format_table(head, rows, title=title)
    chen_rows = [
        [n, data["sum_theta_sq"][n], data["chen_constant"][n], data["chen_ratio"][n]] for n in map(str, CHEN_DIMS)
    ]
    chen = format_table(
        ["d", "sum theta_j^2", "d / (4 ln b)", "ratio"], chen_rows, title="interpolation constant, b = 10^4"
    )
    ce = data["chen_counterexample"]
    tail = (
        f"h_j = 1 on [0, 1] at Delta = 1/2, d = {ce['d']}: error {ce['error']:.3f}, "
        f"stated bound {ce['stated']:.3f}, corrected bound {ce['corrected']:.3f}"
    )
    return f"{census}\n\n{data['full_turn_planes']} of {len(rows)} planes complete a turn\n\n{chen}\n\n{tail}"


THM5 = Section("thm5", "Theorem 5 — wavelength census, rescalings, interpolation bound", _thm5, _thm5_render)
