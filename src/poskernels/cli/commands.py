"""The command table: ``poskernels NAME`` -> ``(help, add_arguments, run)``, one module of :mod:`poskernels.cli` each.

:func:`poskernels.cli.entry.main` builds the parser from :data:`COMMANDS`, so adding a command is one module and one
entry of :data:`COMMAND_MODULES` (and its outputs and inputs in :mod:`poskernels.cli.outputs`).  A command's module
is imported when its entry is first read: ``poskernels reproduce`` does not import the census, the sweeps or the
laboratory's server (a third of the modules the command line would import, and of its start-up).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator

__all__ = ["COMMANDS", "COMMAND_MODULES"]

#: Every command: its name -> the module of :mod:`poskernels.cli` that holds its ``HELP``, ``add_arguments`` and
#: ``run``.
COMMAND_MODULES: dict[str, str] = {
    "reproduce": "reproduce",
    "census": "census",
    "advise": "advise",
    "lab": "lab",
    "sweep": "sweep",
    "plot": "plot",
    "tournament": "tournament",
    "check-scheme": "check_scheme",
    "probe": "probe",
}


class _Commands(dict):
    """A dict of every command of :data:`COMMAND_MODULES`, ``name -> (help, add_arguments, run)``, each command's
    module imported when its entry is first read (an entry set by hand, a test's, is kept as it is)."""

    def __missing__(self, name: str) -> tuple[str, Callable, Callable]:
        if name not in COMMAND_MODULES:
            raise KeyError(name)
        module = importlib.import_module(f"{__package__}.{COMMAND_MODULES[name]}")
        entry = self[name] = (module.HELP, module.add_arguments, module.run)
        return entry

    def __iter__(self) -> Iterator[str]:  # every command, in the table's order, whether imported or not
        return iter(COMMAND_MODULES)

    def __len__(self) -> int:
        return len(COMMAND_MODULES)

    def __contains__(self, name) -> bool:
        return name in COMMAND_MODULES

    def get(self, name, default=None):  # type: ignore[override]
        return self[name] if name in COMMAND_MODULES else default

    def keys(self):  # type: ignore[override]
        return list(COMMAND_MODULES)

    def values(self):  # type: ignore[override]
        return [self[name] for name in COMMAND_MODULES]

    def items(self):  # type: ignore[override]
        return [(name, self[name]) for name in COMMAND_MODULES]


#: Every command: its name -> (help, add_arguments, run), each of its own module (imported when first read).
COMMANDS: dict[str, tuple[str, Callable, Callable]] = _Commands()
