"""The command table: ``poskernels NAME`` -> ``(help, add_arguments, run)``, one module of :mod:`poskernels.cli` each.

:func:`poskernels.cli.entry.main` builds the parser from :data:`COMMANDS`, so adding a command is one module and one
entry here (and its outputs and inputs in :mod:`poskernels.cli.outputs`).
"""

from __future__ import annotations

from collections.abc import Callable

from . import advise, census, check_scheme, lab, plot, probe, reproduce, sweep, tournament

__all__ = ["COMMANDS"]

#: Every command: its name -> (help, add_arguments, run), each of its own module.
COMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "reproduce": (reproduce.HELP, reproduce.add_arguments, reproduce.run),
    "census": (census.HELP, census.add_arguments, census.run),
    "advise": (advise.HELP, advise.add_arguments, advise.run),
    "lab": (lab.HELP, lab.add_arguments, lab.run),
    "sweep": (sweep.HELP, sweep.add_arguments, sweep.run),
    "plot": (plot.HELP, plot.add_arguments, plot.run),
    "tournament": (tournament.HELP, tournament.add_arguments, tournament.run),
    "check-scheme": (check_scheme.HELP, check_scheme.add_arguments, check_scheme.run),
    "probe": (probe.HELP, probe.add_arguments, probe.run),
}
