"""A positional scheme of your own, in one file: a learned Gaussian bias over offsets.

The score of a key ``r = t - j`` positions back gets ``b(r) = -r^2 / (2 w^2)``: near keys are free, far keys pay
quadratically, and the head learns the width ``w = e^c`` (it starts at the setting ``gauss_width``).  Nothing inside
``src/`` changes; the library reads the scheme from this file:

    poskernels check-scheme examples/gaussian_bias.py
    poskernels tournament --scheme-file examples/gaussian_bias.py --schemes alibi,gauss --seeds 3

or, from Python::

    from poskernels.model.scheme_file import load_scheme_file
    load_scheme_file("examples/gaussian_bias.py")   # registers "gauss"; HeadConfig(scheme="gauss") now works

Shapes (see ``poskernels.encodings.scheme``): while training, ``params["c"]`` is ``(M, 1)`` (a stack of ``M``
heads), ``q`` is ``(M, U, d)`` and the offsets ``r`` are ``(n,)``; ``bias`` returns ``(M, n)`` and ``bias_backward``
receives ``dz = dL/dbias`` of shape ``(M, U, n)``.  Every hook indexes from the right, so a reader of every position
(``r`` of shape ``(n, n)``, one head) gets ``(n, n)`` from the same line.
"""

from __future__ import annotations

import numpy as np

from poskernels.encodings import Scheme, Setting


class GaussianBias(Scheme):
    """``b(r) = -r^2 / (2 w^2)``, ``w = e^c`` learned (one scalar per head)."""

    name, title, article = "gauss", "Gaussian bias", "none (beyond the article)"
    where, relative, defined_everywhere, in_article = "score", True, True, False
    colour = "#aa3377"
    settings = {"gauss_width": Setting(8.0, 0.0, None, "the width w the head starts from")}

    def init(self, cfg, rng):
        return {"c": np.full(1, np.log(cfg.gauss_width))}  # (1,): c = ln w

    def bias(self, params, cfg, q, r):
        return -0.5 * r**2 * np.exp(-2.0 * params["c"])  # (M, 1) * (n,) -> (M, n); one head: (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        # d b / d c = r^2 e^{-2c}; summed over every query (axis 1) and key (axis 2) of each head
        dc = (dz * (r**2 * np.exp(-2.0 * params["c"]))[:, None, :]).sum(axis=(1, 2))  # (M,)
        return None, {"c": dc[:, None]}  # the query does not enter: no dL/dq

    def reference_bias(self, tp, cfg, q, r, dtype):
        """The same term in PyTorch, for the autograd check (``tp["c"]`` is ``(M, 1)``, ``r`` NumPy ``(n,)``)."""
        import torch

        r2 = torch.tensor(np.asarray(r, dtype=float) ** 2, dtype=dtype)  # (n,)
        return (-0.5 * r2 * torch.exp(-2.0 * tp["c"]))[:, None, :]  # (M, 1, n)
