"""Reading a head trained at randomized positions as Ruoss et al. 2023 read it: each test sequence at its own
ordered random subset of ``[0, L_max)``.

Ruoss et al.'s code draws the positions with the same call in training and in evaluation, so a randomized head
never meets the consecutive positions ``0..n-1`` it was not trained on.  :func:`sequence_positions` draws, for the
``B`` test sequences of length ``n``, ``B`` ordered subsets from a Generator seeded by the test set (the same
positions for every head and seed, as the test sequences are); :func:`forward_at` is
:func:`poskernels.model.head.forward` with one row of positions per sequence, line for line (the head's own
``forward`` takes one row shared by the batch); :func:`randomized_accuracy` is the paper's reading, through
:func:`randomized_hits`, which computes :func:`forward_at`'s numbers bit for bit with the code and the turns of each
position ``0 .. L_max - 1`` computed once and gathered by every sequence (a head pays for its weights, not for a
cosine at each of the test set's ``B n`` positions).  The consecutive reading (``0..n-1``) is what
:func:`poskernels.model.engine.one_head.accuracy` gives; the tournament reports it beside the paper's.

Examples
--------
>>> from poskernels.model.config import HeadConfig
>>> from poskernels.model.head import forward, init_params
>>> cfg = HeadConfig(scheme="rope_randpos")
>>> params = init_params(cfg, np.random.default_rng(0))
>>> tokens = np.random.default_rng(1).integers(0, cfg.vocab, size=(3, 8))
>>> pos = sequence_positions(3, 8, 2048, seed=5)
>>> pos.shape, bool((np.diff(pos, axis=1) > 0).all())
((3, 8), True)
>>> one = forward(params, cfg, tokens[1:2], pos[1])[0]
>>> bool(np.allclose(forward_at(params, cfg, tokens, pos)[1:2], one, rtol=0, atol=1e-12))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES, rotate
from ..encodings.rotations import _turn, _turn_factors
from ..encodings.variants import random_positions
from ..errors import PosKernelsError
from .config import HeadConfig
from .embedding import token_table
from .head import _logit_scale
from .reading import PLAIN, Reading, check_tokens, frequencies

__all__ = ["POSITION_STREAM", "forward_at", "randomized_accuracy", "randomized_hits", "sequence_positions"]

#: Keys turned at a time by :func:`randomized_hits` (elementwise, so any block gives the same bits; the products whose
#: rounding may follow their shape keep the chunk's): a block's keys and their turns stay in cache, where a chunk's
#: ``2^16`` did not (a randomized RoPE head read 1.7x faster at n = 256).
BLOCK = 1 << 13

#: The most rows of positions the tables hold (a code of 8 MiB and its turns): a head trained at positions up to a
#: larger ``L_max`` (its setting allows 2^20) is read by :func:`forward_at` a chunk at a time.
ROWS_MAX = 1 << 16

#: The tag of the test positions' Generator, beside the test set's seed and length (a stream of its own).
POSITION_STREAM = 29


def sequence_positions(count: int, n: int, L_max: int, seed: int) -> np.ndarray:
    """``count`` ordered random subsets of ``[0, L_max)`` of size ``n``, one per test sequence, shape ``(count, n)``.

    Drawn from ``default_rng(SeedSequence([seed, n, POSITION_STREAM]))``: fixed by the test set, the same for
    every head, so drawn once per process and shared (read-only) by every head read at that length.

    Parameters
    ----------
    count : int
        Test sequences.
    n : int
        Their length.
    L_max : int
        The positions' range ``[0, L_max)``, at least ``n``.
    seed : int
        The test set's seed.

    Returns
    -------
    ndarray of float, shape (count, n)
        Increasing positions, one row per sequence (read-only).

    Examples
    --------
    >>> sequence_positions(2, 4, 16, 1).tolist()
    [[0.0, 1.0, 9.0, 13.0], [1.0, 3.0, 6.0, 9.0]]
    >>> bool(np.array_equal(sequence_positions(4, 5, 64, 1), sequence_positions(4, 5, 64, 1)))
    True
    """
    return _sequence_positions(count, n, L_max, seed)


@lru_cache(maxsize=8)
def _sequence_positions(count: int, n: int, L_max: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, POSITION_STREAM]))
    pos = np.stack([random_positions(rng, n, L_max) for _ in range(count)]) if count else np.zeros((0, n))
    pos.setflags(write=False)  # shared by every head read at this length
    return pos  # (count, n)


def forward_at(params: dict, cfg: HeadConfig, tokens, positions: np.ndarray, reading: Reading = PLAIN) -> np.ndarray:
    """Logits ``(B, C)`` of the head on ``tokens (B, n)``, sequence ``b`` at its own positions ``positions[b]``.

    :func:`poskernels.model.head.forward`'s lines, with positions of shape ``(B, n)``: the code of each sequence's
    positions added to its embedding, each sequence's queries and keys turned by its own angles.  For the schemes
    randomized positions apply to (an absolute code defined everywhere, or a rotation: no bias on the score).

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters.
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Sequences.
    positions : ndarray, shape (B, n)
        Each sequence's positions.
    reading : Reading
        How the head is read.

    Returns
    -------
    ndarray, shape (B, C)
        The logits at each sequence's last position.

    Raises
    ------
    PosKernelsError
        If the positions are not finite of shape ``(B, n)``, or the scheme puts a bias on the score.

    Examples
    --------
    See the module's example (one sequence's logits equal :func:`~poskernels.model.head.forward`'s); a scheme
    with a bias is refused:

    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="t5")
    >>> forward_at(init_params(cfg, np.random.default_rng(0)), cfg, [[1, 2, 16]], np.zeros((1, 3)))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: forward_at reads schemes without a bias on the score; got 't5'
    """
    tokens = check_tokens(cfg, tokens)
    B, n = tokens.shape
    pos = np.asarray(positions, dtype=float)
    if pos.shape != (B, n) or not np.isfinite(pos).all():
        raise PosKernelsError(f"forward_at needs finite positions of shape {(B, n)}; got shape {pos.shape}")
    scheme = _scheme_read_at(cfg)
    theta, lam = frequencies(cfg, reading), _logit_scale(params, cfg, reading, n)
    h = token_table(params, cfg)[tokens]  # (B, n, d)
    code = scheme.code(params, cfg, pos.ravel())  # (B n, d) or None
    if code is not None:
        h = h + code.reshape(B, n, cfg.d)
    q = h[:, -1] @ params["W_Q"]  # (B, d)
    k, v = h @ params["W_K"], h @ params["W_V"]  # (B, n, d) each
    if theta is not None:
        q = rotate(q, pos[:, -1:] * np.conj(theta))  # (B, d) phi_t(q), t = each sequence's last position
        k = rotate(k, pos[:, :, None] * theta)  # (B, n, d) phi_j(k_j)
    s = np.einsum("bd,bnd->bn", q, k) * (lam / cfg.tau)  # (B, n)
    a = np.exp(s - s.max(axis=-1, keepdims=True))  # (B, n) softmax over the causal prefix
    a /= a.sum(axis=-1, keepdims=True)
    return np.einsum("bn,bnd->bd", a, v) @ params["W_O"]  # (B, C)


def _scheme_read_at(cfg: HeadConfig):
    """The head's scheme, refused when it puts a bias on the score (:func:`forward_at` reads a code or a turn)."""
    scheme = SCHEMES[cfg.scheme]
    if scheme.where not in ("none", "input", "rotation"):
        raise PosKernelsError(f"forward_at reads schemes without a bias on the score; got {cfg.scheme!r}")
    return scheme


def _logits_at(params: dict, cfg: HeadConfig, tokens: np.ndarray, pos: np.ndarray, step: int) -> np.ndarray:
    """:func:`forward_at` of the sequences ``step`` at a time, the same bits: ``(B, C)``.

    The code and the turns are functions of each position alone, so at integer positions they are those of the rows
    ``0 .. max(pos)`` (one code and one ``(cos, sin)`` of ``m theta`` each), gathered by every sequence: the same
    products and the same cosines of the same angles, then :func:`forward_at`'s lines on each chunk of ``step``
    sequences.  Positions that are not integers, or past :data:`ROWS_MAX`, are read by :func:`forward_at` itself.
    """
    at = pos.astype(np.intp)  # (B, n) each position's row
    if not np.array_equal(at, pos) or at.size == 0 or at.min() < 0 or at.max() >= ROWS_MAX:
        return np.concatenate([forward_at(params, cfg, tokens[i : i + step], pos[i : i + step])
                               for i in range(0, tokens.shape[0], step)])  # fmt: skip
    scheme, n = _scheme_read_at(cfg), tokens.shape[1]
    theta, lam = frequencies(cfg, PLAIN), _logit_scale(params, cfg, PLAIN, n)
    rows = np.arange(at.max() + 1, dtype=float)  # (R,) every position read, once
    E, code = token_table(params, cfg), scheme.code(params, cfg, rows)  # (V, d), (R, d) or None
    if theta is not None:
        cq, sq = _turn_factors(rows[:, None] * np.conj(theta))  # (R, P) each: phi_t's turn of a query at row t
        ck, sk = _turn_factors(rows[:, None] * theta)  # (R, P) each: phi_j's turn of a key at row j
    out, block = [], max(1, BLOCK // n)  # sequences turned at a time
    for i in range(0, tokens.shape[0], step):
        x, a = tokens[i : i + step], at[i : i + step]  # (b, n) each
        h = E[x]  # (b, n, d)
        if code is not None:
            h = h + code[a]  # (b, n, d) the code of each sequence's positions
        q = h[:, -1] @ params["W_Q"]  # (b, d)
        k, v = h @ params["W_K"], h @ params["W_V"]  # (b, n, d) each
        if theta is not None:
            q = _turn(q, cq[a[:, -1]], sq[a[:, -1]])  # (b, d) phi_t(q)
            for j in range(0, a.shape[0], block):  # elementwise: a few sequences at a time stay in cache
                k[j : j + block] = _turn(k[j : j + block], ck[a[j : j + block]], sk[a[j : j + block]])  # phi_j(k_j)
        z = np.einsum("bd,bnd->bn", q, k) * (lam / cfg.tau)  # (b, n)
        w = np.exp(z - z.max(axis=-1, keepdims=True))  # (b, n)
        w /= w.sum(axis=-1, keepdims=True)
        out.append(np.einsum("bn,bnd->bd", w, v) @ params["W_O"])  # (b, C)
    return np.concatenate(out)  # (B, C)


def randomized_hits(params: dict, cfg: HeadConfig, tokens, targets, L_max: int, seed: int,
                    chunk: int = 1 << 16) -> np.ndarray:  # fmt: skip
    """Whether each test sequence, at its own ordered random subset of ``[0, L_max)`` (:func:`sequence_positions`),
    is answered right, shape ``(B,)`` bool, in chunks of about ``chunk`` tokens.  The paper's reading of a randomized
    head; its mean is :func:`randomized_accuracy`, the vector what the test-draw error is resampled from.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters.
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Test sequences.
    targets : array_like of int, shape (B,)
        Their targets.
    L_max : int
        The positions' range.
    seed : int
        The test set's seed (:func:`sequence_positions`).
    chunk : int
        Tokens read at a time; the result does not depend on it.

    Returns
    -------
    ndarray of bool, shape (B,)
        Whether each sequence's argmax logit is its target.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="rope_randpos")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, y = cue_batch(np.random.default_rng(1), 50, 16)
    >>> hits = randomized_hits(p, cfg, x, y, 2048, 7)
    >>> hits.shape, bool(np.array_equal(hits, randomized_hits(p, cfg, x, y, 2048, 7, chunk=64)))
    ((50,), True)
    """
    tokens = check_tokens(cfg, tokens)
    B, n = tokens.shape
    pos = sequence_positions(B, n, L_max, seed)  # (B, n)
    if B == 0:
        return np.zeros(0, dtype=bool)
    return np.argmax(_logits_at(params, cfg, tokens, pos, max(1, chunk // max(n, 1))), axis=1) == targets  # (B,)


def randomized_accuracy(params: dict, cfg: HeadConfig, tokens, targets, L_max: int, seed: int,
                        chunk: int = 1 << 16) -> float:  # fmt: skip
    """Accuracy with each test sequence at its own ordered random subset of ``[0, L_max)`` (:func:`sequence_positions`),
    in chunks of about ``chunk`` tokens.  The paper's reading of a randomized head.

    Parameters
    ----------
    params, cfg, tokens, targets, L_max, seed, chunk
        As for :func:`randomized_hits`.

    Returns
    -------
    float
        The mean of :func:`randomized_hits` (NaN for no sequence).

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="rope_randpos")
    >>> x, y = cue_batch(np.random.default_rng(1), 50, 16)
    >>> 0.0 <= randomized_accuracy(init_params(cfg, np.random.default_rng(0)), cfg, x, y, 2048, 7) <= 1.0
    True
    """
    hits = randomized_hits(params, cfg, tokens, targets, L_max, seed, chunk)
    return float(np.mean(hits)) if hits.size else float("nan")
