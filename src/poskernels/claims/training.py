"""The claims of the training-side papers: the scaled softmax (Nakanishi 2025) and randomized positions (Ruoss et
al. 2023), each as a statistic over the seeds, with the findings where our single head disagrees.

* Nakanishi 2025 claims that the scaled softmax keeps attention from fading as the context grows.  The needle task
  is that setting: one marked token among ``n - 1`` unmarked, so a plain head's weight on it falls like ``1 / n``
  (:mod:`poskernels.theory.scaled_softmax`).  NoPE with the scaled softmax finds the needle at 10^5 tokens
  (``long.distance``, 500 sequences, the streaming reader), more than :data:`GAIN` above plain NoPE, and holds its
  accuracy from offset 64 to 10^5 within :data:`HOLD`.  With RoPE it does **not** help (a finding): RoPE's heads
  fail far past the window because their rotation turns the marked key away, not because the softmax flattens, and
  the scaled RoPE head is within :data:`HOLD` of the plain one at 10^5.
* Ruoss et al. 2023 claim that randomized positions let a model read past its training length.  Read as the paper
  reads it (each test sequence at its own ordered random subset of ``[0, 2048)``: ``tournament.per_seed``), the
  sinusoidal head trained at random positions is above the plain sinusoidal head on each seed's mean accuracy over
  64, 128 and 256 (paired by seed).  Read at the consecutive positions ``0..n-1`` it never trained on
  (``tournament.consecutive``), it pays at the training length (a finding of that reading, not of the paper's):
  more than :data:`COST` below the plain head at 32, since training saw positions spread over ``[0, 2048)`` and
  that reading sees them one apart.

:data:`HOLD`, :data:`GAIN`, :data:`COST` and :data:`K` are the only thresholds: the ``[constants]`` of
``rows/training.toml``, whose rows are the claims (:mod:`poskernels.claims.table`).

Examples
--------
>>> [c.id for c in TRAINING_CLAIMS][:2]
['training.nope_ssmax_finds_the_needle_at_1e5', 'training.nope_ssmax_holds_the_needle_from_64_to_1e5']
>>> TRAINING_CLAIMS[0].threshold
'mean(a - b - 0.25) / its SE > 3'
"""

from __future__ import annotations

from .record import Claim
from .table import constants, suite

__all__ = ["COST", "GAIN", "HOLD", "K", "RANDOMIZED_LENGTHS", "TRAINING_CLAIMS"]

_C = constants("training")
#: The largest change in accuracy that still counts as holding (or as no gain): five points.
HOLD: float = _C["HOLD"]
#: The gain the scaled softmax gives NoPE on the needle at 10^5 tokens, at least (chance is 1/8; one plain NoPE head
#: of the calibration blocks, seed 7009, found the needle at 10^5 too: a gain of 0.5 was passed by 3.2 SE only).
GAIN: float = _C["GAIN"]
#: The accuracy randomized positions cost the sinusoidal head at its training length, at least (a finding).
COST: float = _C["COST"]
#: Standard errors every claim asks for.
K: float = _C["K"]
#: The lengths past training where randomized positions are claimed to help: each seed's mean over them is the claim.
#: At 64 and at 256 alone the gain (0.11 and 0.07) is a few paired standard errors of ten
#: seeds: at 3 SE a fresh block of the calibration pool failed them 4.8% and 2.5% of the time while they held, which
#: took the suite's joint size to 8% (``examples/claim_calibration.py`` on seeds 2000-11009).
RANDOMIZED_LENGTHS = ("64", "128", "256")

TRAINING_CLAIMS: tuple[Claim, ...] = suite("training")
