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
# Every positional encoding is a kernel over offsets. This notebook first shows the library on your own arrays
# (RoPE on a tensor, a real model's config read and extended, a kernel computed, one head trained and read past its
# window), then walks the article section by section and asks `poskernels` for every number and every figure:
# nothing is computed twice or typed in. Each table is the one `poskernels reproduce` prints, from the same page
# section; the figures are the laboratory's (`poskernels lab`), drawn from the same payload.
#
# Open it in Jupyter with `jupytext --to notebook notebooks/positional_encodings.py` (the `notebook` extra:
# `pip install '.[notebook]'`), or run it as a script: `python notebooks/positional_encodings.py`. Figures show
# inline in Jupyter and are also written to `$POSKERNELS_NOTEBOOK_OUT` (default `results/notebook/`). The article's
# trained sections read the heads `poskernels reproduce` caches in `.cache/poskernels`; on a cold cache they train
# them (minutes). Set `POSKERNELS_NOTEBOOK_TRAINED=0` to skip those sections (the tutorial part still trains its
# own head, in a second).

# %%
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from poskernels import apply_rope, encodings, extension, page
from poskernels.census_cli import census, plot_census
from poskernels.lab import figures, viz_payload
from poskernels.rope_config import config_extension, load_config
from poskernels.theory import alibi, commutant, counting, decay, kernel, rope
from poskernels.theory import census as wavelength

OUT = Path(os.environ.get("POSKERNELS_NOTEBOOK_OUT", "results/notebook"))
OUT.mkdir(parents=True, exist_ok=True)
CACHE = Path(os.environ.get("POSKERNELS_CACHE", ".cache/poskernels"))
TRAINED = os.environ.get("POSKERNELS_NOTEBOOK_TRAINED", "1") != "0"
SHOWN: set[str] = set()  # figures already shown, by file name
ctx = page.Context(cache_dir=CACHE, log=lambda m: None)


def section(key: str):
    """Compute the page sections of one article element (deterministic part first), print their tables."""
    found = [s for s in page.SECTIONS if s.key == key]
    if not found:
        print(f"[section {key!r} is not part of this installation]")
        return None
    for s in found:
        if s.trained and not TRAINED:
            print(f"[section {key!r}: trained part skipped (POSKERNELS_NOTEBOOK_TRAINED=0)]")
            continue
        print(s.render(page.compute_section(ctx, s)))
    return ctx.numbers.get(key)


def show(fig_or_path, name: str | None = None):
    """Show a figure inline in Jupyter (as a PNG, whatever the backend) and keep it under OUT."""
    if isinstance(fig_or_path, (str, Path)):
        path = Path(fig_or_path)
    else:
        import matplotlib.pyplot as plt

        path = OUT / f"{name}.png"
        fig_or_path.savefig(path, dpi=110)
        plt.close(fig_or_path)
    SHOWN.add(path.name)
    try:
        from IPython import get_ipython
        from IPython.display import Image, display

        if get_ipython() is not None:
            display(Image(filename=str(path)))
    except ImportError:
        pass
    print(f"figure: {path}")


# %% [markdown]
# ## The library on your own arrays
#
# **RoPE on a tensor.** `apply_rope(x, positions, theta)` rotates plane `j` of the vector at position `m` by
# `m θ_j` (Definition 4); planes are consecutive coordinate pairs. The score of a rotated query and key depends on
# their offset only (Proposition 3). Swap in your own `q` and `k`, shape `(n, d)`.

# %%
rng = np.random.default_rng(0)
d = 16
w = encodings.omega(d)  # theta_j = 10000**(-2j/d), (d/2,)
q, k = rng.standard_normal((2, 6, d))  # (n, d) each: six positions of your queries and keys
qr, kr = apply_rope(q, np.arange(6), w), apply_rope(k, np.arange(6), w)  # (n, d) each
shifted = apply_rope(q, 100 + np.arange(6), w) @ apply_rope(k, 100 + np.arange(6), w).T  # (n, n)
print("scores unchanged by a shift of every position by 100:", np.allclose(qr @ kr.T, shifted))

# %% [markdown]
# The same call takes torch tensors, as transformers holds them: `(batch, heads, n, d)` in bfloat16, positions
# `(batch, n)`, gradients flowing (`poskernels.torch_rope`; `layout="half"` for transformers' `rotate_half` layout).

# %%
try:
    import torch
except ImportError:
    torch = None
    print("torch is not installed: pip install '.[torch]'")
if torch is not None:
    qt = torch.randn(2, 4, 6, d, dtype=torch.bfloat16, requires_grad=True)  # (batch, heads, n, d)
    pos = torch.stack([torch.arange(6), 50 + torch.arange(6)])  # (batch, n)
    out = apply_rope(qt, pos, w)
    out.float().square().sum().backward()
    print("torch:", out.dtype, tuple(out.shape), "| gradient", tuple(qt.grad.shape))

# %% [markdown]
# **A real model's config, read and extended.** `load_config` takes a bundled name, a `config.json` path, a dict or
# a transformers `PretrainedConfig`. The census lays Theorem 5 out plane by plane: which planes turn a whole circle
# in the training window, and what each extension map does to each. The config's own map gives the frequencies to
# rotate with past the window.

# %%
cfg = load_config("llama-3.1-8b")  # or load_config("path/to/config.json"), a dict, or model.config
print(f"d = {cfg.rotary_dim}, b = {cfg.base:g}, L = {cfg.training_length}, rope type {cfg.rope_type!r}")
data = census(cfg, 131072)
print("planes that turn in L:", sum(p["full_turn"] for p in data["planes"]), "of", len(data["planes"]))
show(plot_census(data, OUT / "census_llama31.png"))
ext, kappa, L = config_extension(cfg, 131072)  # the config's own map (Llama 3's smoothing), kappa = 8
qm = rng.standard_normal((3, cfg.rotary_dim)) / np.sqrt(cfg.rotary_dim)  # (n, d)
far = apply_rope(qm, [0, 65536, 131071], ext.inv_freq)  # (n, d): positions past L, extended frequencies
print(f"{ext.name}: kappa = {kappa:g}, factor of the slowest plane = {ext.factors[-1]:.4f}")

# %% [markdown]
# **A kernel, computed.** The sinusoidal code's inner product is a kernel over offsets,
# `<p(m), p(n)> = κ_d(n − m)` (Theorem 1); `(2/d) κ_d` tends to the cosine-integral limit `I_b` as `d` grows.
# Choose your own `d` and base.

# %%
import matplotlib.pyplot as plt  # noqa: E402

offsets = np.arange(0, 513)  # (513,)
fig, ax = plt.subplots(figsize=(7, 3.5))
for dd in (16, 64, 512):
    ax.plot(offsets, kernel.normalized_kernel(offsets, dd, 1e4), lw=1, label=f"(2/d) κ_d, d = {dd}")
ax.plot(offsets[1:], kernel.I_b(offsets[1:], 1e4), color="black", lw=2, alpha=0.4, label="limit I_b")
ax.set_xscale("symlog", linthresh=1)
ax.set_xlabel("offset Δ")
ax.legend(fontsize=8)
show(fig, "my_kernel")

# %% [markdown]
# **One head, trained and read past its window.** A causal head on the cue task, with settings of your own (here
# RoPE at width 32 and base 500, the short `quick` training preset), read at its training length and beyond, as
# trained and through YaRN.

# %%
from poskernels.experiments.tournament import head_accuracy, rescaled_reading  # noqa: E402
from poskernels.model.config import preset  # noqa: E402
from poskernels.model.train import train  # noqa: E402

run = preset("quick", "rope")
run = replace(run, head=replace(run.head, d=32, base=500.0))
head = train(run, seed=0, cache_dir=CACHE)
lengths = [32, 64, 128]
plain = [head_accuracy(head, n) for n in lengths]
yarn = [head_accuracy(head, n, rescaled_reading(head, "yarn", n)) for n in lengths]
for n, a, y in zip(lengths, plain, yarn):
    print(f"length {n:4d}: accuracy {a:.3f} as trained, {y:.3f} through YaRN")
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(lengths, plain, "o-", label="as trained")
ax.plot(lengths, yarn, "s--", label="YaRN")
ax.set_xscale("log", base=2)
ax.set_xlabel("test length")
ax.set_ylabel("accuracy")
ax.legend()
show(fig, "my_head")

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
fig, _ = figures.FIGURES["kernel_ruler"](viz_payload(ctx))
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
for row in wavelength.wavelength_census(32, d):
    print(f"plane {row.plane}: wavelength {row.wavelength:9.1f}  turns {row.turns:6.3f}  full turn {row.full_turn}")
for name in ("pi", "ntk", "yarn"):
    ext = extension.extend(name, w, 4, 32)
    print(f"{name:5s} factors at kappa = 4:", ext.factors.round(3).tolist(), "logit scale", round(ext.logit_scale, 3))
thm5 = section("thm5")

# %% [markdown]
# ## Finance case study: which company was named last?
#
# Heads trained on 32-token windows of synthetic filings read whole filings; the ALiBi horizon table says where
# ALiBi's answers fail, and the laboratory's filing shows every reader's answer at every position.

# %%
filings = section("filings")

# %% [markdown]
# ## Far past the window
#
# Theorem 3 (ii) says an ALiBi head's behaviour at length 10^5 is its behaviour at length 100. The long-context
# section reads every trained head with a streaming reader (a running softmax over chunks of keys; ALiBi with a
# certified cut) at lengths up to 10^5, and on a needle, one marked token at offset r.

# %%
long_context = section("long")

# %% [markdown]
# ## Fidelity: how far each trained figure moves with its test draw
#
# Every trained figure is a mean over seeds read on one test set. The same heads re-read on three other test draws
# give each cell's test-draw error, which joins the seeds' error and the article's binomial one when ours is set
# against the article's figure (the README's list of differences).

# %%
fidelity = section("fidelity")

# %% [markdown]
# ## Kernels over offsets, side by side
#
# Every section above is computed now. The laboratory's two figures read one payload, `viz_payload()`, which a
# test keeps equal to the reference copy shipped with the page in its deterministic parts and within the seeds'
# error in its trained ones. Serve it with `poskernels lab` and open the printed URL.
# Here are its static counterparts.

# %%
payload = viz_payload(ctx)
print("views:", {fig: keys for fig, keys in payload["figures"].items()})
print("absent:", {k: v["absent"] for k, v in payload.items() if isinstance(v, dict) and "absent" in v})
written, skipped = figures.draw_figures(payload, OUT)
for path in written:
    if path.name not in SHOWN:  # the kernel ruler was shown with Theorem 1
        show(path)
for name, why in skipped.items():
    print(f"skipped {name}: {why}")
