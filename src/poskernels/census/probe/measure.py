"""The statistics of one probe, reduced layer by layer as the forward pass runs (nothing of a layer is kept but
its numbers): per head, the kernel over offsets from a sample of queries against all their keys (with the
sample's standard error), its split by plane (Proposition 3 (iii)), plane energies of queries and keys, attention
sinks and previous-token shares; for a learned absolute table, Theorem 1's Toeplitz defects."""

from __future__ import annotations

import numpy as np

from ...encodings import from_half_split, sinusoidal_code
from ...theory import empirical as E

__all__ = ["LayerReducer", "absolute_table", "offset_grid"]

HORIZON = 4  # the polynomial's rebound is looked for up to this many training lengths
SINK = 0.3  # a head is a sink when its mean weight on the first token exceeds this (Gu et al. 2025)
PREVIOUS = 0.5  # a previous-token head: mean weight on key t - 1 above this


def offset_grid(T: int, dense: bool = False) -> list[int]:
    """The offsets stored for each head: 0..3 (0..15 when ``dense``), then powers of two and their 1.5x (and, when
    ``dense``, 1.25x and 1.75x), below ``T``.

    Parameters
    ----------
    T : int
        The sequence length; every offset is below it.
    dense : bool
        The denser grid (the past-window probe's).

    Returns
    -------
    list of int
        The offsets, increasing.

    Examples
    --------
    >>> offset_grid(20)
    [0, 1, 2, 3, 4, 6, 8, 12, 16]
    >>> offset_grid(40, dense=True)[14:]
    [14, 15, 16, 20, 24, 28, 32]
    """
    grid = set(range(min(T, 16 if dense else 4)))
    p = 16 if dense else 4
    steps = (4, 5, 6, 7) if dense else (4, 6)
    while p < T:
        grid.update(x for x in (p * s // 4 for s in steps) if x < T)
        p *= 2
    return sorted(grid)


def _sig(x, digits: int = 7) -> list[float]:
    """``x`` to ``digits`` significant digits (a head's polynomial: float32's precision, whatever its scale)."""
    return [float(f"{v:.{digits}g}") for v in np.asarray(x, dtype=float).ravel()]


def _r(x, digits: int = 6):
    return np.round(np.asarray(x, dtype=float), digits).tolist()


class LayerReducer:
    """Called once per attention layer (a :class:`~poskernels.census.probe.capture.Capture`); ``layers`` holds the
    numbers.

    ``sample`` query positions (drawn once, sorted) are scored against all their keys; ``rotary`` says whether the
    layout is Hugging Face's half-split rotary one (its planes are then read in this library's pairs); ``rope``
    maps a layer to its frequencies and training length ``(theta, L)``, and each of its heads is then read as a
    polynomial (:func:`~poskernels.theory.empirical.head_polynomial`) and where it would rebound past ``L``, up to
    :data:`HORIZON` ``L`` (:func:`~poskernels.theory.empirical.polynomial_rebound`).
    """

    def __init__(self, T: int, sample: int, rng: np.random.Generator, rotary: bool,
                 rope: dict[int, tuple[np.ndarray, int]] | None = None):  # fmt: skip
        self.T, self.rotary, self.rope = T, rotary, rope or {}
        self.query_pos = np.sort(rng.choice(T, size=min(sample, T), replace=False))
        self.grid, self.dense = offset_grid(T), offset_grid(T, dense=True)
        self.layers: list[dict] = []

    def __call__(self, cap) -> None:
        import torch

        q = cap.query[0].float()  # (H, T, d)
        k = cap.key[0].float()  # (KV, T, d)
        H, KV = q.shape[0], k.shape[0]
        k = k.repeat_interleave(H // KV, dim=0)  # transformers' repeat_kv: query head h reads key head h // (H/KV)
        s = torch.as_tensor(self.query_pos)
        logits = (q[:, s] @ k.transpose(1, 2) * cap.scaling).numpy()  # (H, S, T), before the mask
        w = cap.weights[0].float()
        weights = w[:, s].numpy()
        mean, err = E.kernel_by_offset(logits, self.query_pos, np.arange(self.T), self.T - 1)
        qn, kn = q.numpy(), k.numpy()
        if self.rotary:
            qn, kn = from_half_split(qn), from_half_split(kn)
        layer = len(self.layers) if cap.layer is None else int(cap.layer)
        theta, L = self.rope.get(layer, (None, 0))
        pos = np.arange(self.T)
        heads = []
        split = E.plane_kernels_causal(qn[:, self.query_pos] * cap.scaling, kn, self.query_pos)  # (H, P, T)
        for h in range(H):
            planes = split[h]
            heads.append({
                "kernel": _r(mean[h, self.dense], 4),
                "kernel_error": float(np.nanmean(err[h])),
                "plane_split": _r(planes[:, self.grid], 4),
                "plane_sum_error": float(np.nanmax(np.abs(planes.sum(0) - mean[h]))),
                "q_energy": _r(E.plane_energies(qn[h]), 4),
                "k_energy": _r(E.plane_energies(kn[h]), 4),
                "first_token": float(E.first_token_share(weights[h], self.query_pos)),
                "previous_token": float(E.previous_token_share(weights[h], self.query_pos)),
            })  # fmt: skip
            if theta is not None:
                poly = cap.scaling * E.head_polynomial(qn[h], kn[h], pos, pos, theta)
                heads[-1]["polynomial"] = [_sig(poly.real), _sig(poly.imag)]
                heads[-1]["rebound"] = E.polynomial_rebound(np.asarray(heads[-1]["polynomial"][0])
                                                            + 1j * np.asarray(heads[-1]["polynomial"][1]), theta, L,
                                                            HORIZON * L)  # fmt: skip
        self.layers.append({"layer": layer, "heads": heads})


def absolute_table(P: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, heads: int, rng: np.random.Generator,
                   draws: int = 32) -> dict:  # fmt: skip
    """Theorem 1 on a learned table ``P`` (n, D): the Toeplitz defect of ``P P^T`` beside the sinusoidal code's and
    random tables' (``draws`` of them), its spectrum, and per head the defect of ``P W_Q^h W_K^h^T P^T`` beside
    random ``W_Q W_K^T`` of the same rank and norm (a distribution).

    Parameters
    ----------
    P : ndarray, shape (n, D)
        The learned position table.
    W_Q, W_K : ndarray, shape (D, heads * d_h)
        The first layer's query and key projections.
    heads : int
        Heads of the layer.
    rng : numpy.random.Generator
        The only source of randomness (the random tables and projections).
    draws : int
        Random matrices per comparison.

    Returns
    -------
    dict
        ``positions``, ``width``, ``gram_defect``, ``sinusoidal_defect``, ``random_table_defect`` (mean, 90% range,
        draws), ``spectrum``, ``top_frequencies`` and, per head, its ``defect`` beside the random ones'.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P, W = rng.standard_normal((16, 8)), rng.standard_normal((8, 8))
    >>> a = absolute_table(P, W, W, 2, np.random.default_rng(0), draws=4)
    >>> a["positions"], a["width"], len(a["heads"]), a["sinusoidal_defect"] < 1e-20
    (16, 8, 2, True)
    """
    n, D = P.shape
    dh = W_Q.shape[1] // heads
    rand = E.random_defects(n, D, 1.0, rng, draws)
    spectrum = E.table_spectrum(P)
    per_head = []
    for h in range(heads):
        M = W_Q[:, h * dh:(h + 1) * dh] @ W_K[:, h * dh:(h + 1) * dh].T  # fmt: skip
        r = E.random_defects(n, D, float(np.linalg.norm(M)), rng, draws, table=P, rank=dh)
        lo, hi = np.quantile(r, [0.05, 0.95])
        per_head.append({"defect": E.toeplitz_defect(P @ M @ P.T), "random_mean": float(r.mean()),
                         "random_lo": float(lo), "random_hi": float(hi)})  # fmt: skip
    sin = sinusoidal_code(np.arange(n), D if D % 2 == 0 else D - 1)
    return {
        "positions": n, "width": D,
        "gram_defect": E.toeplitz_defect(P @ P.T),
        "sinusoidal_defect": E.toeplitz_defect(sin @ sin.T),
        "random_table_defect": {"mean": float(rand.mean()), "lo": float(np.quantile(rand, 0.05)),
                                "hi": float(np.quantile(rand, 0.95)), "draws": draws},
        "spectrum": _r(spectrum, 8),
        "top_frequencies": [int(i) for i in np.argsort(spectrum)[::-1][:8]],
        "heads": per_head,
    }  # fmt: skip
