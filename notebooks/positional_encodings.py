# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Positional encodings: sinusoids, rotations, and RoPE — the companion notebook
#
# Every positional encoding is a kernel over offsets. This notebook walks the article section by section and
# asks `poskernels` for every number and every figure: nothing here is computed twice or typed in. Each table
# below is the one `poskernels reproduce` prints, from the same page section; the figures are the laboratory's
# (`poskernels lab`), drawn from the same payload.
#
# Open it with `jupytext --to notebook notebooks/positional_encodings.py` (or any editor that reads the
# percent format), or run it as a script: `MPLBACKEND=Agg python notebooks/positional_encodings.py`.
# Figures are written to `$POSKERNELS_NOTEBOOK_OUT` (default `results/notebook/`). Trained heads are read from
# the cache `poskernels reproduce` fills (`.cache/poskernels`); on a cold cache the tournament trains in seconds.

# %%
import os
from pathlib import Path

import numpy as np

from poskernels import encodings, extension, page
from poskernels.lab import figures, viz_payload
from poskernels.theory import alibi, census, commutant, counting, decay, kernel, rope

OUT = Path(os.environ.get("POSKERNELS_NOTEBOOK_OUT", "results/notebook"))
OUT.mkdir(parents=True, exist_ok=True)
ctx = page.Context(cache_dir=Path(os.environ.get("POSKERNELS_CACHE", ".cache/poskernels")), log=lambda m: None)
REGISTERED = {s.key: s for s in page.SECTIONS}


def section(key: str):
    """Compute one page section (the numbers of one article element), print its table, return its data."""
    if key not in REGISTERED:
        print(f"[section {key!r} is not part of this installation]")
        return None
    s = REGISTERED[key]
    if key not in ctx.numbers:
        ctx.numbers[key] = s.compute(ctx)
    print(s.render(ctx.numbers[key]))
    return ctx.numbers[key]


def show(fig, name: str):
    """Save a figure under OUT, and display it when running inside Jupyter."""
    path = OUT / f"{name}.png"
    fig.savefig(path)
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is not None:
            display(fig)
    except ImportError:
        pass
    print(f"figure: {path}")


# %% [markdown]
# ## Order, and how a mask leaks it
#
# **Proposition 1.** With equal scores and only a beginning-of-sequence value `e`, a causal layer's output at
# `t` is `e/(t+1)`, so position is recovered exactly; in general one causal layer sees its prefix only as a
# multiset. On the cue task, the best reader of a bag is computed exactly by counting.

# %%
e = np.eye(4)[0]  # a unit beginning-of-sequence value
o = counting.causal_counter(6, e)  # (6, 4) outputs at t = 0..5
print("positions recovered from the counter:", counting.position_from_counter(o, e).round(12).tolist())
prop1 = section("prop1")

# %% [markdown]
# ## Position as a set of clocks
#
# **Definition 2, Proposition 2.** The sinusoidal code turns the hands of `d/2` clocks; a shift is one rotation
# `R_ω(k)`, and every position lies on the sphere of radius `sqrt(d/2)`.

# %%
d = 16
w = encodings.omega(d)
p = encodings.sinusoidal_code(np.arange(40), d)  # (40, d)
print("omega_j:", w.round(6).tolist())
print("shift is a rotation:", np.allclose(encodings.R_omega(7, w) @ p[3], p[10]))
print("|p(m)|^2 = d/2:", np.allclose((p**2).sum(1), d / 2))

# %% [markdown]
# **Theorem 1.** `<p(m), p(n)> = κ_d(n − m)`: the kernel is stationary, and as `d` grows `(2/d) κ_d` tends to
# the cosine-integral limit `I_b`, a logarithmic ruler. Figure A's readout at `m = 3`, `n = 10`:

# %%
print("<p(3), p(10)> / (d/2) =", round(float(p[3] @ p[10] / (d / 2)), 3))
print("(2/d) kappa_d(7)      =", round(float(kernel.normalized_kernel(7, d)), 3))
thm1 = section("thm1")

# %%
payload = viz_payload(ctx)
fig, _ = figures.FIGURES["kernel_ruler"](payload)
show(fig, "kernel_ruler")

# %% [markdown]
# **Theorem 2.** Only a `d`-dimensional family of score matrices sees offsets alone (the commutant of
# `R_ω(1)`); the relativity defect `δ` measures how far a matrix sits from it. A random matrix has
# `E δ² = 1 − 1/d`; the window's exact condition numbers need 200-digit arithmetic.

# %%
rng = np.random.default_rng(0)
M = rng.standard_normal((d, d))
print("defect of a random 16x16 matrix:", round(float(commutant.relativity_defect(M)), 3))
print("sqrt(1 - 1/d):", round(float(commutant.expected_random_defect(d)), 3))
print("defect of its projection:", round(float(commutant.relativity_defect(commutant.commutant_projection(M))), 12))
thm2 = section("thm2")

# %% [markdown]
# ## Relative position: biases and the ALiBi kernel
#
# **Definition 3, Theorem 3.** T5's buckets, and ALiBi as a product kernel: the weight past `D` is at most
# `e^W e^{-sD} / (1 − e^{-s})`, and a key past the horizon `W/s` is outweighed by the query itself.

# %%
def3 = section("def3")
thm3 = section("thm3")
print("horizon W/s at W = 20, s = 1/2:", alibi.alibi_horizon(20.0, 0.5))

# %% [markdown]
# ## Rotations: RoPE
#
# **Proposition 3.** RoPE is relative by construction and isometric; its offset score is a trigonometric
# polynomial. **Proposition 4.** "Long-term decay" is a property of envelopes and matched pairs.

# %%
q, k = rng.standard_normal(d), rng.standard_normal(d)
s = rope.rope_offset_score(q, k, w)
print("score at offsets 0..4:", [round(float(s(x)), 4) for x in range(5)])
print("relative:", np.isclose(rope.rope_score(q, k, 5, 12, w), rope.rope_score(q, k, 105, 112, w)))
theta128 = encodings.omega(128)
print(
    "envelope sum_j |S_j| at offsets 1, 64, 2048 (d = 128):",
    decay.decay_envelope([1, 64, 2048], theta128).round(1).tolist(),
)
prop4 = section("prop4")

# %% [markdown]
# ## Past the training window
#
# The length tournament: one causal head of width 16, five schemes, trained at length 32 and read longer; then the
# RoPE heads re-read with each context-extension map, the rebound of RoPE's score past the window, and the
# sinusoidal head's diagnostics.

# %%
tournament = section("tournament")
rescaled = section("rescaled")
rebound = section("rebound")
sinusoidal = section("sinusoidal")

# %% [markdown]
# **Definition 5, Theorem 5.** The wavelength census: only planes whose wavelength fits in the window turn a whole
# circle in training. PI, NTK-aware and YaRN change the angles the head sees, plane by plane.

# %%
for row in census.wavelength_census(32, d):
    print(f"plane {row.plane}: wavelength {row.wavelength:9.1f}  turns {row.turns:6.3f}  full turn {row.full_turn}")
for name in ("pi", "ntk", "yarn"):
    ext = extension.extend(name, w, 4, 32)
    print(f"{name:5s} factors at kappa = 4:", ext.factors.round(3).tolist(), "logit scale", round(ext.logit_scale, 3))
thm5 = section("thm5")

# %% [markdown]
# ## Kernels over offsets, side by side
#
# The laboratory's two figures read one payload, `viz_payload()`; a test keeps the reference copy shipped with the
# page equal to it in its deterministic parts and within the seeds' error in its trained ones. Serve it with `poskernels lab` and open the printed URL. Here are its static counterparts.

# %%
payload = viz_payload(ctx)
print("views:", {fig: keys for fig, keys in payload["figures"].items()})
print("absent:", {k: v["absent"] for k, v in payload.items() if isinstance(v, dict) and "absent" in v})
written, skipped = figures.draw_figures(payload, OUT)
for path in written:
    print("figure:", path)
for name, why in skipped.items():
    print(f"skipped {name}: {why}")

# %% [markdown]
# ## Finance case study: which company was named last?
#
# Heads trained on 32-token windows of synthetic filings read whole filings; the ALiBi horizon table says where
# ALiBi's answers fail, and the laboratory's filing shows every reader's answer at every position.

# %%
filings = section("filings")
