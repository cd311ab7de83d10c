"""Every RoPE family the installed transformers knows, read by the census and checked against its own module.

An oracle over the ecosystem rather than over a handful of configs.  For each rotary-embedding class
that transformers builds from a model config (``<Family>RotaryEmbedding(config)``; vision and audio
rotaries built from ``(dim, theta)`` are not read from a config and are left out), this module

1. builds the family's default config, and one config per rope type it accepts (``linear``, ``dynamic``,
   ``yarn``, ``llama3``, ``longrope`` on top of its defaults; a type the config class refuses is skipped);
2. writes it as ``config.json`` (``to_dict()``: every key written, as ``save_pretrained`` writes a full config;
   also the default without ``rope_theta``, and the whole multimodal file when the rotary reads its
   ``text_config``: :data:`VARIANTS`);
3. runs the census on the file (:func:`~poskernels.census.config.load_layer_configs` and
   :func:`~poskernels.census.compute.census`, per layer type when the config has several);
4. compares the census's inverse frequencies and attention factor with the buffers of the family's own
   rotary module (and, for the rope types that follow the sequence length, after a forward pass at three
   times ``max_position_embeddings``).

Each case ends ``agrees``, ``refused`` (the census raised :class:`~poskernels.errors.PosKernelsError`:
one line, nothing printed as if read) or ``wrong`` (read, and read differently): the test requires no
``wrong``.  Run ``python -m poskernels.census.hf_families`` for the summary (``--markdown`` for the README's form,
``--readme docs/guide/census.md`` to rewrite the generated block of that page with it).
Needs ``torch`` and ``transformers`` (the ``test`` extra); imports them only when called.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...atomic import write_json_atomic
from ..config.defaults import defaults_table
from .attribute_map import attribute_map_table
from .cases import EPS32, TYPE_OPTIONS, VARIANTS, Case, enumerate_families  # noqa: F401  (EPS32: as before)
from .summary import README_BLOCK, render, summarize, write_readme_block  # noqa: F401  (README_BLOCK: as before)

__all__ = [
    "VARIANTS",
    "Case",
    "TYPE_OPTIONS",
    "enumerate_families",
    "main",
    "render",
    "summarize",
    "write_readme_block",
]


def main(argv=None) -> int:
    """``python -m poskernels.census.hf_families [--markdown] [--json PATH] [--attribute-map PATH] [--defaults PATH]
    [--readme README]``.

    Reads every family (:func:`enumerate_families`, about a minute with transformers installed) and prints the
    summary; ``--attribute-map`` and ``--defaults`` write the shipped tables of transformers' attribute maps and
    class defaults instead, and stop.

    Parameters
    ----------
    argv : list of str, optional
        The command line's arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit status: 0, or 1 when a case is ``wrong``.  A bad argument exits 2 (argparse's
        :class:`SystemExit`).

    Examples
    --------
    >>> main(["--no-such-option"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    p = argparse.ArgumentParser(prog="python -m poskernels.census.hf_families", description=__doc__.splitlines()[0])
    p.add_argument("--markdown", action="store_true", help="print the summary as the README's Markdown")
    p.add_argument("--json", type=Path, help="also write every case as JSON")
    p.add_argument("--attribute-map", type=Path, metavar="PATH", help="write the attribute-map table and stop")
    p.add_argument("--defaults", type=Path, metavar="PATH", help="write the class-defaults table and stop")
    p.add_argument("--readme", type=Path, metavar="README", help="also rewrite the README's generated block")
    args = p.parse_args(argv)
    if args.attribute_map is not None:
        write_json_atomic(args.attribute_map, attribute_map_table())
        return 0
    if args.defaults is not None:
        write_json_atomic(args.defaults, defaults_table())
        return 0
    cases = enumerate_families(progress=True)
    summary = summarize(cases)
    if args.readme is not None:  # files first, then the printout
        write_readme_block(args.readme, render(summary, markdown=True))
    if args.json is not None:
        write_json_atomic(args.json, [c.__dict__ for c in cases])
    print(render(summary, markdown=args.markdown))
    return 1 if summary["wrong"] else 0
