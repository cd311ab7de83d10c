"""The probe's figures, drawn from its result (the JSON): a layer x plane map of the queries' chunk norms with the
census's never-turning planes marked, and the kernels over offsets of chosen heads with their plane split."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...atomic import save_figure

__all__ = ["draw", "FIGURES"]


def energy_map(result: dict, ax) -> None:
    """Layer x plane: the mean over heads of each plane's query chunk norm, each layer scaled to its largest.

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).
    ax : matplotlib.axes.Axes
        Where it is drawn (a colour bar is added to its figure).

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from poskernels.census.probe.ship import shipped
    >>> fig, ax = plt.subplots()
    >>> energy_map(shipped()["smollm2-135m"], ax)
    >>> ax.get_title(), ax.get_images()[0].get_array().shape  # 30 layers x 32 planes
    ('smollm2-135m: query energy by plane', (30, 32))
    >>> plt.close(fig)
    """
    e = np.array([np.mean([h["q_energy"] for h in layer["heads"]], 0) for layer in result["layers"]])
    e /= e.max(1, keepdims=True)
    im = ax.imshow(e, aspect="auto", origin="lower", cmap="viridis")
    ax.set(xlabel="plane p (fastest first)", ylabel="layer", title=f"{result['model']}: query energy by plane")
    for c in result.get("census", {}).values():
        if c["never_full_turn"]:
            ax.axvline(c["never_full_turn"][0] - 0.5, color="w", ls="--", lw=1)
            ax.text(c["never_full_turn"][0], len(e) - 1, " never a full turn", color="w", va="top", fontsize=8)
    ax.figure.colorbar(im, ax=ax, label="share of the layer's largest")


def kernels(result: dict, ax) -> None:
    """The kernel over offsets (mean logit) of the head with the most weight on the first token and of the first
    head of the first, middle and last layers.

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).
    ax : matplotlib.axes.Axes
        Where it is drawn.

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from poskernels.census.probe.ship import shipped
    >>> fig, ax = plt.subplots()
    >>> kernels(shipped()["smollm2-135m"], ax)
    >>> [line.get_label() for line in ax.get_lines()]
    ['layer 0, head 0', 'layer 15, head 0', 'layer 29, head 0', 'layer 18, head 8 (sink)']
    >>> plt.close(fig)
    """
    layers = result["layers"]
    heads = [(layers[i]["layer"], 0) for i in (0, len(layers) // 2, len(layers) - 1)]
    sink = max(((li, hi) for li, lay in enumerate(layers) for hi, h in enumerate(lay["heads"])),
               key=lambda p: layers[p[0]]["heads"][p[1]]["first_token"])  # fmt: skip
    off = np.asarray(result["offsets"])
    for li, hi in dict.fromkeys(heads + [sink]):
        k = np.asarray(layers[li]["heads"][hi]["kernel"], dtype=float)
        label = f"layer {li}, head {hi}" + (" (sink)" if (li, hi) == sink else "")
        ax.plot(np.maximum(off, 0.5), k, marker=".", label=label)
    ax.set(xscale="log", xlabel="offset r (r = 0 drawn at 0.5)", ylabel="mean logit", title="kernel over offsets")
    ax.legend(fontsize=8)


FIGURES = {"energy": energy_map, "kernels": kernels}


def draw(result: dict, folder: Path) -> list[Path]:
    """Every figure of :data:`FIGURES` as ``folder/MODEL-NAME.png``; the paths written.

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).
    folder : path
        Where the figures go (made if missing); written through :mod:`poskernels.atomic`.

    Returns
    -------
    list of Path
        The figures written, in the order of :data:`FIGURES`.

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.census.probe.ship import shipped
    >>> [p.name for p in draw(shipped()["smollm2-135m"], tempfile.mkdtemp())]
    ['smollm2-135m-energy.png', 'smollm2-135m-kernels.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(folder).mkdir(parents=True, exist_ok=True)
    out = []
    for name, fn in FIGURES.items():
        fig, ax = plt.subplots(figsize=(7, 4.2))
        fn(result, ax)
        fig.tight_layout()
        path = Path(folder) / f"{result['name']}-{name}.png"
        save_figure(fig, path, dpi=110)
        plt.close(fig)
        out.append(path)
    return out
