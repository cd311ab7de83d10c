"""``python -m poskernels.cli``: the ``poskernels`` command, as ``python -m poskernels``."""

import sys

from .entry import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
