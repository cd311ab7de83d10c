"""``poskernels census CONFIG``: Theorem 5 plane by plane for a real model, and every extension map beside it.

For a model's RoPE (:mod:`poskernels.census.config`) at a target length ``N`` (``kappa = N / L``):

- per plane ``j``: the wavelength ``lambda_j = 2 pi / theta_j``, the turns ``(L - 1) / lambda_j`` over the
  training offsets and whether a whole turn completes (Theorem 5 (i)), the plane's term ``theta_j**2`` of the
  interpolation constant (Theorem 5 (iv)), and the factor ``inv_freq_j / theta_j`` of every map of
  :data:`~poskernels.extension.MAPS` at ``kappa`` and of the map the config itself asks for (``config``);
- the interpolation bound's constant ``sum_j theta_j**2`` (corrected) beside Chen et al.'s published
  ``d / (4 ln b)``, and the constant after each map, ``sum_j inv_freq_j**2``;
- where the reference YaRN ramp departs from the article's
  (:func:`~poskernels.extension.yarn_ramp_gap.compare_yarn_ramps`).

``--json PATH`` writes ``{"config", "target_length", "kappa", "planes", "maps", "interpolation_bound",
"yarn_ramps"}``; ``maps[NAME]`` is ``{"inv_freq", "attention_factor", "kappa", "L"}``; ``--json -`` writes
the JSON alone to standard output.  A config with one RoPE per layer type (Gemma 3's sliding and full
attention) gets one census per layer type: ``{"layer_types": {NAME: census}}`` in JSON, one section each in
text (``--layer-type NAME`` picks one).  ``--plot PNG`` draws the factors per plane (``-``: the PNG alone on
standard output).  Every output goes through :mod:`poskernels.atomic` and may not be the config.  The table wraps its
map columns to ``--width`` (default: the terminal's, within 80..120 columns).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..atomic import check_outputs
from ..census.compute import census_all
from ..census.config import bundled_configs, config_path
from ..census.plot import plot_census
from ..census.render import render_census, terminal_width
from ..errors import PosKernelsError, check_positive_int

__all__ = ["HELP", "add_arguments", "run"]

HELP = "plane-by-plane RoPE census of a model config (Theorem 5) with every extension map's factors"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``poskernels census``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    None

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> a = p.parse_args(["mistral-7b", "--width", "100"])
    >>> a.config, a.target_length, a.json, a.plot, a.layer_type, a.width
    ('mistral-7b', None, None, None, None, 100)
    """
    p.add_argument(
        "config", metavar="CONFIG", help=f"a config.json path or a bundled name ({', '.join(bundled_configs())})"
    )
    p.add_argument(
        "--target-length",
        type=int,
        default=None,
        metavar="N",
        help="length to extend to (default: the config's extended length, or 4 L for plain RoPE)",
    )
    p.add_argument(
        "--json", default=None, metavar="PATH", help="also write the census as JSON ('-': JSON alone on stdout)"
    )
    p.add_argument(
        "--plot", default=None, metavar="PNG", help="also draw the factors per plane ('-': the PNG alone on stdout)"
    )
    p.add_argument("--layer-type", default=None, metavar="NAME", help="one layer type of a per-layer-type config")
    p.add_argument(
        "--width", type=int, default=None, metavar="COLUMNS", help="wrap the table to this width (default: terminal)"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels census``: every check happens before anything is printed or written.

    Parameters
    ----------
    args : argparse.Namespace
        As :func:`add_arguments`'s options parse them.

    Returns
    -------
    int
        0.

    Raises
    ------
    PosKernelsError
        If the config is refused, ``--width`` is not a positive integer, an output cannot be written, or ``--plot``
        is asked of a per-layer-type census.

    Examples
    --------
    >>> import contextlib, io
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = run(p.parse_args(["mistral-7b"]))
    >>> status, out.getvalue().splitlines()[0]
    (0, 'RoPE census: mistral-7b (mistral)')
    >>> run(p.parse_args(["mistral-7b", "--width", "0"]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --width must be a positive integer; got 0
    """
    data = census_all(args.config, args.target_length, args.layer_type)
    if args.width is not None:
        check_positive_int("--width", args.width)
    text = render_census(data, args.width or terminal_width())
    path = config_path(args.config)  # a model folder: its config.json
    config = str(path) if path.is_file() else None  # a bundled name is not a file
    outs = check_outputs({"--json": args.json, "--plot": (args.plot, "figure")}, inputs=[config])
    if "--plot" in outs and "layer_types" in data:
        raise PosKernelsError("--plot draws one RoPE; choose one with --layer-type")
    if "--json" in outs:
        outs["--json"].write(json.dumps(data, indent=1) + "\n")
    if "--plot" in outs:
        plot_census(data, outs["--plot"])
    if not any(out.is_stdout for out in outs.values()):
        print(text)
    for label, out in outs.items():
        if not out.is_stdout and not getattr(args, "quiet", False):
            print(f"wrote {label.lstrip('-')}: {out.given}", file=sys.stderr)
    return 0
