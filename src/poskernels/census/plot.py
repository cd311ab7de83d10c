"""The census drawn: every map's factor per plane (``poskernels census --plot``)."""

from __future__ import annotations

from pathlib import Path

from ..atomic import Output, check_output, save_figure
from ..errors import PosKernelsError

__all__ = ["plot_census"]


def plot_census(data: dict, path) -> Path | str:
    """Draw every map's factor per plane (log scale), with the full-turn boundary marked; returns the path.

    ``path`` is a path (its suffix names the format; PNG without one), ``"-"`` (a PNG on standard output) or a
    checked :class:`~poskernels.atomic.Output`.

    Parameters
    ----------
    data : dict
        One RoPE's census.
    path : str, path or Output
        Where the figure goes.

    Returns
    -------
    Path or str
        The path written (``"-"`` for standard output).

    Raises
    ------
    PosKernelsError
        If ``path`` cannot be written or names no figure format, or ``data`` holds one census per layer type.

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.census.compute import census
    >>> from poskernels.census.config import load_config
    >>> data = census(load_config("mistral-7b"), scan_base=False)
    >>> png = Path(tempfile.mkdtemp()) / "census.png"
    >>> plot_census(data, png) == png, png.is_file()
    (True, True)
    >>> plot_census(data, png.with_suffix(".xyz"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --plot: unknown figure format 'xyz' of '...census.xyz'; accepted: avif, ...
    """
    out = path if isinstance(path, Output) else check_output(path, "--plot", figure=True)
    if "layer_types" in data:
        raise PosKernelsError("--plot draws one RoPE; choose one with --layer-type")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    planes = [p["plane"] for p in data["planes"]]
    fig, ax = plt.subplots(figsize=(9, 5), dpi=120)
    dashes = ["-", "--", "-.", ":"]  # maps that coincide (PI and LongRoPE without lists, say) stay visible
    for k, name in enumerate(n for n in data["maps"] if n != "none"):
        style = {"lw": 3.0, "color": "black", "alpha": 0.45} if name == "config" else {"lw": 1.5, "ls": dashes[k % 4]}
        label = f"config ({data['maps']['config']['map']})" if name == "config" else name
        ax.plot(planes, [p["factors"][name] for p in data["planes"]], label=label, **style)
    turned = [p["plane"] for p in data["planes"] if p["full_turn"]]
    if turned:
        ax.axvline(max(turned) + 0.5, color="grey", ls="--", lw=1, label="last plane to turn in L")
    ax.set_yscale("log")
    ax.set_xlabel("plane j")
    ax.set_ylabel("factor inv_freq / theta")
    cfg = data["config"]
    ax.set_title(f"{cfg['name']}: factors per plane at N = {data['target_length']} (kappa = {data['kappa']:.3g})")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    try:
        save_figure(fig, out)  # the format from the suffix, as fig.savefig(path) chose it
    finally:
        plt.close(fig)
    return out.given if out.is_stdout else Path(out.given)

