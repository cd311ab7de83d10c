"""What each command writes and reads, checked before its work starts."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..atomic import check_inside, check_writable, confined
from ..atomic import check_outputs as _check_outputs

__all__ = ["FOLDER_FILES", "FOLDER_LINKS", "INPUTS", "OUTPUTS", "check_outputs"]


#: What each command writes: option (its ``dest``) -> ``"file"``, ``"folder"`` (created, with its parents, as
#: ``reproduce --out`` and the caches are) or ``"figure"`` (a file whose suffix names a matplotlib format).  Each given
#: path is checked before the command starts, by :func:`poskernels.atomic.check_outputs` (``-`` is standard output).
OUTPUTS: dict[str, dict[str, str]] = {
    "reproduce": {"out": "folder", "cache": "folder"},
    "census": {"json": "file", "plot": "figure"},
    "advise": {"json": "file"},
    "sweep": {"store": "file", "cache": "folder", "out": "file"},
    "plot": {"out": "figure"},
    "tournament": {"json": "file", "cache": "folder"},
    "check-scheme": {"json": "file"},
    "probe": {"json": "file", "cache": "folder", "figures": "folder"},
}

#: Files a command writes inside an output folder (``dest`` -> names): checked with the folder, before the work.
FOLDER_FILES: dict[str, dict[str, tuple[str, ...]]] = {"reproduce": {"out": ("numbers.json", "payload.json")}}

#: Subfolders a command writes files into inside an output folder: none of them, nor any file already in them, may
#: be a link out of the folder (checked before the work).
FOLDER_LINKS: dict[str, dict[str, tuple[str, ...]]] = {"reproduce": {"out": ("figures",)}}


def _check_folder_links(folder: Path, sub: str, option: str) -> None:
    """Refuse ``folder/sub`` or an entry of it whose real location is outside ``folder``."""
    where = folder / sub
    check_inside(where, f"{option} {sub}", folder)
    if where.is_dir():
        for entry in sorted(where.iterdir()):
            check_inside(entry, f"{option} {sub}/{entry.name}", folder)


#: What each command reads (its ``dest``s): no output may be one of these files (a sweep store with the files SQLite
#: keeps beside it).  A value that is not an existing file (a bundled config's name, ``export``) is no input.
INPUTS: dict[str, tuple[str, ...]] = {"census": ("config",), "sweep": ("grid", "export_store"), "plot": ("store",),
                                      "check-scheme": ("file",), "tournament": ("scheme_file",)}  # fmt: skip

def check_outputs(command: str, args: argparse.Namespace) -> None:
    """Refuse, before any work, an output path of ``command`` that cannot be written (see :data:`OUTPUTS`), one that
    is an input (:data:`INPUTS`), and two outputs that are one file.

    Parameters
    ----------
    command : str
        A key of :data:`~poskernels.cli.commands.COMMANDS`.
    args : argparse.Namespace
        Its parsed arguments.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If an output cannot be written, is one of the inputs, or is the path of another output (exit 2).

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "census.png"
    >>> check_outputs("census", argparse.Namespace(config=None, json=None, plot=out))  # writable: nothing to say
    >>> check_outputs("census", argparse.Namespace(config=None, json=out, plot=out))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --plot: '...census.png' is also the path of --json; give each output its own file
    """
    inputs = []
    for dest in INPUTS.get(command, ()):
        for value in (lambda v: v if isinstance(v, list) else [v])(getattr(args, dest, None)):  # one, or a list
            if value is not None and Path(value).is_file():
                if dest in ("store", "export_store"):  # a sweep's store (its package imported only then, 20 ms)
                    from ..sweep.store import store_files

                    inputs += store_files(value)
                else:
                    inputs.append(Path(value))
    files = {}
    for dest, kind in OUTPUTS.get(command, {}).items():
        path = getattr(args, dest, None)
        option = "--" + dest.replace("_", "-")
        if path is None:
            continue
        if kind == "folder":
            check_writable(path, "folder", option)
            with confined(path):
                for name in FOLDER_FILES.get(command, {}).get(dest, ()):
                    _check_outputs({f"{option} {name}": Path(path) / name}, parents=True)
                for sub in FOLDER_LINKS.get(command, {}).get(dest, ()):  # a subfolder's files, before any work
                    _check_folder_links(Path(path), sub, option)
        else:
            files[option] = (path, kind)
    _check_outputs(files, inputs=inputs)


