"""The command line: ``poskernels COMMAND``, every command's face in a module of its own.

Each command is one module (``reproduce``, ``census``, ``advise``, ``tournament``, ``check-scheme``, ``probe``,
``lab``, ``sweep`` and ``plot``) holding its help, ``add_arguments`` and ``run``; :mod:`~poskernels.cli.commands`
holds the table of them (:data:`COMMANDS`), :mod:`~poskernels.cli.outputs` what each writes and reads (checked
before its work starts), :mod:`~poskernels.cli.entry` the parser and the exit codes.  No module of the library
imports this package.

The error contract, one rule for every command: what the user gave (an argument, an environment variable, a file
read, a store row) that cannot be used is bad input (a :class:`~poskernels.errors.PosKernelsError`): one line on
stderr, exit 2.  What the machine or the network does while running (a full disk: "disk full", an I/O error, a
scheduler that does not answer, a sweep point that fails) and a bug are failures: one line, exit 1.  Ctrl-C exits
130; a reader that leaves early (``| head``) ends the command quietly with 0.  A traceback is printed only with
``--debug`` or ``POSKERNELS_DEBUG=1``; ``--quiet`` drops the progress and "wrote" lines, never an error.
"""

from .commands import COMMANDS
from .entry import DEBUG_ENV, main

__all__ = ["COMMANDS", "DEBUG_ENV", "main"]
