"""The needle task: one marked token at a known offset ``r`` from the query, among unmarked tokens.

The cue task's vocabulary and target (:mod:`poskernels.tasks.cue`): content tokens carry one of ``S = 8``
uniform symbols, the query token ``2 S`` ends the sequence, the target is the symbol on the most recent marked
token.  Here exactly one content token is marked, the one ``r`` positions before the query (the query sits at
offset 0), so accuracy against ``r`` measures how far back a head retrieves, with the length ``n`` held apart.
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError, check_budget, check_positive_int
from .cue import N_SYMBOLS
from .validate import MAX_CUE_TOKENS

__all__ = ["needle_batch"]


def needle_batch(
    rng: np.random.Generator, batch: int, r: int, n: int | None = None, n_symbols: int = N_SYMBOLS
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``batch`` needle sequences: the only marked token is ``r`` positions before the query.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    batch : int
        Number of sequences.
    r : int
        Offset of the needle from the query, ``>= 1``.
    n : int, optional
        Sequence length including the query, ``>= r + 1`` (default ``r + 1``: the needle is the first token).
    n_symbols : int
        Symbols ``S``.

    Returns
    -------
    tokens : ndarray of uint8, shape (batch, n)
        Token ids as in the cue task (``uint8`` keeps a long test set small).
    targets : ndarray of int64, shape (batch,)
        The needle's symbol.

    Examples
    --------
    One sequence of length 10 with the needle 3 positions back: ``11`` is symbol 3 marked, at position
    ``10 - 1 - 3 = 6``; every other content token is unmarked, and the query ``16`` ends it.

    >>> tokens, targets = needle_batch(np.random.default_rng(4), 1, 3, 10)
    >>> tokens[0].tolist(), int(targets[0])
    ([2, 1, 7, 5, 7, 0, 11, 7, 5, 16], 3)
    """
    if not isinstance(rng, np.random.Generator):
        raise PosKernelsError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)); got {rng!r}")
    batch = check_positive_int("batch", batch)
    r = check_positive_int("r", r)
    n_symbols = check_positive_int("n_symbols", n_symbols)
    if 2 * n_symbols + 1 > 256:
        raise PosKernelsError(f"n_symbols must be at most 127 (uint8 token ids); got {n_symbols}")
    n = r + 1 if n is None else check_positive_int("n", n)
    if n < r + 1:
        raise PosKernelsError(f"n must be >= r + 1 = {r + 1} (the needle sits r positions before the query); got {n}")
    check_budget(f"a needle batch of {batch} x {n} tokens", batch * n, MAX_CUE_TOKENS)  # the cue sampler's budget
    tokens = rng.integers(0, n_symbols, size=(batch, n), dtype=np.uint8)  # (batch, n) unmarked symbols
    tokens[:, n - 1] = 2 * n_symbols  # the query
    tokens[:, n - 1 - r] += n_symbols  # the needle, marked
    return tokens, tokens[:, n - 1 - r].astype(np.int64) - n_symbols
