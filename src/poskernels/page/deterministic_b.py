"""Page sections for "Relative position: biases and the ALiBi kernel", "Rotations: RoPE" and the theory part of
"Past the training window".

Keys of ``numbers.json``:

- ``def3``: T5's buckets (Definition 3): the first offset of the last bucket and where the log map reaches it;
- ``thm3``: ALiBi's tail bound at ``W = 20``, ``s = 1/2`` (Theorem 3 (ii)), beside the worst content can do;
- ``prop4``: the long-term-decay envelope's mean per octave of offsets at ``d = 128`` (Proposition 4 (i));
- ``thm5``: the wavelength census with PI / NTK-aware / YaRN factors per plane at ``d = 16``, ``L = 32``,
  ``kappa = 4`` (Theorem 5 (i)-(iii)), and Chen et al.'s constant against the corrected one (Theorem 5 (iv)).

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..encodings import DEFAULT_BASE
from ..theory.alibi import (
    alibi_horizon,
    alibi_offset_ratio_bound,
    alibi_tail_bound,
    alibi_worst_tail_weight,
    t5_bucket_ranges,
    t5_last_bucket_first_offset,
    t5_log_reach,
)
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
from .registry import Context, Section, format_table, register

__all__ = [
    "ALIBI_LENGTH",
    "ALIBI_OFFSETS",
    "ALIBI_SLOPE",
    "ALIBI_WIDTH",
    "CENSUS_WIDTH",
    "CHEN_DIMS",
    "ENVELOPE_WIDTH",
    "KAPPA",
    "TRAIN_LENGTH",
    "T5_BUCKETS",
    "T5_MAX_DISTANCE",
]

T5_BUCKETS, T5_MAX_DISTANCE = 32, 128  # T5's own configuration
ALIBI_WIDTH, ALIBI_SLOPE = 20.0, 0.5  # W and s of the article's example; s = 1/2 is ALiBi's first slope at H = 8
ALIBI_OFFSETS = (40, 60, 80)  # D
ALIBI_LENGTH = 8192  # length at which the worst content is measured
ENVELOPE_WIDTH = 128  # d of Proposition 4's measurement
ENVELOPE_LAST_OCTAVE = 2048
CENSUS_WIDTH, TRAIN_LENGTH, KAPPA = 16, 32, 4.0  # the tournament head, its training length, 32 -> 128
CHEN_DIMS = (16, 128)


# --------------------------------------------------------------------------- Definition 3


def _def3(ctx: Context) -> dict:
    return {
        # Definition 3: every causal offset from this one on shares T5's last bucket
        "t5_last_bucket_first_offset": t5_last_bucket_first_offset(T5_BUCKETS, T5_MAX_DISTANCE),
        "t5_log_reach": t5_log_reach(T5_BUCKETS, T5_MAX_DISTANCE),
        "t5_buckets": [list(row) for row in t5_bucket_ranges(T5_BUCKETS, T5_MAX_DISTANCE)],
    }


def _def3_render(data: dict) -> str:
    exact = [b for b, first, last in data["t5_buckets"] if first == last]
    rows = [[f"{exact[0]}-{exact[-1]}", exact[0], exact[-1], "1 each"]]  # the exact buckets: bucket = offset
    for b, first, last in data["t5_buckets"][len(exact) :]:
        rows.append([str(b), first, "and on" if last is None else last, "all" if last is None else last - first + 1])
    table = format_table(
        ["bucket", "first r", "last r", "offsets"],
        rows,
        title=f"T5's causal buckets, {T5_BUCKETS} buckets, max_distance {T5_MAX_DISTANCE}",
    )
    return (
        f"{table}\n\nlast bucket holds every offset from {data['t5_last_bucket_first_offset']} on; "
        f"the log map reaches it at {data['t5_log_reach']:.1f}, not at {T5_MAX_DISTANCE}"
    )


# --------------------------------------------------------------------------- Theorem 3


def _thm3(ctx: Context) -> dict:
    W, s = ALIBI_WIDTH, ALIBI_SLOPE
    return {
        "W": W,
        "s": s,
        "horizon": alibi_horizon(W, s),  # Theorem 3 (iii): W / s
        # Theorem 3 (ii): weight on offsets r >= D, at every length
        "alibi_tail_bound": {str(D): alibi_tail_bound(W, s, D) for D in ALIBI_OFFSETS},
        # the largest tail any content of width W buys at one length (how tight (ii) is)
        "worst_tail_weight": {str(D): alibi_worst_tail_weight(W, s, D, ALIBI_LENGTH) for D in ALIBI_OFFSETS},
        "worst_length": ALIBI_LENGTH,
        # Theorem 3 (iii): alpha_D / alpha_0 <= e^{W - s D}
        "offset_ratio_bound": {str(D): float(alibi_offset_ratio_bound(W, s, D)) for D in ALIBI_OFFSETS},
    }


def _thm3_render(data: dict) -> str:
    rows = [
        [D, data["alibi_tail_bound"][D], data["worst_tail_weight"][D], data["offset_ratio_bound"][D]]
        for D in map(str, ALIBI_OFFSETS)
    ]
    head = ["D", "bound (ii)", f"worst content, n = {data['worst_length']}", "alpha_D / alpha_0 <= (iii)"]
    title = f"ALiBi, W = {data['W']:g}, s = {data['s']:g}: weight on offsets r >= D"
    return f"{format_table(head, rows, title=title)}\n\nhorizon W / s = {data['horizon']:g}"


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


# --------------------------------------------------------------------------- Theorem 5


def _thm5(ctx: Context) -> dict:
    d, L, kappa = CENSUS_WIDTH, TRAIN_LENGTH, KAPPA
    census = wavelength_census(L, d)
    ce = chen_counterexample(ENVELOPE_WIDTH)
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
        "chen_counterexample": {"d": ENVELOPE_WIDTH, "error": ce.error, "stated": ce.stated, "corrected": ce.corrected},
    }


def _thm5_render(data: dict) -> str:
    rows = [
        [j, lam, turns, "yes" if turns >= 1 else "no", pi, ntk, yarn]
        for j, (lam, turns, pi, ntk, yarn) in enumerate(
            zip(data["wavelengths"], data["turns"], data["pi_factors"], data["ntk_factors"], data["yarn_factors"])
        )
    ]
    head = ["plane", "wavelength", "turns in 0..L-1", "full turn", "PI", "NTK-aware", "YaRN"]
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


register(Section("def3", "Definition 3 — T5's relative-position buckets", _def3, _def3_render))
register(Section("thm3", "Theorem 3 — ALiBi's tail bound and horizon", _thm3, _thm3_render))
register(Section("prop4", "Proposition 4 — the long-term-decay envelope", _prop4, _prop4_render))
register(Section("thm5", "Theorem 5 — wavelength census, rescalings, interpolation bound", _thm5, _thm5_render))
