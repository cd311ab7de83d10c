"""Sweeps over the tournament's settings: a TOML grid, any concurrent.futures executor, a SQLite store.

``poskernels sweep GRID.toml --store PATH`` runs on a local process pool, or with
``--scheduler ADDRESS`` on a Dask distributed cluster through the same driver.  Modules:
:mod:`~poskernels.sweep.grid` (the grid file), :mod:`~poskernels.sweep.point` (one point's training
and reading), :mod:`~poskernels.sweep.store` (the resumable store), :mod:`~poskernels.sweep.runner`
(the driver), :mod:`~poskernels.sweep.backends` (where its jobs run), :mod:`~poskernels.sweep.export` and
:mod:`~poskernels.sweep.plot`.
"""

from .backends import Backend, dask_backend, local_backend
from .export import export, records
from .grid import Grid, load_grid, parse_grid
from .plot import curves, plot_store
from .point import point_key, run_job, train_config
from .runner import SweepSummary, run_sweep
from .settings import SETTINGS
from .store import Store

__all__ = [
    "SETTINGS",
    "Backend",
    "Grid",
    "Store",
    "SweepSummary",
    "curves",
    "dask_backend",
    "export",
    "load_grid",
    "local_backend",
    "parse_grid",
    "plot_store",
    "point_key",
    "records",
    "run_job",
    "run_sweep",
    "train_config",
]
