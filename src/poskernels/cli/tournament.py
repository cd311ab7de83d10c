"""``poskernels tournament``: the article's tournament heads of any subset of schemes, your own among them.

``poskernels tournament [--task NAME] [--scheme-file my_pe.py ...] [--schemes NAME,...] [--seeds K]
[--lengths 32,64,...] [--json PATH|-]`` trains the article's tournament heads (length 32, 1,500 Adam steps) on a
registered task (:data:`poskernels.tasks.registry.TASKS`: the cue task by default, ``recall``) for each scheme and
``K`` seeds, and prints the accuracy on the task's held-out sets at each test length (the task's own lengths by
default), the mean over seeds with its standard error (the JSON also carries ``per_seed``, each seed's value, and
``exact_reader``, the task's reader in closed form on the same sequences).  A scheme file's schemes pass the
gate first (:func:`poskernels.model.scheme_check.checked_scheme_file`), and ``--json`` is checked against the
files before any training: a file that fails a check trains nothing, so no cache entry of a broken scheme is ever
written, and a hook that raises while training is one error naming the scheme and its file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from ..atomic import write_output
from ..encodings import SCHEMES
from ..errors import PosKernelsError, check_int, check_name
from ..experiments.held_out import head_accuracy, heldout
from ..experiments.tournament import TEST_LENGTHS
from ..model.config import preset
from ..model.scheme_check import checked_scheme_file
from ..model.scheme_file import blamed
from ..model.train import train_stack
from ..seeds import DEFAULT_COUNT, first_seed, mean_stderr
from ..tasks.registry import tournament_tasks

__all__ = ["HELP", "add_arguments", "run"]

HELP = "train the tournament's heads of any schemes (yours from --scheme-file) and print their accuracy"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``poskernels tournament``, added to ``p``.

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
    >>> a = p.parse_args(["--schemes", "alibi,rope", "--seeds", "2"])
    >>> a.schemes, a.seeds, a.task, a.lengths, a.scheme_file  # no --lengths: the task's own
    ('alibi,rope', 2, 'cue', None, [])
    """
    p.add_argument("--task", default="cue", metavar="NAME",
                   help=f"the task trained and read ({', '.join(tournament_tasks())}; default cue)")  # fmt: skip
    p.add_argument("--scheme-file", action="append", default=[], metavar="FILE", help="a Python file of schemes")
    p.add_argument("--schemes", default=None, metavar="NAME,...", help="the schemes (default: the file's, else all)")
    p.add_argument("--seeds", type=int, default=DEFAULT_COUNT, metavar="K", help=f"seeds per scheme ({DEFAULT_COUNT})")
    p.add_argument("--first-seed", type=int, default=None, metavar="S", help="first seed ($POSKERNELS_FIRST_SEED, 0)")
    p.add_argument("--lengths", default=None, metavar="N,...",
                   help=f"test lengths (default the task's; the cue task's {','.join(map(str, TEST_LENGTHS))})",
                   )  # fmt: skip
    p.add_argument("--cache", type=Path, default=Path(".cache/poskernels"), help="cache of trained heads")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the table as JSON ('-': JSON alone)")


@contextlib.contextmanager
def _progress(total: int, quiet: bool):
    """Progress on stderr while the heads train and are read: a tqdm bar on a terminal, else one line a scheme.

    Yields ``step(line)``: one unit of work done; ``line`` (when given) is written on stderr where no bar is drawn.
    ``--quiet`` writes nothing.
    """
    from tqdm import tqdm

    bar = tqdm(total=total, desc="tournament", unit="step", file=sys.stderr, disable=True if quiet else None,
               leave=False)  # fmt: skip
    lines = not quiet and bar.disable  # stderr is not a terminal: a line at each scheme, for logs

    def step(line: str | None) -> None:
        if line is None:
            bar.update(1)
        elif lines:
            print(f"[tournament] {line}", file=sys.stderr, flush=True)
        elif "trained" in line:
            bar.update(1)

    try:
        yield step
    finally:
        bar.close()


def _list(text: str, what: str) -> list[str]:
    items = [s.strip() for s in str(text).split(",") if s.strip()]
    if not items:
        raise PosKernelsError(f"{what} must be a comma-separated list; got {text!r}")
    return items


def run(args: argparse.Namespace) -> int:
    """Train and read the heads; print the table (and write it as JSON with ``--json``).

    Each scheme trains its seeds' heads (1,500 steps each, cached) before anything is printed; every option is
    checked first.

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
        If a scheme file fails its checks, a scheme is unknown, or ``--seeds``, ``--first-seed`` or ``--lengths``
        is out of range (before any training); a scheme's hook that raises while training, naming its file.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["--schemes", "alibi", "--seeds", "0"]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --seeds must be an integer in [1, 1000] (heads per scheme); got 0
    """
    tasks = tournament_tasks()
    spec = tasks[check_name("task", args.task, tasks)]  # a bad name: exit 2, the accepted listed
    from_files = [name for path in args.scheme_file for name in checked_scheme_file(path)]
    names = _list(args.schemes, "--schemes") if args.schemes else (from_files or list(SCHEMES))
    for name in names:
        check_name("scheme", name, SCHEMES)
    k = check_int("--seeds", args.seeds, 1, 1000, "heads per scheme")
    first = first_seed(args.first_seed)
    seeds = list(range(first, first + k))
    lengths = []
    given = ",".join(map(str, spec.lengths)) if args.lengths is None else args.lengths
    for item in _list(given, "--lengths"):
        if not item.isdigit():
            raise PosKernelsError(f"--lengths must be integers >= 2; got {item!r}")
        lengths.append(check_int("a test length", int(item), 2, 1 << 16, "2,000 test sequences a length"))
    table = {"task": spec.name, "seeds": seeds, "lengths": lengths, "accuracy": {}, "stderr": {}, "per_seed": {}}
    with _progress(len(names) * (1 + len(lengths)), getattr(args, "quiet", False)) as step:
        for i, name in enumerate(names, 1):
            with blamed(name, "training"):
                heads = train_stack(preset("tournament", name).with_task(spec.name), seeds, args.cache)
            step(f"{name} ({i}/{len(names)}): {len(heads)} heads trained or read from the cache")
            for n in lengths:
                with blamed(name, f"reading its heads at length {n}"):
                    values = [head_accuracy(h, n) for h in heads]
                mean, se = mean_stderr(values)
                table["accuracy"].setdefault(name, {})[str(n)] = mean
                table["stderr"].setdefault(name, {})[str(n)] = se
                table["per_seed"].setdefault(name, {})[str(n)] = values
                step(None)
            step(f"{name} ({i}/{len(names)}): read at {len(lengths)} lengths")
    if spec.exact_reader is not None:  # the task's reader in closed form, on the same held-out sets
        read = spec.exact_reader
        table["exact_reader"] = {str(n): float(read(*heldout(n, task=spec.name)).mean()) for n in lengths}
    if args.json is not None:  # through the one writer ("-": standard output, the JSON alone)
        write_output(args.json, json.dumps(table, indent=1) + "\n", "--json", inputs=args.scheme_file)
        if args.json == "-":
            return 0
    width = max([len("bag reader (exact)")] + [len(SCHEMES[n].title) for n in names])
    n_train = preset("tournament").head.n_train
    print(f"accuracy at each length, mean ± SE over seeds {seeds[0]}..{seeds[-1]} ({spec.title}, "
          f"trained at {n_train})")  # fmt: skip
    print(f"{'scheme':<{width}}  " + "  ".join(f"{n:>14}" for n in lengths))
    for name in names:
        cells = []
        for n in lengths:
            mean, se = table["accuracy"][name][str(n)], table["stderr"][name][str(n)]
            cells.append("—" if mean is None else f"{mean:.3f}" + ("" if se is None else f" ± {se:.3f}"))
        print(f"{SCHEMES[name].title:<{width}}  " + "  ".join(f"{c:>14}" for c in cells))
    if "exact_reader" in table:
        exact = table["exact_reader"]
        print(f"{'bag reader (exact)':<{width}}  " + "  ".join(f"{exact[str(n)]:>14.3f}" for n in lengths))
    return 0
