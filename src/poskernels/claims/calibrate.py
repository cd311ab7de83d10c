"""Size and power of every trained claim, measured on a pool of seeds the tests do not run.

The tests check the claims on one block of ten seeds (0-9, or 1000-1009).  Another machine's rounding acts like
another draw of seeds, so each claim's threshold must hold for the seed distribution.  Given the ``numbers.json``
of several other blocks (``poskernels reproduce --first-seed S`` for S = 2000, 3000, ...), :func:`calibrate` pools
their seeds and, from blocks of ten drawn from the pool with replacement (the same draws for every claim):

* **size**: the share of drawn blocks that *fail* the claim (how often a true claim fails a fresh block);
* **joint size**: the share of drawn blocks that fail at least one asserted claim (resolved and not a finding: the
  suites pass or fail together on those; a finding fails no suite);
* **false pass**: the share of blocks that *pass* when drawn from the pooled values moved onto the claim's null
  (:meth:`poskernels.claims.kinds.Kind.null`: the mean at the bound it excludes, the two readings exchanged, a
  share's property at its null rate); ``power = 1 - false pass``.

A claim whose false-pass rate is above :data:`MAX_FALSE_PASS`, or whose size is above :data:`MAX_SIZE` (the pool
does not hold it, or ten seeds do not show it where it does), is *not resolved by ten seeds*: it is a finding,
reported and never asserted (the README's and the docs' findings table, :func:`poskernels.page.readme`; the suites'
``test_claim_is_reported_not_asserted``), as is every claim marked a finding (``Claim.finding``, kept in its row).

Examples
--------
>>> from poskernels.claims.record import Claim
>>> c = Claim("tournament.demo", "tournament", "s", "w", "lower", {"c": 0.5}, lambda d: {"x": d["v"]}, ())
>>> rng = np.random.default_rng(0)
>>> blocks = [{"v": rng.normal(0.9, 0.05, 10)} for _ in range(4)]
>>> out = calibrate(blocks, [c], draws=500)
>>> out["claims"][0]["size"], out["claims"][0]["false_pass"] < 0.05
(0.0, True)
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError
from .kinds import KINDS

__all__ = ["DRAWS", "MAX_FALSE_PASS", "MAX_JOINT_SIZE", "MAX_SIZE", "calibrate", "pool_values"]

#: Blocks drawn from the pool for each rate (the standard error of a 1% rate: 0.16%).
DRAWS = 4000
#: A claim that passes more often than this when false is not resolved by ten seeds.
MAX_FALSE_PASS = 0.05
#: The most the suites may fail a fresh block together when every claim is true.
MAX_JOINT_SIZE = 0.01
#: A claim that fails more fresh blocks than this is not resolved either: the suites' joint size could not hold.
MAX_SIZE = MAX_JOINT_SIZE
BLOCK = 10  # seeds per block, as the tests read
SEED = 20_261_201  # the draws


def pool_values(claim, blocks: list[dict]) -> dict | None:
    """The claim's per-seed values over every block, joined on the seed axis; constants from the first block.

    Parameters
    ----------
    claim : Claim
        A claim of the table.
    blocks : list of dict
        ``numbers.json`` dicts of seed blocks.

    Returns
    -------
    dict or None
        ``{input: values}``, per-seed arrays concatenated on their first axis; None if a block lacks them.

    Examples
    --------
    >>> from poskernels.claims.table import build
    >>> row = {"id": "tournament.demo", "sentence": "RoPE reads 32.", "where": "here", "kind": "lower",
    ...        "params": {"c": 0.5}, "inputs": {"x": '"tournament/per_seed/rope/32"'}}
    >>> (claim,) = build("tournament", [row], {}, "demo.toml")
    >>> blocks = [{"tournament": {"per_seed": {"rope": {"32": [0.9, 1.0]}}}},
    ...           {"tournament": {"per_seed": {"rope": {"32": [0.8]}}}}]
    >>> pool_values(claim, blocks)["x"].tolist()
    [0.9, 1.0, 0.8]
    >>> pool_values(claim, [*blocks, {}]) is None
    True
    """
    parts = [claim.values(b) for b in blocks]
    if any(p is None for p in parts):
        return None
    out = {}
    for key, first in parts[0].items():
        if np.ndim(first) == 0:
            out[key] = first  # a constant the numbers give (the bag reader's exact accuracy, a binomial error)
        else:
            out[key] = np.concatenate([np.asarray(p[key], dtype=float) for p in parts], axis=0)
    return out


def _take(values: dict, idx: np.ndarray) -> dict:
    return {k: v if np.ndim(v) == 0 else v[idx] for k, v in values.items()}


def _rate(claim, values: dict, draws: np.ndarray) -> np.ndarray:
    """Whether each drawn block (rows of ``draws``: seed indices) passes, shape (draws,)."""
    kind = KINDS[claim.kind]
    return np.array([kind.evaluate(_take(values, idx), claim.params)[1] for idx in draws])


def _measure(claim, values: dict, index: np.ndarray, null_rng) -> tuple[dict, np.ndarray]:
    """One claim's rates on the drawn blocks ``index``: its row's measured fields, and whether each block passes."""
    passed = _rate(claim, values, index)
    kind = KINDS[claim.kind]
    if kind.exact_false_pass is not None:  # a share: binomial at the null rate, exactly
        false_pass = kind.exact_false_pass(values, claim.params, BLOCK)
    else:
        null = kind.null(values, claim.params, null_rng)
        false_pass = float(_rate(claim, null, index).mean())
    stat = kind.evaluate(values, claim.params)[0]
    given = {k: float(v) for k, v in values.items() if np.ndim(v) == 0}  # a target the numbers give
    size = float(1 - passed.mean())
    row = {
        "threshold": kind.text({**claim.params, **given}),
        "pooled": float(stat),
        "size": size,
        "false_pass": false_pass,
        "power": 1 - false_pass,
        "resolved": bool(false_pass <= MAX_FALSE_PASS and size <= MAX_SIZE),
    }
    return row, passed


def calibrate(blocks: list[dict], claims, draws: int = DRAWS, seed: int = SEED) -> dict:
    """Size, joint size and false-pass rate of every claim over the pooled seeds of ``blocks``.

    Parameters
    ----------
    blocks : list of dict
        ``numbers.json`` dicts of seed blocks the tests do not run.
    claims : sequence of Claim
        The claims to calibrate (:data:`poskernels.claims.CLAIMS`).
    draws : int
        Blocks of ten drawn for each rate.
    seed : int
        Seed of the draws (:func:`numpy.random.default_rng`).

    Returns
    -------
    dict
        ``seeds`` (pooled count), ``draws``, ``joint_size`` (over the asserted claims), ``claims``: one row per
        claim with ``id``, ``kind``, ``threshold``, ``null``, ``pooled`` (the statistic on all pooled seeds at
        once), ``size``, ``false_pass``, ``power`` and ``resolved`` (``false_pass <= MAX_FALSE_PASS`` and
        ``size <= MAX_SIZE``); a claim the pool cannot read has ``size`` None.

    Raises
    ------
    PosKernelsError
        If ``blocks`` is empty.

    Examples
    --------
    >>> calibrate([], [])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: calibrate needs at least one numbers.json of a seed block
    """
    if not blocks:
        raise PosKernelsError("calibrate needs at least one numbers.json of a seed block")
    rng = np.random.default_rng(seed)
    rows, fails = [], None
    pooled_n = None
    for claim in claims:
        values = pool_values(claim, blocks)
        row = {"id": claim.id, "kind": claim.kind, "threshold": claim.threshold, "null": claim.null}
        row["finding"] = claim.finding  # reported, never asserted, whatever its rates
        if values is None:
            rows.append({**row, "pooled": None, "size": None, "false_pass": None, "power": None, "resolved": None})
            continue
        n = next(len(v) for v in values.values() if np.ndim(v) > 0)
        if pooled_n is None:
            pooled_n = n
            index = rng.integers(0, n, size=(draws, BLOCK))  # the same blocks for every claim: a joint size
            fails = np.zeros(draws, dtype=bool)
        elif n != pooled_n:
            raise PosKernelsError(f"claim {claim.id!r} pools {n} seeds where the others pool {pooled_n}")
        measured, passed = _measure(claim, values, index, np.random.default_rng([seed, len(rows)]))
        if measured["resolved"] and not claim.finding:  # asserted: a block that fails it fails the suite
            fails |= ~passed
        rows.append({**row, **measured})
    return {
        "seeds": pooled_n,
        "draws": draws,
        "max_false_pass": MAX_FALSE_PASS,
        "max_size": MAX_SIZE,
        "max_joint_size": MAX_JOINT_SIZE,
        "joint_size": None if fails is None else float(fails.mean()),
        "claims": rows,
    }
