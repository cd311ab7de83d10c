"""``poskernels reproduce``: every table of the article printed, and ``OUT/numbers.json``, the payload and the figures.

:func:`run` computes the sections of :data:`poskernels.page.SECTIONS` (``page.assemble``) and writes what
:data:`_REPRODUCE_WRITERS` write after ``numbers.json`` (the lab's payload and figures), every file inside ``--out``.
"""

from __future__ import annotations

import argparse
import copy
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..atomic import confined, write_json_atomic
from ..errors import PosKernelsError, did_you_mean
from ..lab import figures as _lab_figures
from ..lab import payload as _lab_payload

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print every table of the article and write OUT/numbers.json (and the lab payload and figures)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``poskernels reproduce``.

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
    >>> a = p.parse_args(["--only", "thm1", "--no-train"])
    >>> a.out, a.cache, a.only, a.no_train, a.first_seed
    (PosixPath('results'), None, ['thm1'], True, None)
    """
    p.add_argument("--out", type=Path, default=Path("results"), help="output folder (default: results/)")
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="cache folder for trained weights and results (default: .cache/poskernels in the current directory)",
    )
    p.add_argument("--only", nargs="+", metavar="KEY", help="compute only these top-level keys of numbers.json")
    p.add_argument("--no-train", action="store_true", help="skip the sections that train heads")
    p.add_argument(
        "--first-seed",
        type=int,
        default=None,
        metavar="S",
        help="first of the ten seeds of every trained cell (default: $POSKERNELS_FIRST_SEED, else 0)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels reproduce``: compute the chosen sections, print their tables, write ``--out``'s files.

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
        If ``--only`` names an unknown section, or chooses only trained sections with ``--no-train``.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["--only", "thm9"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --only: unknown section 'thm9'...
    """
    from .. import page

    start = time.perf_counter()
    from ..seeds import first_seed

    quiet = getattr(args, "quiet", False)
    bar = _bar(quiet)
    log = {"log": (lambda msg: None) if quiet else (lambda msg: bar.write(msg, file=sys.stderr))}  # around the bar
    ctx = page.Context(first_seed=first_seed(args.first_seed), **log)
    if args.cache is not None:
        ctx.cache_dir = args.cache
    known = list(dict.fromkeys(s.key for s in page.SECTIONS))  # thm2 has two sections, one key
    for key in args.only or ():
        if key not in known:
            raise PosKernelsError(
                f"--only: unknown section {key!r}{did_you_mean(key, known)}; accepted: {', '.join(sorted(known))}"
            )
    chosen = page.choose(args.only, include_trained=not args.no_train)
    if not chosen:
        trained = ", ".join(s.key for s in page.SECTIONS if s.trained and s.key in args.only)
        raise PosKernelsError(f"--only {' '.join(args.only)} --no-train computes nothing: {trained} train heads; "
                              "drop --no-train, or add a section that does not train")  # fmt: skip
    # A progress bar on stderr when it is a terminal (tqdm); the tables go to stdout, written around the bar.
    out = Path(args.out)
    with confined(out):  # every file under OUT (figures drawn early included) written inside it, never out of it
        return _reproduce_into(out, ctx, chosen, args, bar, start)


class _Lines:
    """The progress bar where none is drawn (``--quiet``, or stderr not a terminal): the tables and the log lines
    written as tqdm writes them beside a bar it does not draw, without importing tqdm (30 ms of every start)."""

    def __init__(self, **options):
        pass

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        pass

    @staticmethod
    def write(s: str, file=None, end: str = "\n") -> None:
        fp = sys.stdout if file is None else file
        fp.write(s)
        fp.write(end)


def _bar(quiet: bool):
    """The class of the progress bar: tqdm's on a terminal (stderr), else :class:`_Lines`."""
    if quiet or not sys.stderr.isatty():
        return _Lines
    from tqdm import tqdm

    return tqdm


def _reproduce_into(out: Path, ctx, chosen, args: argparse.Namespace, bar, start: float) -> int:
    """:func:`run` once its arguments are checked: compute, print, write ``out``'s files."""
    from .. import page

    quiet = getattr(args, "quiet", False)
    early: list[threading.Thread] = []
    with bar(total=len(chosen), desc="reproduce", unit="section", leave=False) as progress:
        t0 = time.perf_counter()

        def show(section, data):  # after each section: its table, its time, one step of the bar
            nonlocal t0
            rule = "=" * len(section.title)
            progress.write(f"\n{section.title}\n{rule}\n{section.render(data)}", file=sys.stdout)
            ctx.log(f"[{section.key}] {time.perf_counter() - t0:.2f} s")
            progress.update()
            t0 = time.perf_counter()

        def idle(section):  # the last section on the pool still computes: draw the others' figures meanwhile
            if section is _last_background(chosen) and not early and _lab_figures.write_figures in _REPRODUCE_WRITERS:
                early.append(threading.Thread(target=_early_figures, args=(copy.deepcopy(ctx.numbers), ctx, out)))
                early[-1].start()

        page.assemble(ctx, args.only, include_trained=not args.no_train, each=show, idle=idle)
    for thread in early:
        thread.join()
    write_json_atomic(out / "numbers.json", ctx.numbers)
    payload = _lab_payload.viz_payload(ctx) if _REPRODUCE_WRITERS else None  # built once, for every writer
    for hook in _REPRODUCE_WRITERS:
        hook(ctx, out, payload)
    if not quiet:
        print(f"\nwrote {out / 'numbers.json'} in {time.perf_counter() - start:.1f} s")
    return 0


def _last_background(chosen) -> object | None:
    """The last of ``chosen`` that computes in the background (:data:`poskernels.page.AFTER`), or None.

    The sections after it (the fidelity section) compute in their turn and read no head, so while it computes every
    figure but its own can be drawn: waiting on it is when :func:`_early_figures` runs.

    Examples
    --------
    >>> from poskernels import page
    >>> _last_background(page.SECTIONS).key
    'long'
    >>> _last_background([page.SECTIONS[0]]) is None
    True
    """
    from .. import page

    background = [s for s in chosen if s.key in page.AFTER]
    return background[-1] if background else None


def _early_figures(numbers: dict, ctx, out: Path) -> None:
    """Draw the figures of every section but the last while it computes; the final writer keeps those whose inputs
    did not change (their digests match) and draws the rest, so this only moves work earlier."""
    try:
        _lab_figures.draw_figures(_lab_payload.viz_payload(numbers, ctx.cache_dir), out / "figures")
    except Exception:  # nothing is lost: the final writer draws every figure this one did not
        pass


#: Extra writers run after ``numbers.json`` (payload, figures): ``hook(ctx, out_dir, payload)``, each given the one
#: payload the run built (:func:`poskernels.lab.viz_payload`), which a writer only reads.
_REPRODUCE_WRITERS: list[Callable] = [_lab_payload.write_payload, _lab_figures.write_figures]

