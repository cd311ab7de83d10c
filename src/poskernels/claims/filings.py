"""The claims of "Finance case study: which company was named last?" about the filing heads and their readers."""

from __future__ import annotations

import numpy as np

from .record import Claim, arr

__all__ = ["FILINGS_CLAIMS"]

CASE = "Finance case study"
S = "filings"
NEEDS = ("filings",)
FENWICK, MARROW = "Fenwick Logistics", "Marrow Freight"
PLAIN = ("nope", "sinusoidal", "rope", "alibi")


def _acc(reader: str, part: str):
    return lambda d: arr(d["filings"]["per_seed"][reader][part])


def _x(f):
    return lambda d: {"x": f(d)}


def _ab(a, b):
    return lambda d: {"a": a(d), "b": b(d)}


def _rows(d: dict, key: str) -> np.ndarray:
    """(seeds, 2): a horizon row's field, filing and synthetic-stream heads of one seed side by side."""
    by = {(r["trained_on"], r["seed"]): r[key] for r in d["filings"]["horizon"]}
    seeds = d["filings"]["seeds"]
    return arr([by["filings", s] for s in seeds] + [by["synthetic", s] for s in seeds]).reshape(2, -1).T


def _stream(part: str, key: str):
    return lambda d: arr(d["filings"]["horizon_stats"][part]["per_seed"][key])


def _case(d: dict, part: str, reader: str) -> np.ndarray:
    return arr(d["filings"]["case"][part][reader])


def _company(d: dict, name: str) -> int:
    return d["filings"]["case"]["companies"].index(name)


def _misses_are_wide(d: dict) -> np.ndarray:
    """(seeds, 2): 1 where the head answers every query inside half its horizon or its horizon is wider than its
    stream's median (the heads that miss are those whose content width W is widest)."""
    h, inside = _rows(d, "horizon"), _rows(d, "inside_half")
    return ((inside == 1.0) | (h > np.median(h, axis=0))).astype(float)


def _claims() -> list[Claim]:
    horizon = CASE + ", the horizon table and the paragraph after it"
    inside = "Inside half the horizon every head answers every query, more than 8,000 each."
    out = [
        Claim(
            f"{S}.seven_alibi_heads_in_ten_answer_every_query_inside_half_the_horizon",
            S,
            inside,
            horizon,
            "share",
            {"q": 0.7},
            lambda d: {"x": (_rows(d, "inside_half") == 1.0).astype(float)},
            NEEDS,
        ),
        Claim(
            f"{S}.alibi_heads_that_miss_inside_half_are_the_widest",
            S,
            inside,
            horizon,
            "share",
            {"q": 1.0},
            _x(_misses_are_wide),
            NEEDS,
        ),
        Claim(
            f"{S}.alibi_heads_answer_more_than_8000_queries_inside_half",
            S,
            inside,
            horizon,
            "lower",
            {"c": 8000.0001, "k": 3.0},
            lambda d: {"x": _rows(d, "inside_queries").mean(axis=1)},
            NEEDS,
        ),
    ]
    out += [
        Claim(
            f"{S}.median_alibi_head_answers_every_query_inside_half_{part}",
            S,
            inside,
            horizon,
            "share",
            {"q": 0.6},
            lambda d, i=i: {"x": (_rows(d, "inside_half")[:, i] == 1.0).astype(float)},
            NEEDS,
        )
        for i, part in enumerate(("filings", "synthetic"))
    ]
    far = "RoPE + PI 0.986 and RoPE + YaRN 0.985 on queries whose answer is more than 32 back."
    table = CASE + ", the accuracy table"
    for reader in ("rope_pi", "rope_yarn"):
        name = reader.removeprefix("rope_")
        out += [
            Claim(
                f"{S}.{name}_median_head_reads_0.94_of_far_queries",
                S,
                far,
                table,
                "median",
                {"lo": 0.94, "k": 3.0},
                _x(_acc(reader, "far")),
                NEEDS,
            ),
            Claim(
                f"{S}.{name}_reads_0.90_of_far_queries_head_by_head",
                S,
                far,
                table,
                "share",
                {"q": 0.7},
                _x(lambda d, r=reader: (_acc(r, "far")(d) >= 0.90).astype(float)),
                NEEDS,
            ),
            Claim(
                f"{S}.{name}_rescues_plain_rope_far_by_0.1_head_by_head_paired",
                S,
                far + " (RoPE: 0.721)",
                table,
                "paired",  # the same heads, read plain and through the map
                {"off": 0.1, "k": 2.5},
                _ab(_acc(reader, "far"), _acc("rope", "far")),
                NEEDS,
            ),
            Claim(
                f"{S}.{name}_rescues_plain_rope_far_by_0.2_head_by_head",
                S,
                far + " (RoPE: 0.721)",
                table,
                "share",
                {"q": 0.6},
                _x(lambda d, r=reader: (_acc(r, "far")(d) > _acc("rope", "far")(d) + 0.2).astype(float)),
                NEEDS,
            ),
        ]
    lead = "PI 0.991 and YaRN 0.990 on all queries, every other reader 0.913 or less."
    for leader in ("rope_pi", "rope_yarn"):
        for part in ("all", "far"):
            for other in ("nope", "sinusoidal", "rope", "alibi", "rope_ntk"):
                same = other in ("rope", "rope_ntk")  # the same RoPE heads, read another way: paired
                out.append(
                    Claim(
                        f"{S}.{leader.removeprefix('rope_')}_leads_{other}_on_{part}_queries"
                        + ("_head_by_head_paired" if same else ""),
                        S,
                        lead,
                        table,
                        "paired" if same else "gap",
                        {} if same else {"k": 2.5},
                        _ab(_acc(leader, part), _acc(other, part)),
                        NEEDS,
                    )
                )
    loses = "ALiBi, which held at every length of the tournament, loses 42% of the filing's far queries."
    out += [
        Claim(
            f"{S}.alibi_far_below_pi_far_by_0.1",
            S,
            loses,
            CASE + ", the paragraph after the accuracy table",
            "gap",
            {"off": 0.1},
            _ab(_acc("rope_pi", "far"), _acc("alibi", "far")),
            NEEDS,
        ),
        Claim(
            f"{S}.alibi_far_below_alibi_all_by_0.05",
            S,
            loses,
            CASE + ", the paragraph after the accuracy table",
            "gap",
            {"off": 0.05, "k": 2.0},
            _ab(_acc("alibi", "all"), _acc("alibi", "far")),
            NEEDS,
        ),
    ]
    beyond = "Beyond the horizon every head degrades; filing heads keep 0.32-0.72, synthetic-stream heads ~0.1."
    out += [
        Claim(
            f"{S}.{part}_alibi_heads_degrade_beyond_the_horizon",
            S,
            beyond,
            horizon,
            "gap",
            {},
            _ab(_stream(part, "inside_half"), _stream(part, "beyond")),
            NEEDS,
        )
        for part in ("filings", "synthetic")
    ]
    out += [
        Claim(
            f"{S}.filing_heads_keep_more_beyond_the_horizon_than_stream_heads_on_all_queries",
            S,
            beyond,
            horizon,
            "gap",
            {"k": 1.5},
            _ab(_stream("filings", "beyond"), _stream("synthetic", "beyond")),
            NEEDS,
        ),
        Claim(
            f"{S}.median_stream_head_below_0.25_beyond_the_horizon",
            S,
            beyond,
            horizon,
            "median",
            {"hi": 0.25},  # the median stream head sits at 0.16; a margin of SEs failed 2% of blocks
            _x(_stream("synthetic", "beyond")),
            NEEDS,
        ),
        Claim(
            f"{S}.median_filing_head_above_0.2_beyond_the_horizon",
            S,
            beyond,
            horizon,
            "median",
            {"lo": 0.2, "k": 1.0},
            _x(_stream("filings", "beyond")),
            NEEDS,
        ),
    ]
    for i, part in enumerate(("filings", "synthetic")):
        out += [
            Claim(
                f"{S}.median_horizon_between_20_and_100_{part}",
                S,
                "horizon W/s: 51.1, 53.0, 55.8 (filings); 38.7, 35.8, 37.0 (synthetic)",
                horizon,
                "median",
                {"lo": 20, "hi": 100, "k": 1.5},
                lambda d, i=i: {"x": _rows(d, "horizon")[:, i]},
                NEEDS,
            ),
            Claim(
                f"{S}.horizon_below_100_head_by_head_{part}",
                S,
                "horizon W/s: 51.1, 53.0, 55.8 (filings); 38.7, 35.8, 37.0 (synthetic)",
                horizon,
                "share",
                {"q": 0.6},
                lambda d, i=i: {"x": (_rows(d, "horizon")[:, i] < 100).astype(float)},
                NEEDS,
            ),
        ]
    return out + _case_claims()


def _case_claims() -> list[Claim]:
    where = CASE + ", the laboratory's filing"
    pi = (
        "RoPE with interpolated positions answers Fenwick Logistics in all three seeds, at all 145 positions from"
        " token 64 on, and it is right at every one of the filing's 209 positions."
    )
    plain = (
        "In seed 0 the heads without position, with the added code, with RoPE, and with ALiBi all answer Marrow"
        " Freight ... 5 of the 12 answers across seeds are Fenwick."
    )
    out = []
    for reader in ("rope_pi", "rope_yarn"):
        name = reader.removeprefix("rope_")
        out += [
            Claim(
                f"{S}.{name}_right_at_140_of_145_from_token_64_head_by_head",
                S,
                pi,
                where,
                "share",
                {"q": 0.6},
                _x(lambda d, r=reader: (_case(d, "right_from_last", r) >= 140).astype(float)),
                NEEDS,
            ),
            Claim(
                f"{S}.{name}_names_fenwick_at_the_company_head_by_head",
                S,
                pi,
                where,
                "share",
                {"q": 0.8},
                _x(lambda d, r=reader: (_case(d, "at_the_company", r) == _company(d, FENWICK)).astype(float)),
                NEEDS,
            ),
        ]
    out += [
        Claim(
            f"{S}.pi_median_head_right_at_0.9_of_209",
            S,
            pi,
            where,
            "median",
            {"lo": 0.9 * 209, "k": 2.0},
            _x(lambda d: _case(d, "right", "rope_pi")),
            NEEDS,
        ),
        Claim(
            f"{S}.pi_right_at_0.9_of_209_head_by_head",
            S,
            pi,
            where,
            "share",
            {"q": 0.7},
            _x(lambda d: (_case(d, "right", "rope_pi") >= 0.9 * 209).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.alibi_right_below_0.9_of_209",
            S,
            pi + " (ALiBi is not)",
            where,
            "upper",
            {"c": 0.9 * 209 - 1e-9},
            _x(lambda d: _case(d, "right", "alibi")),
            NEEDS,
        ),
        Claim(
            f"{S}.no_position_misnames_the_company_head_by_head",
            S,
            plain,
            where,
            "share",
            {"q": 0.7},
            _x(lambda d: (_case(d, "at_the_company", "nope") != _company(d, FENWICK)).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.no_position_answers_marrow_most_often",
            S,
            plain,
            where,
            "mode",
            {"target": 0},
            _x(lambda d: _case(d, "at_the_company", "nope") - _company(d, MARROW)),
            NEEDS,
        ),
        Claim(
            f"{S}.no_position_answers_marrow_head_by_head",
            S,
            plain,
            where,
            "share",
            {"q": 0.7},
            _x(lambda d: (_case(d, "at_the_company", "nope") == _company(d, MARROW)).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.fenwick_is_at_most_half_the_plain_heads_answers",
            S,
            plain,
            where,
            "share",
            {"q": 0.5, "at_most": True, "null_rate": 0.75},
            _x(
                lambda d: (
                    np.stack([_case(d, "at_the_company", r) for r in PLAIN], axis=1) == _company(d, FENWICK)
                ).astype(float)
            ),
            NEEDS,
        ),
    ]
    return out


FILINGS_CLAIMS: tuple[Claim, ...] = tuple(_claims())
