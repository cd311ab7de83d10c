"""The claims of "Past the training window" about the tournament's heads, their re-reads and the rebound."""

from __future__ import annotations

import math

import numpy as np

from .record import Claim, arr

__all__ = ["TOURNAMENT_CLAIMS"]

TEST_COUNT = 2000  # test sequences per point (poskernels.experiments.tournament.TEST_COUNT)
LONG = ("64", "128", "256")
LENGTHS = ("32", *LONG)
WINDOW = "Past the training window"
S = "tournament"
NEEDS = ("tournament",)
#: The margin of a tie between two readings' mean accuracies (three points): inside it, with three joined SE, the
#: two are shown to tie; apart by it, they do not.
TIE = 0.03


def _t(section: str, scheme: str, n: str):
    return lambda d: arr(d[section]["per_seed"][scheme][n])


def _x(f):
    return lambda d: {"x": f(d)}


def _ab(a, b):
    return lambda d: {"a": a(d), "b": b(d)}


def _rebound(f):
    return lambda d: arr([f(r) for _, r in sorted(d["rebound"].items(), key=lambda kv: int(kv[0]))])


def _bag(d: dict, n: str) -> float:
    return d["tournament"]["bag_reader"][n]


def _binomial(p: float) -> float:
    return math.sqrt(p * (1 - p) / TEST_COUNT)


def _claims() -> list[Claim]:
    out: list[Claim] = []
    bag = "A head without positions reads a bag: its best reader is the bag reader, exact by counting."
    for n in LENGTHS:
        out += [
            Claim(
                f"{S}.no_position_{n}_sits_at_the_exact_bag_reader",
                S,
                bag,
                "Proposition 1 (ii); the tournament's table, row NoPE",
                "near",
                {"k": 3.0},  # the target and its binomial error are the file's own (bag_reader, by counting)
                lambda d, n=n: {
                    "x": _t("tournament", "nope", n)(d),
                    "t": np.float64(_bag(d, n)),
                    "extra": np.float64(_binomial(_bag(d, n))),
                },
                NEEDS,
            ),
            Claim(
                f"{S}.no_position_{n}_sits_at_the_bag_reader_on_the_same_test_sequences",
                S,
                bag,
                "Proposition 1 (ii); the tournament's table, row NoPE",
                "near",
                {"k": 3.0},  # paired with the bag reader on the very same sequences: only the seeds' spread
                lambda d, n=n: {
                    "x": _t("tournament", "nope", n)(d),
                    "t": np.float64(d["tournament"]["bag_reader_heldout"][n]),
                    "tol": np.float64(_binomial(_bag(d, n))),
                },
                NEEDS,
            ),
        ]
    for s in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        out.append(
            Claim(
                f"{S}.{s}_median_head_reads_the_window_at_32",
                S,
                "Every scheme but the first reads the task within the window.",
                WINDOW + ", the paragraph after the first table",
                "median",
                {"lo": 0.95, "k": 3.0},  # a median: one T5 head in 50 trains to 0.13
                _x(_t("tournament", s, "32")),
                NEEDS,
            )
        )
    for n in LONG:
        out += [
            Claim(
                f"{S}.sinusoidal_{n}_collapses_below_0.30",
                S,
                "The added sinusoidal code collapses at twice the length.",
                WINDOW + ", the paragraph after the first table",
                "upper",
                {"c": 0.30},
                _x(_t("tournament", "sinusoidal", n)),
                NEEDS,
            ),
            Claim(
                f"{S}.sinusoidal_{n}_below_no_position",
                S,
                "The article: 0.201 at 64 -- below the head that has no position at all.",
                WINDOW + ", the first table",
                "gap",
                {},
                _ab(_t("tournament", "nope", n), _t("tournament", "sinusoidal", n)),
                NEEDS,
            ),
        ]
    for n in LENGTHS:
        out.append(
            Claim(
                f"{S}.alibi_median_head_holds_0.95_at_{n}",
                S,
                "ALiBi holds, as Theorem 3 (ii) predicts.",
                WINDOW + ", the paragraph after the first table",
                "median",
                {"lo": 0.95, "k": 2.5},  # a median: one ALiBi head in 50 reads 0.93
                _x(_t("tournament", "alibi", n)),
                NEEDS,
            )
        )
    rope = lambda n: _t("tournament", "rope", n)  # noqa: E731
    falls = "RoPE degrades steadily, from 0.947 to 0.466."
    where = WINDOW + ", the paragraph after the first table"
    out += [
        Claim(f"{S}.rope_falls_32_to_64", S, falls, where, "gap", {"k": 2.0}, _ab(rope("32"), rope("64")), NEEDS),
        Claim(f"{S}.rope_falls_64_to_128", S, falls, where, "gap", {"k": 0.5}, _ab(rope("64"), rope("128")), NEEDS),
        Claim(f"{S}.rope_falls_128_to_256", S, falls, where, "gap", {}, _ab(rope("128"), rope("256")), NEEDS),
        Claim(
            f"{S}.rope_falls_64_to_128_head_by_head",
            S,
            falls,
            where,
            "share",
            {"q": 0.7},
            _x(lambda d: (rope("64")(d) > rope("128")(d)).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.rope_falls_128_to_256_head_by_head",
            S,
            falls,
            where,
            "share",
            {"q": 0.9},
            _x(lambda d: (rope("128")(d) > rope("256")(d)).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.rope_reads_256_worse_than_32_head_by_head",
            S,
            falls,
            where,
            "share",
            {"q": 0.9},
            _x(lambda d: (rope("32")(d) > rope("256")(d)).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.rope_ends_below_alibi_at_256",
            S,
            "ALiBi holds ... RoPE degrades steadily, from 0.947 to 0.466.",
            where,
            "gap",
            {},
            _ab(_t("tournament", "alibi", "256"), rope("256")),
            NEEDS,
        ),
        Claim(
            f"{S}.rope_seeds_spread_wider_at_256_than_at_64",
            S,
            "At 256 its three seeds range from about 0.31 to 0.68.",
            where,
            "sd_above",
            # wider, shown: the SD ratio past the 95% point of the F ratio of two samples of ten (sqrt(3.18) =
            # 1.78) where equal spreads (null_f = 1) pass 5% of the time; the claim was "more than 0.8x"
            {"f": 1.78, "null_f": 1.0},
            _ab(rope("256"), rope("64")),
            NEEDS,
        ),
    ]
    for reader in ("rope_pi", "rope_ntk", "rope_yarn"):
        for n in ("128", "256"):
            got, plain = _t("rescaled", reader, n), _t("rescaled", "rope", n)
            name = reader.removeprefix("rope_")
            out += [
                Claim(
                    f"{S}.{name}_reads_0.80_at_{n}",
                    S,
                    "Each map rescues the head.",
                    WINDOW + ", the table of re-readings",
                    "lower",
                    {"c": 0.80},
                    _x(got),
                    ("rescaled",),
                ),
                Claim(
                    f"{S}.{name}_beats_the_plain_reading_at_{n}",
                    S,
                    "Each map rescues the head.",
                    WINDOW + ", the table of re-readings",
                    "gap",
                    {"k": 1.5} if n == "128" else {},
                    _ab(got, plain),
                    ("rescaled",),
                ),
                Claim(
                    f"{S}.{name}_beats_the_plain_reading_at_{n}_head_by_head",
                    S,
                    "Each map rescues the head.",
                    WINDOW + ", the table of re-readings",
                    "share",
                    {"q": (0.7 if reader == "rope_ntk" else 0.6) if n == "128" else 0.9},
                    _x(lambda d, g=got, q=plain: (g(d) > q(d)).astype(float)),
                    ("rescaled",),
                ),
            ]
    ntk = "On this task NTK-aware scaling rescues it best at 256, where its 0.977 ties ALiBi's 0.978."
    for other in ("rope_pi", "rope_yarn"):
        out.append(
            Claim(
                f"{S}.ntk_best_at_256_above_{other.removeprefix('rope_')}_head_by_head_paired",
                S,
                ntk,
                WINDOW + ", the paragraph after the table of re-readings",
                "paired",
                {"k": 0.0},  # the lead is 0.025 (SD 0.03) a head: ten seeds do not resolve it
                _ab(_t("rescaled", "rope_ntk", "256"), _t("rescaled", other, "256")),
                ("rescaled",),
            )
        )
    out.append(
        Claim(
            f"{S}.ntk_ties_alibi_at_256",
            S,
            ntk,
            WINDOW + ", the paragraph after the table of re-readings",
            "tie",
            {"k": 3.0, "margin": TIE},  # a tie, shown: the difference with 3 joined SE inside the stated margin
            lambda d: {"a": _t("rescaled", "rope_ntk", "256")(d), "b": _t("tournament", "alibi", "256")(d)},
            ("rescaled", "tournament"),
        )
    )
    out += _rebound_claims() + _sinusoidal_claims()
    out.append(
        Claim(
            f"{S}.shaw_beats_t5_at_256",
            S,
            "A flat tail orders nothing, a zero tail pulls far keys up (T5's untrained buckets, Shaw's clip).",
            "Definition 3; " + WINDOW,
            "gap",
            {},
            _ab(_t("tournament", "shaw", "256"), _t("tournament", "t5", "256")),
            NEEDS,
        )
    )
    return out


def _rebound_claims() -> list[Claim]:
    R = "rebound"
    where = WINDOW + ", the RoPE rebound (the laboratory's readouts)"
    shape = "It falls across the window, dives past it, and then ... brings it back up."
    out = [
        Claim(
            f"{S}.rebound_first_trough_at_the_windows_edge",
            S,
            "score at r = 31, the window's edge; a first trough at r = 34",
            where,
            "median",
            {"lo": 28.5, "hi": 35.5},
            _x(_rebound(lambda r: r["first_trough"][0])),
            (R,),
        ),
        Claim(
            f"{S}.rebound_first_trough_within_5_of_31_head_by_head",
            S,
            "score at r = 31, the window's edge; a first trough at r = 34",
            where,
            "share",
            {"q": 0.6},
            _x(_rebound(lambda r: float(abs(r["first_trough"][0] - 31) <= 5))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_deepest_within_5_of_90_in_half_the_heads",
            S,
            "the deepest -55.86 at r = 90",
            where,
            "share",
            {"q": 0.5},  # 13 heads in 100 grow a curve whose deepest point is r = 255: no median is robust to it
            _x(_rebound(lambda r: float(abs(r["deepest"][0] - 90) <= 5))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_peak_near_180",
            S,
            "it rises again: highest score past the window, 84.14 at r = 181",
            where,
            "near",
            {"t": 180, "tol": 4},
            _x(_rebound(lambda r: r["peak"][0])),
            (R,),
        ),
        Claim(
            f"{S}.rebound_plane_3_largest",
            S,
            "plane 3 the largest (the laboratory's readout)",
            where,
            "share",
            {"q": 0.7},
            _x(_rebound(lambda r: float(r["top_plane"] == 3))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_positive_at_the_windows_edge",
            S,
            "score at r = 31, the window's edge: 7.70",
            where,
            "share",
            {"q": 0.9},
            _x(_rebound(lambda r: float(r["score_r31"] > 0))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_first_trough_positive",
            S,
            "a first trough 5.91 at r = 34",
            where,
            "share",
            {"q": 0.7},
            _x(_rebound(lambda r: float(r["first_trough"][1] > 0))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_falls_then_dives",
            S,
            shape,
            where,
            "share",
            {"q": 0.9},
            _x(_rebound(lambda r: float(r["deepest"][1] < r["first_trough"][1] < r["score_r1"]))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_peak_outscores_the_windows_edge",
            S,
            "until a cue 181 positions back outscores a recent one",
            where,
            "share",
            {"q": 0.9},
            _x(_rebound(lambda r: float(r["peak"][1] > r["score_r31"]))),
            (R,),
        ),
        Claim(
            f"{S}.rebound_peak_outscores_every_key_16_or_more_back",
            S,
            "until a cue 181 positions back outscores a recent one",
            where,
            "share",
            {"q": 0.7},
            _x(_rebound(lambda r: float(r["peak"][1] > max(r["curve"][16:32])))),
            (R,),
        ),
    ]
    return out


def _sinusoidal_claims() -> list[Claim]:
    where = WINDOW + ", the paragraph after the first table"
    proj = lambda n: _t("sinusoidal", "projected", n)  # noqa: E731
    shift = lambda n: _t("sinusoidal", "shifted", n)  # noqa: E731
    rope = lambda n: _t("tournament", "rope", n)  # noqa: E731
    project = (
        "Replace only the position-against-position term with its projection onto the commutant, and the head still"
        " reads 0.202, 0.136, and 0.143."
    )
    SIN = ("sinusoidal", "tournament")
    defect = lambda k: lambda d: arr(d["thm2"]["sinusoidal_defect"][k])  # noqa: E731
    out = [
        Claim(
            f"{S}.sinusoidal_defect_{kind}_near_0.968",
            S,
            "delta of a random 16 x 16 matrix is about sqrt(1 - 1/16) = 0.968; training barely moves it",
            "Theorem 2",
            "near",
            {"t": 0.968, "tol": 0.01},
            _x(defect(kind)),
            ("thm2",),
        )
        for kind in ("init", "trained")
    ]
    out += [
        Claim(
            f"{S}.sinusoidal_defect_moves_less_than_0.01",
            S,
            "training barely moves it",
            "Theorem 2",
            "near",
            {"t": 0.0, "tol": 0.01},
            _x(lambda d: defect("trained")(d) - defect("init")(d)),
            ("thm2",),
        ),
        Claim(f"{S}.projected_64_below_rope_64", S, project, where, "gap", {}, _ab(rope("64"), proj("64")), SIN),
        Claim(
            f"{S}.projected_median_head_128_at_most_0.40",
            S,
            project,
            where,
            "median",
            {"hi": 0.40, "k": 2.0},  # a median: a few heads in 50 read 0.40 projected
            _x(proj("128")),
            SIN,
        ),
        Claim(
            f"{S}.projected_median_head_256_at_most_0.40",
            S,
            project,
            where,
            "median",
            {"hi": 0.40, "k": 3.0},
            _x(proj("256")),
            SIN,
        ),
        Claim(f"{S}.projected_128_below_rope_128", S, project, where, "gap", {}, _ab(rope("128"), proj("128")), SIN),
        Claim(f"{S}.projected_256_below_rope_256", S, project, where, "gap", {}, _ab(rope("256"), proj("256")), SIN),
        Claim(
            f"{S}.shifted_64_above_projected_64",
            S,
            "Shift a long sequence so that the query sits there again, keeping every offset, and the head reads 0.769.",
            where,
            "gap",
            {},
            _ab(shift("64"), proj("64")),
            SIN,
        ),
        Claim(
            f"{S}.shifted_64_twice_the_sinusoidal_64",
            S,
            "the head reads 0.769 at 64 (the sinusoidal head unshifted: 0.201)",
            where,
            "times",
            {"f": 2.0, "k": 2.5},
            _ab(shift("64"), _t("tournament", "sinusoidal", "64")),
            SIN,
        ),
        Claim(
            f"{S}.shifted_fades_from_64_to_256",
            S,
            "but only 0.313 at 256, where older keys land on positions training never saw",
            where,
            "gap",
            {},
            _ab(shift("64"), shift("256")),
            SIN,
        ),
        Claim(
            f"{S}.spreads_within_25pct_lower",
            S,
            "the position-against-content term separates keys as strongly",
            where,
            "lower",
            {"c": 0.8},
            _x(lambda d: arr(d["sinusoidal"]["spread_ratio"])),
            SIN,
        ),
        Claim(
            f"{S}.spreads_within_25pct_upper",
            S,
            "the position-against-content term separates keys as strongly",
            where,
            "median",
            {"hi": 1.25, "k": 3.0},
            _x(lambda d: arr(d["sinusoidal"]["spread_ratio"])),
            SIN,
        ),
    ]
    return out


TOURNAMENT_CLAIMS: tuple[Claim, ...] = tuple(_claims())
