"""The library's one error type and the small validators every module shares.

Every check quotes the offending value and says what would be accepted, so a user
reading a traceback knows what to change without opening the source.  The error types are defined here; the
validators live in a module per kind of value, and every name is importable from ``poskernels.errors``:

- :mod:`~poskernels.errors.scalars`: one number (an integer or a real in a range, a length, a bool);
- :mod:`~poskernels.errors.quantities`: the article's ``d``, ``b`` and ``kappa`` (and :data:`MAX_D`);
- :mod:`~poskernels.errors.names`: a name looked up in a registry;
- :mod:`~poskernels.errors.arrays`: arrays, frequencies, a float64 result, the size budget (:data:`MAX_ELEMENTS`);
- :mod:`~poskernels.errors.text`: a file's bytes and text, JSON;
- :mod:`~poskernels.errors.show`: what counts as a number, and how a refused value is quoted.
"""

from __future__ import annotations

__all__ = [
    "MAX_D",
    "MAX_ELEMENTS",
    "MissingDependencyError",
    "PosKernelsError",
    "check_array",
    "check_base",
    "check_bool",
    "check_budget",
    "check_even_dimension",
    "check_finite_result",
    "check_frequencies",
    "check_int",
    "check_kappa",
    "check_length",
    "check_name",
    "check_open_unit",
    "check_positive_int",
    "check_positive_real",
    "did_you_mean",
    "check_real",
    "decode_text",
    "parse_json",
    "read_bytes",
    "read_text",
]


class PosKernelsError(ValueError):
    """Raised for any input the library cannot accept.

    Subclasses :class:`ValueError`, so ``except ValueError`` keeps working.

    Examples
    --------
    >>> from poskernels.errors import PosKernelsError, check_even_dimension
    >>> try:
    ...     check_even_dimension(15)
    ... except PosKernelsError as err:
    ...     print(err)
    d must be a positive even integer (planes are coordinate pairs); got 15
    """


class MissingDependencyError(ImportError):
    """An optional dependency is not installed: the message names the module that needs it and the extra to install.

    An :class:`ImportError`, so ``except ImportError`` still catches it.

    >>> print(MissingDependencyError.of("torch", "torch", "poskernels.torch_rope"))
    poskernels.torch_rope needs torch, which is not installed: pip install 'poskernels[torch]'
    """

    @classmethod
    def of(cls, module: str, extra: str, needed_by: str) -> MissingDependencyError:
        """The error for ``needed_by`` needing ``module``, which the extra ``extra`` installs.

        Parameters
        ----------
        module : str
            The missing module (``"torch"``).
        extra : str
            The poskernels extra that installs it (``pyproject.toml``'s ``[project.optional-dependencies]``).
        needed_by : str
            What needs it, as a user would name it.

        Returns
        -------
        MissingDependencyError
        """
        message = f"{needed_by} needs {module}, which is not installed: pip install 'poskernels[{extra}]'"
        return cls(message, name=module)


# The validators raise the types above, so they are imported once those are defined.
from .arrays import MAX_ELEMENTS, check_array, check_budget, check_finite_result, check_frequencies  # noqa: E402
from .names import check_name, did_you_mean  # noqa: E402
from .quantities import MAX_D, check_base, check_even_dimension, check_kappa  # noqa: E402
from .scalars import (  # noqa: E402
    check_bool,
    check_int,
    check_length,
    check_open_unit,
    check_positive_int,
    check_positive_real,
    check_real,
)
from .text import decode_text, parse_json, read_bytes, read_text  # noqa: E402
