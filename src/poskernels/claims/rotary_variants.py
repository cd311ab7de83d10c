"""The claims of the rotary family's papers (xPos, p-RoPE) and what partial rotary honestly supports, as statistics.

* Sun et al. 2022 claim xPos extrapolates where RoPE does not.  Here xPos *degrades less than RoPE* at ``n`` when
  RoPE's mean drop in accuracy from the training length 32 exceeds xPos's by more than :data:`K` joined standard
  errors (:data:`K_NEAR` at 128; kind ``gap``, ``a`` RoPE's per-seed drop ``acc(32) - acc(n)``, ``b``
  xPos's), read on each seed's mean drop over 64, 128 and 256 (the tournament), at 128 and 256 alone, and at 10^5
  tokens (the long-context section's cue task, streaming reader).  Its decay also
  removes the article's *rebound*: the statistic is :func:`poskernels.experiments.rebound.rebound_height`, how far
  the score of a marked key climbs back past the window above its value at the window's edge,
  ``max_{r >= 32} s(r) - s(31)`` (``tournament.rebound_height``, for every rotary head), read on the scale of the
  head's own fall across the window, ``s(0) - s(31)`` (``tournament.window_fall``): xPos's climbs back by at most
  :data:`RECOVERED` of it (mean plus :data:`K` SE); a head's raw height is in its own score units, so a small
  positive climb of a steep head is not a rebound.
* Barbero et al. 2024 claim that removing RoPE's lowest frequencies (p-RoPE) costs nothing and changes how the
  head uses position.  *Inside the window*: p-RoPE's accuracy at 32 is within :data:`NONINFERIOR` of RoPE's (the
  mean shortfall, seed by seed, plus :data:`K` SE).  *The rebound*: at our ``d = 16`` the two planes p-RoPE leaves
  unturned have wavelengths 6,283 and 19,869, and over the 256 offsets the rebound is read on they barely turn, so
  by its kernel (:func:`poskernels.theory.rotary_variants.p_rope_kernel`, whose first negative offset is RoPE's, 91)
  p-RoPE cannot move the rebound much.  What we record is a *finding* against the paper's hypothesis at this
  width: p-RoPE's rebound agrees with RoPE's within :data:`K` joined standard errors, it still rebounds (mean height
  less :data:`K` SE above 0), and past the window it falls as RoPE does (its drop at 256 beyond :data:`HOLD`).
* Partial rotary (released models; no paper claims it extrapolates): at ``f = 0.25`` only two planes turn, at
  frequencies 1 and 0.01 (wavelength 628, long enough that by 256 the slow plane's score has not climbed back to
  its values inside the window).  What it supports:
  it loses nothing inside the window, holds to 256 by the rule of :mod:`poskernels.claims.kerple_fire` (mean drop plus
  :data:`K` SE within :data:`HOLD`) and degrades less than RoPE there; and, a finding, it falls at 512 and at 10^5:
  the slow plane's score ``cos(0.01 r + phi)`` bottoms where its trained phase puts it (before ``r = 314``) and
  climbs back, so keys far enough back outscore recent ones.

Every threshold is one of :data:`K`, :data:`K_NEAR`, :data:`HOLD` (:mod:`poskernels.claims.kerple_fire`'s, one rule of
holding), :data:`NONINFERIOR` and :data:`RECOVERED`: the ``[constants]`` of ``rows/rotary_family.toml``, whose rows
are the claims (:mod:`poskernels.claims.table`).

Examples
--------
>>> [c.id for c in ROTARY_CLAIMS][:2]
['rotary_family.xpos_degrades_less_than_rope_past_the_window', 'rotary_family.xpos_degrades_less_than_rope_at_128']
"""

from __future__ import annotations

from .kerple_fire import HOLD
from .record import Claim
from .table import constants, suite

__all__ = ["HOLD", "K", "K_NEAR", "NONINFERIOR", "RECOVERED", "ROTARY_CLAIMS", "WINDOW_PAST"]

_C = constants("rotary_family")
#: Standard errors of margin in every claim of this suite but two.
K: float = _C["K"]
#: The margin of "xPos degrades less than RoPE" at 128, where RoPE itself drops only a few points: chosen on three
#: blocks of the family alone (``examples/rotary_family_blocks.py 5000 6000 7000``).  At 64 alone the gap was not
#: resolved at either margin within the suites' joint size (3 joined SE failed a fresh block 29.8% of the time, and at
#: 2 SE its size was 0.35% of the pooled calibration's 1%), so 64 enters through each seed's mean drop over 64, 128
#: and 256 (:data:`WINDOW_PAST`), at :data:`K`.
K_NEAR: float = _C["K_NEAR"]
#: The largest shortfall in accuracy at the training length that still counts as losing nothing (one point).
NONINFERIOR: float = _C["NONINFERIOR"]
#: The most a head's score may climb back past the window, as a share of its fall across the window, and still not
#: rebound (the five points of :data:`HOLD`, on the score's own scale).
RECOVERED: float = _C["RECOVERED"]
#: The tournament's lengths past the window, over which one claim averages each seed's drop.
WINDOW_PAST = ("64", "128", "256")

ROTARY_CLAIMS: tuple[Claim, ...] = suite("rotary_family")
