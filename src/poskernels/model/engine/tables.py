"""The content table of a stack: the first term of the score, each forward beside its backward.

The score of key ``j`` is ``<phi_t(q), phi_j(k_j)> lambda / tau + b(t - j)``.  Its first term depends on the
sequence only through the query token ``x_t`` and the key token ``x_j`` (and, for a head that turns, the key's
position), so a stack reads it from one table per model, built once per step:

* :class:`DotTable` ``(M, U, V)``: ``q_u k_v^T lambda / tau``, every distinct query token against every token's
  key (every head that does not turn);
* :class:`RotaryTable` ``(M, U n, V)``: Proposition 3 (i), ``<R(t) q, R(j) k> = <q, R(j - t) k>``, so plane ``p``
  of each token's key is turned by ``e^{i (j - t) theta_p}``: one row per (query token, key position).

Each writes what its backward reads into the stack's cache ``c`` (:mod:`poskernels.model.engine.stack`), and
tells a score path (:mod:`poskernels.model.engine.paths`) where each key's entry lies in it (``key_index``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .reductions import grid

__all__ = ["DotTable", "RotaryTable", "flat_offsets", "unit_scale"]


def unit_scale(lam) -> bool:
    """Whether the logit scale is the number 1 (a scale of the key count is an array, never taken as 1).

    A unit scale divides by ``tau`` (the same bits as ever); any other multiplies by ``lambda / tau``.

    Parameters
    ----------
    lam : float or ndarray
        The logit scale ``lambda``.

    Returns
    -------
    bool
        True for the number 1 only.

    Examples
    --------
    >>> unit_scale(1.0), unit_scale(1.2), unit_scale(np.ones(3))
    (True, False, False)
    """
    return np.ndim(lam) == 0 and lam == 1.0


@lru_cache(maxsize=64)
def flat_offsets(M: int, B: int, V: int, narrow: bool) -> np.ndarray:
    """``(m B + b) V``, shape ``(M, B, 1)``, read-only: a key's token plus it indexes the ``(M, B, V)`` mass table.

    ``uint16`` when ``narrow`` (the index is only counted: bytes tokens then make a ``uint16`` index, a quarter of
    the bytes to write; a gather would read it slower).
    """
    offsets = grid(M * B, 1, V).reshape(M, B, 1)  # (M, B, 1)
    if narrow:
        offsets = offsets.astype(np.uint16)
        offsets.setflags(write=False)
    return offsets


class DotTable:
    """``(M, U, V)``: each distinct query token's ``q_u`` against each token's key ``k_v``, times ``lambda / tau``."""

    @staticmethod
    def forward(c: dict, scheme, tau: float) -> np.ndarray:
        """The scaled table; the unscaled one is kept as ``c["raw"]`` when ``lambda`` is learned (``dL/dlambda``)."""
        table = c["q"] @ np.swapaxes(c["EK"], 1, 2)  # (M, U, V): each query token against each token's key
        if scheme.scale_grows:
            c["raw"] = table
        lam = c["lam"]
        return table / tau if unit_scale(lam) else table * (lam / tau)

    @staticmethod
    def key_index(c: dict) -> np.ndarray:
        """``(M, B, n)``: each key's entry in the stack's flat ``(M U, V)`` table (its query row, its token)."""
        tokens, qrow, V = c["tokens"], c["qrow"], c["EK"].shape[1]
        M = tokens.shape[0]
        return tokens + grid(M, 1, V).reshape(M, 1, 1) if qrow is None else qrow[..., None] * V + tokens

    @staticmethod
    def backward(c: dict, dtable: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """``(dL/dEK (M, V, d), the query's share of dL/dq (M, U, d))`` from the scaled table's gradient."""
        q, EK, lam = c["q"], c["EK"], c["lam"]
        M, U, V = q.shape[0], q.shape[1], EK.shape[1]
        dtable = dtable.reshape(M, U, V) / tau if unit_scale(lam) else dtable.reshape(M, U, V) * (lam / tau)
        dq = dtable @ EK  # (M, U, d)
        return np.swapaxes(dtable, 1, 2) @ q, dq  # (M, V, d), (M, U, d)


@lru_cache(maxsize=64)
def _rotations_cached(r: bytes, theta: bytes, dtype: str) -> np.ndarray:
    r_, theta_ = np.frombuffer(r), np.frombuffer(theta, dtype=dtype)
    e = np.exp(-1j * r_[:, None] * theta_)  # (n, P); complex theta = theta - i gamma: e^{-i r theta} e^{-gamma r}
    e.setflags(write=False)
    return e


def _rotations(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``e^{-i r theta}`` (``(n, P)``, read-only), remembered by value: a training step asks for the same every time."""
    theta = np.asarray(theta)
    theta = theta if np.iscomplexobj(theta) else np.asarray(theta, dtype=float)
    return _rotations_cached(np.asarray(r, dtype=float).tobytes(), theta.tobytes(), theta.dtype.str)


def _model_rotations(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``e^{-i r theta}`` of each model's own offsets ``r (M, n)``: ``(M, 1, n, P)``, the same bits row by row as
    :func:`_rotations` (each element the same product and exponential)."""
    theta = np.asarray(theta)
    theta = theta if np.iscomplexobj(theta) else np.asarray(theta, dtype=float)
    return np.exp(-1j * r[..., None] * theta)[:, None]  # (M, 1, n, P)


class RotaryTable:
    """``(M, U n, V)``: ``Re(W_{u j} kc_v)``, ``W_{u j} = conj(q_u) e^{i (j - t) theta}``, times ``lambda / tau``.

    In complex form plane ``p`` of a key is ``EK[..., 2p] + i EK[..., 2p+1]`` (``kc``), so ``Re(W kc)`` is the real
    product of ``Wr = conj(W)`` read as ``(re, im)`` pairs with ``EK`` itself: one real matrix product each way.
    """

    @staticmethod
    def forward(c: dict, scheme, tau: float) -> np.ndarray:
        """The scaled table; keeps the turns ``e`` and ``Wr`` (and ``c["raw"]`` for a learned ``lambda``)."""
        q, EK = c["q"], c["EK"]
        M, U, n = q.shape[0], q.shape[1], c["r"].shape[-1]
        # the turns: (n, P), or (M, 1, n, P) when each model reads its own positions
        e = _rotations(c["r"], c["theta"]) if c["r"].ndim == 1 else _model_rotations(c["r"], c["theta"])
        W = q.view(np.complex128)[:, :, None, :] * e.conj()  # (M, U, n, P): conj(W), W = conj(q) e
        Wr = W.view(np.float64).reshape(M, U * n, -1)  # (M, U n, d): conj(W) as (re, im) pairs
        table = Wr @ np.swapaxes(EK, 1, 2)  # (M, U n, V): Re(W kc)
        if scheme.scale_grows:
            c["raw"] = table  # the unscaled table: dL/dlambda reads it
        c.update(e=e, Wr=Wr)
        return table * (c["lam"] / tau)

    @staticmethod
    def key_index(c: dict) -> np.ndarray:
        """``(M, B, n)``: each key's entry in the stack's flat ``(M U n, V)`` table (model, query row, key, token)."""
        tokens, rows, V = c["tokens"], c["rows"], c["EK"].shape[1]
        M, _, n = tokens.shape
        if rows is None:  # (M, B, n) into the stack's (M n, V) tables: model m, key j, token x
            return tokens + (grid(1, n, V) + grid(M, 1, n * V).reshape(M, 1, 1))
        return rows * V + tokens

    @staticmethod
    def backward(c: dict, dtable: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """``(dL/dEK, the query's share of dL/dq)``: ``dEK = dtable^T Wr``; ``dq = sum_j e_j (dtable EK)_j`` in complex
        form (``Re(conj(q_p) e kc)`` has gradient ``e kc`` with respect to ``q_p``'s ``(re, im)``)."""
        q, EK = c["q"], c["EK"]
        M, U, n = q.shape[0], q.shape[1], c["r"].shape[-1]
        V = EK.shape[1]
        dtable = dtable.reshape(M, U * n, V) * (c["lam"] / tau)  # (M, U n, V)
        dEK = np.swapaxes(dtable, 1, 2) @ c["Wr"]  # (M, V, d)
        dW = (dtable @ EK).view(np.complex128).reshape(M, U, n, -1)  # (M, U, n, P): dtable kc
        return dEK, (dW * c["e"]).sum(axis=2).view(np.float64)  # (M, V, d), (M, U, d)
