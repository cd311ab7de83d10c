"""The content path: a head whose score is ``c(x_t, x_j) + b(x_t, j)``, forward beside backward.

No position (NoPE), ALiBi, T5, Shaw, Kerple, FIRE: the content entry depends on the key's token alone, so the
attention mass on token ``v`` is ``C[b, v] = e^{c(x_t, v)} sum_{j: x_j = v} e^{b(x_t, j)}``, one weighted count
per token, and the backward needs no per-key array for the content (and one gather for a bias with parameters).
The weights ``a_j`` are never formed; :meth:`ContentPath.attention` builds them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .position_term import position_weights
from .reductions import grid, per_model_max, row_sum
from .tables import flat_offsets

__all__ = ["ContentPath"]


@lru_cache(maxsize=8)
def _shared_weights(wp: bytes, shape: tuple) -> np.ndarray:
    w = np.broadcast_to(np.frombuffer(wp), shape).ravel()  # (M B n,)
    w.setflags(write=False)
    return w


def _key_weights(wp: np.ndarray, shape: tuple) -> np.ndarray:
    """Each key's position weight, flat: ``wp`` broadcast to ``shape``; remembered when ``wp`` is one ``(n,)`` row.

    A bias without parameters (ALiBi) gives the same row every step, so its ``(M B n,)`` copy is made once.
    """
    if wp.ndim == 1:
        return _shared_weights(np.ascontiguousarray(wp, dtype=float).tobytes(), shape)
    return np.broadcast_to(wp, shape).ravel()


class ContentPath:
    """Weighted counts per token: the score's content entry is the key token's alone."""

    name = "content"

    @staticmethod
    def takes(terms) -> bool:
        """No turn, no added code, no score shift, not the exact pass."""
        return not (terms.exact or terms.coded or terms.shifted or terms.rotary)

    @staticmethod
    def mass(c: dict, table: np.ndarray, ptable, score_shift) -> np.ndarray:
        """``(M, B, V)`` unnormalized attention mass on each token (the counts are int: a new array; weighted sums:
        in place)."""
        tokens, qrow, U = c["tokens"], c["qrow"], c["U"]
        M, B, n = tokens.shape
        V = table.shape[-1]
        narrow = (ptable is None or ptable.ndim == 1) and M * B * V <= 1 << 16  # only counted
        flat = tokens + flat_offsets(M, B, V, narrow)  # (M, B, n) index into a (M, B, V) table
        ec = np.exp(table - per_model_max(table))  # (M, U, V) exp of the content table, each model's max 1
        ep, wp = position_weights(ptable, c["rows"])
        if wp is None:
            Cw = np.bincount(flat.ravel(), minlength=M * B * V)  # token counts (int, exact as floats)
        else:
            w = _key_weights(wp, (M, B, n))  # (M B n,) each key's position weight
            Cw = np.bincount(flat.ravel(), weights=w, minlength=M * B * V)
        ecr = ec if qrow is None else ec.reshape(M * U, V)[qrow]  # (M, 1 or B, V) content weight of each token
        Cw = Cw.reshape(M, B, V) * ecr if wp is None else np.multiply(Cw.reshape(M, B, V), ecr, out=Cw.reshape(M, B, V))
        c.update(flat=flat, ecr=ecr, wp=wp, ep=ep)
        return Cw

    @staticmethod
    def read_out(c: dict, Z: np.ndarray, logits: np.ndarray, W_O: np.ndarray) -> None:
        """Nothing past the mass: the values are read from ``C`` alone."""

    @staticmethod
    def backward(c: dict, dlogits: np.ndarray, s: np.ndarray, dEO: np.ndarray):
        """``(dtable, dptable, None)`` from ``dL/dlogits``, the softmax's mean ``s`` and ``dEO = C^T dL/dlogits``.

        With ``g = dlogits EO^T`` (``dL/dC``), the content gradient is ``sum_b C (g - s)``; for a single query
        token it is ``sum_c EO dEO - C^T s`` (``g`` never formed).  A bias with parameters gets ``e^{b_j} R[b,
        x_j]``, ``R = e^c (g - s) / Z`` (one gather, no per-key softmax)."""
        C, qrow, rows, flat = c["C"], c["qrow"], c["rows"], c["flat"]
        M, U, n = c["q"].shape[0], c["U"], flat.shape[-1]
        V = C.shape[-1]
        free = c["has_ptable"] and not c["ptable_shared"]  # a bias that depends on parameters
        if qrow is None:
            dtable = row_sum(c["EO"] * dEO) - np.swapaxes(C, 1, 2) @ s  # (M, V, 1)
        if qrow is not None or free:
            gs = dlogits @ np.swapaxes(c["EO"], 1, 2)  # (M, B, V) g = dL/dC
            gs -= s  # g - s, in place
        if qrow is not None:
            cols = qrow[..., None] * V + grid(1, V, 1)  # (M, B, V) into the stack's (M U, V) table
            dtable = np.bincount(cols.ravel(), weights=(C * gs).ravel(), minlength=M * U * V)
        if not free:
            return dtable, None, None
        np.multiply(gs, c["ecr"], out=gs)  # R = e^c (g - s) / Z in place
        Rt = np.take(np.divide(gs, c["Z"], out=gs), flat)  # (M, B, n): dz_j = e^{b_j} R[b, x_j]
        if rows is None:
            return dtable, c["ep"] * Rt.sum(axis=1)[:, None], None  # (M, 1, n)
        dptable = c["ep"] * np.bincount(rows.ravel(), weights=Rt.ravel(), minlength=M * U * n).reshape(M, U, n)
        return dtable, dptable, None

    @staticmethod
    def attention(c: dict) -> np.ndarray:
        """``a (M, B, n)``: each key's content weight times its position weight, over ``Z``."""
        wp = 1.0 if c["wp"] is None else c["wp"]
        ecr = np.broadcast_to(c["ecr"], c["C"].shape)  # (M, B, V)
        return np.ascontiguousarray(ecr).ravel()[c["flat"]] * wp / c["Z"]
