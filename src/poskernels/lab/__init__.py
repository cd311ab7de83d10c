"""The laboratory: the payload both figures draw, the static page that draws it, and the static figures.

- :mod:`poskernels.lab.payload` — :func:`viz_payload`, one JSON-ready dict of everything Figure A (clocks and
  kernels) and Figure B (past the training window) draw, rounded to the precision the page shows.
- :mod:`poskernels.lab.server` — ``poskernels lab``: serves ``lab/static/`` on 127.0.0.1 (each request answered by
  :mod:`poskernels.lab.handler`).
- :mod:`poskernels.lab.figures` — the PNGs ``poskernels reproduce`` writes (matplotlib).
"""

from .payload import PAYLOAD_PATH, viz_payload, write_payload

__all__ = ["PAYLOAD_PATH", "viz_payload", "write_payload"]
