"""The library's one error type and the small validators every module shares.

Every check quotes the offending value and says what would be accepted, so a user
reading a traceback knows what to change without opening the source.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import os
import stat
from collections.abc import Collection, Iterable
from typing import Any

import numpy as np

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

#: Size budget of one array the library builds from sizes it is given (``omega(d)``, a ``(W, W)`` Gram matrix,
#: an ``(n, n)`` bias): 2**24 elements, 128 MiB of float64.  The article's largest array (the Gram matrix of
#: 4,096 positions) is exactly at it; a size past it is refused before anything is allocated.
MAX_ELEMENTS = 2**24

#: Widest code the math layer takes: 65,536 coordinates, eight times the article's widest (8,192) and far past any
#: model's rotary width (512 at most); a census or a Chen counterexample lists one row per plane.
MAX_D = 2**16


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


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_finite_real(value) -> bool:
    """A real number (not a bool) that float64 holds finite: ``10**400`` is not, and raises no OverflowError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except (OverflowError, TypeError, ValueError):
        return False


def _show(value) -> str:
    """``repr`` of a value, shortened in the middle past 80 characters (a 5,000-digit integer, a long list)."""
    if _is_int(value) and abs(value) > 10**60:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else f"{text[:60]}...{text[-15:]}"


def check_positive_int(name: str, value: Any) -> int:
    """Return ``value`` as ``int`` if it is a positive integer, else raise.

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not a positive integer (a bool is not).

    Examples
    --------
    >>> check_positive_int("n", 32)
    32
    """
    if not _is_int(value) or value <= 0:
        raise PosKernelsError(f"{name} must be a positive integer; got {_show(value)}")
    return int(value)


def check_length(name: str, value: Any) -> int:
    """Return a length (a positive integer at most 2**53, so float64 holds it and every offset below it exactly).

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not an integer in ``[1, 2**53]``.

    Examples
    --------
    >>> check_length("the training length L", 4096)
    4096
    """
    return check_int(name, value, 1, 2**53, "float64 holds every offset below it exactly")


def check_positive_real(name: str, value: Any) -> float:
    """Return ``value`` as ``float`` if it is a finite positive number, else raise.

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not a finite number > 0.

    Examples
    --------
    >>> check_positive_real("s", 0.5)
    0.5
    """
    if not _is_finite_real(value) or value <= 0 or float(value) == 0:
        raise PosKernelsError(f"{name} must be a finite positive number; got {_show(value)}")
    return float(value)


def check_even_dimension(d: Any, name: str = "d") -> int:
    """Return ``d`` if it is a positive even integer (a whole number of planes), else raise.

    Parameters
    ----------
    d : object
        The width.
    name : str
        Its name in the message.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``d`` is not a positive even integer at most :data:`MAX_D`.

    Examples
    --------
    >>> check_even_dimension(16)
    16
    """
    if not _is_int(d) or d <= 0 or d % 2:
        raise PosKernelsError(f"{name} must be a positive even integer (planes are coordinate pairs); got {_show(d)}")
    if d > MAX_D:
        raise PosKernelsError(
            f"{name} must be at most {MAX_D} (eight times the article's widest code; every function of it builds "
            f"arrays of d/2 planes); got {_show(d)}"
        )
    return int(d)


def check_base(b: Any) -> float:
    """Return the frequency base ``b`` if it is a finite number above 1, else raise.

    Parameters
    ----------
    b : object
        The base.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``b`` is not a finite number > 1.

    Examples
    --------
    >>> check_base(10_000)
    10000.0
    """
    if not _is_finite_real(b) or b <= 1 or float(b) <= 1:
        raise PosKernelsError(f"the base b must be a finite number > 1; got {_show(b)}")
    return float(b)


def check_kappa(kappa: Any) -> float:
    """Return the extension ratio ``kappa = L'/L`` if it is a finite number >= 1, else raise.

    Parameters
    ----------
    kappa : object
        The ratio.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``kappa`` is not a finite number >= 1.

    Examples
    --------
    >>> check_kappa(4)
    4.0
    """
    if not _is_finite_real(kappa) or kappa < 1:
        raise PosKernelsError(f"the extension ratio kappa = L'/L must be a finite number >= 1; got {_show(kappa)}")
    return float(kappa)


def did_you_mean(name: Any, names: Iterable[Any]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``names`` to a misspelt ``name``, else ``""``.

    Parameters
    ----------
    name : object
        The name given (not a string: no suggestion).
    names : iterable
        The accepted names.

    Returns
    -------
    str

    Examples
    --------
    >>> did_you_mean("lama3", ["llama3", "yarn"])
    " (did you mean 'llama3'?)"
    >>> did_you_mean("zzz", ["llama3", "yarn"])
    ''
    """
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_name(kind: str, name: Any, registry: Collection[str]) -> str:
    """Return ``name`` if it is a key of ``registry``, else raise listing the accepted names.

    Parameters
    ----------
    kind : str
        What a name names (``"scheme"``), for the message.
    name : object
        The name given.
    registry : collection of str
        The accepted names.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If ``name`` is not in ``registry``.

    Examples
    --------
    >>> check_name("scheme", "rope", {"rope": 1, "alibi": 2})
    'rope'
    >>> check_name("scheme", "alibl", {"rope": 1, "alibi": 2})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'alibl' (did you mean 'alibi'?); accepted: alibi, rope
    """
    if not isinstance(name, str) or name not in registry:
        accepted = ", ".join(sorted(registry))
        raise PosKernelsError(f"unknown {kind} {_show(name)}{did_you_mean(name, registry)}; accepted: {accepted}")
    return name


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, why: str = "") -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[lo, hi]`` (a bound None is open), else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given (a bool is refused).
    lo, hi : int or None
        The bounds.
    why : str
        The reason for ``hi``, added to the message, so a refused size says its limit and the reason.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not an integer in the bounds.

    Examples
    --------
    >>> check_int("seed", 3, 0, 2**63 - 1)
    3
    >>> check_int("d", 20000, 2, 4096, "each d x d map is float64")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: d must be an integer in [2, 4096] (each d x d map is float64); got 20000
    """
    if not _is_int(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if lo is not None and hi is not None else f">= {lo}" if lo is not None else (
            f"<= {hi}" if hi is not None else "")  # fmt: skip
        reason = f" ({why})" if why else ""
        raise PosKernelsError(f"{name} must be an integer {span}{reason}; got {_show(value)}".replace("  ", " "))
    return int(value)


def check_real(
    name: str, value: Any, lo: float | None = None, hi: float | None = None, *, open_lo: bool = False
) -> float:
    """Return ``value`` as ``float`` if it is a finite real in ``[lo, hi]`` (``(lo, hi]`` with ``open_lo``), else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given (a bool is refused).
    lo, hi : float or None
        The bounds (None: open).
    open_lo : bool
        Whether ``lo`` itself is refused.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not a finite real number in the bounds.

    Examples
    --------
    >>> check_real("beta1", 0.9, 0, 1)
    0.9
    >>> check_real("beta1", False, 0, 1)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: beta1 must be a finite number in [0, 1]; got False
    """
    ok = _is_finite_real(value)
    if ok:
        x = float(value)
        ok = (lo is None or (x > lo if open_lo else x >= lo)) and (hi is None or x <= hi)
    if not ok:
        left = "(" if open_lo else "["
        span = (
            ""
            if lo is None and hi is None
            else f" in {left}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
        )
        raise PosKernelsError(f"{name} must be a finite number{span}; got {_show(value)}")
    return x


def check_open_unit(name: str, value: Any, why: str = "") -> float:
    """Return ``value`` as ``float`` if it is a finite number strictly between 0 and 1, else raise (``why`` explains).

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given.
    why : str
        What the value is, added to the message.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not in ``(0, 1)``.

    Examples
    --------
    >>> check_open_unit("eps", 1e-12)
    1e-12
    >>> check_open_unit("eps", 1, "the weight a cut may drop")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: eps must be a finite number in (0, 1) (the weight a cut may drop); got 1
    """
    if not _is_finite_real(value) or not 0 < float(value) < 1:
        reason = f" ({why})" if why else ""
        raise PosKernelsError(f"{name} must be a finite number in (0, 1){reason}; got {_show(value)}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (a NumPy bool too), else raise: ``"no"`` is not False.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given.

    Returns
    -------
    bool

    Raises
    ------
    PosKernelsError
        If ``value`` is not a bool.

    Examples
    --------
    >>> check_bool("truncate", np.True_)
    True
    >>> check_bool("truncate", "no")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: truncate must be True or False; got 'no'
    """
    if not isinstance(value, bool | np.bool_):
        raise PosKernelsError(f"{name} must be True or False; got {_show(value)}")
    return bool(value)


def check_array(
    name: str, value: Any, *, ndim: int | None = None, integer: bool = False, complex_ok: bool = False
) -> np.ndarray:
    """Return ``value`` as a finite float64 (int64 with ``integer``, complex128 with ``complex_ok``) array, else raise.

    NaN and infinities are refused: a NaN position turns every score NaN, and an argmax over NaN picks
    class 0, a silently wrong answer.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : array_like
        The numbers given (booleans, strings and ragged lists refused).
    ndim : int, optional
        The dimensions required.
    integer : bool
        Require whole numbers below ``2**53`` in size, returned as int64.
    complex_ok : bool
        Accept complex numbers (returned as complex128).

    Returns
    -------
    ndarray

    Raises
    ------
    PosKernelsError
        If ``value`` is not an array of finite numbers of that kind and dimension.

    Examples
    --------
    >>> check_array("positions", [0, 1.5]).tolist()
    [0.0, 1.5]
    >>> check_array("positions", [0, float("nan")])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: positions must be finite numbers; got [0, nan] (nan at index 1)
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as err:  # ragged lists, objects numpy cannot hold
        raise PosKernelsError(f"{name} must be an array of numbers; got {_show(value)} ({err})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == object):
        raise PosKernelsError(f"{name} must be an array of numbers; got dtype {arr.dtype}: {_show(value)}")
    if np.issubdtype(arr.dtype, np.complexfloating) and not complex_ok:
        raise PosKernelsError(f"{name} must be real numbers; got dtype {arr.dtype}")
    try:
        out = arr.astype(np.complex128 if complex_ok else np.float64)
    except (ValueError, TypeError, OverflowError):
        raise PosKernelsError(f"{name} must be an array of real numbers; got {_show(value)}") from None
    if ndim is not None and out.ndim != ndim:
        raise PosKernelsError(f"{name} must have {ndim} dimension(s); got shape {out.shape}")
    bad = ~np.isfinite(out)
    if bad.any():
        if out.ndim == 0:
            raise PosKernelsError(f"{name} must be a finite number; got {out.item()!r}")
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise PosKernelsError(
            f"{name} must be finite numbers; got {_show(value)} ({out[index].item()!r} at index {where})"
        )
    if integer:
        if not np.all(out == np.round(out)) or np.any(np.abs(out) > 2**53):
            raise PosKernelsError(f"{name} must be whole numbers below 2**53 in size; got {_show(value)}")
        return out.astype(np.int64)
    return out


def check_frequencies(name: str, value: Any) -> np.ndarray:
    """Return per-plane frequencies as a non-empty 1-d float64 array of finite positive numbers, else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : array_like
        The frequencies given.

    Returns
    -------
    ndarray, shape (planes,)

    Raises
    ------
    PosKernelsError
        If ``value`` is empty, not 1-d, or holds a number that is not finite and positive.

    Examples
    --------
    >>> check_frequencies("theta", [1.0, 0.1]).tolist()
    [1.0, 0.1]
    >>> check_frequencies("theta", [1.0, 0.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: theta must be ... finite positive frequencies; got array([1., 0.])
    """
    w = check_array(name, value)
    if w.ndim != 1 or w.size == 0 or np.any(w <= 0):
        raise PosKernelsError(f"{name} must be a non-empty 1-d array of finite positive frequencies; got {_show(w)}")
    return w


def check_finite_result(what: str, value: Any, accepted: str, **inputs: Any) -> Any:
    """Return ``value``, computed from finite ``inputs``, if it is finite; else raise, quoting the inputs.

    The edge of float64: a result whose true value lies past float64's largest (or the NaN of ``inf - inf`` such
    an overflow leads to) is refused rather than returned as ``inf`` or NaN.  Compute ``value`` under
    ``np.errstate(over="ignore", invalid="ignore")`` and pass it here.

    Parameters
    ----------
    what : str
        What was computed, for the message.
    value : object
        The result; integer and object (exact) values are returned as they are.
    accepted : str
        What inputs are accepted, for the message.
    **inputs : array_like
        The inputs, each quoted by its largest magnitude.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    PosKernelsError
        If a float or complex ``value`` is not finite.

    Examples
    --------
    >>> check_finite_result("q k", 6.0, "q k must stay below 1.8e308", q=2.0, k=3.0)
    6.0
    >>> check_finite_result("q k", float("inf"), "q k must stay below 1.8e308", q=1e300, k=[1e10])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: q k overflows float64; got largest |q| 1e+300, largest |k| 1e+10 (q k must ...)
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc" or np.all(np.isfinite(arr)):
        return value
    got = []
    for name, given in inputs.items():
        a = np.abs(np.asarray(given))
        got.append(f"largest |{name}| {float(a.max()):.6g}" if a.size else f"{name} empty")
    raise PosKernelsError(f"{what} overflows float64; got {', '.join(got)} ({accepted})")


def check_budget(what: str, elements: Any, limit: int = MAX_ELEMENTS) -> int:
    """Refuse, before it is allocated, an array of ``elements`` entries past ``limit`` (:data:`MAX_ELEMENTS`).

    Parameters
    ----------
    what : str
        The array, for the message.
    elements : int or float
        Its entries (an infinite or NaN count is past any limit).
    limit : int
        The most entries.

    Returns
    -------
    int
        ``elements``.

    Raises
    ------
    PosKernelsError
        If ``elements`` is past ``limit``.

    Examples
    --------
    >>> check_budget("omega(d)", 8)
    8
    >>> check_budget("omega(d)", 5 * 10**8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: omega(d) would hold 500000000 numbers; the limit is 16777216 ...
    """
    if not _is_finite_real(elements) or elements > limit:  # an infinite or NaN count is past any limit
        n = int(elements) if _is_finite_real(elements) and float(elements).is_integer() else elements
        raise PosKernelsError(
            f"{what} would hold {_show(n)} numbers; the limit is {limit} ({limit * 8 // 2**20} MiB of float64) so "
            "that no call allocates gigabytes or runs for hours; got sizes past it"
        )
    return int(elements)


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text of ``data`` (a leading BOM dropped), else raise naming ``name`` and where the bad byte is.

    Configs and grids are UTF-8 (JSON's and TOML's encoding); a UTF-16 or Latin-1 file is refused, not guessed.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    name : str
        The file, for the message.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If ``data`` is not UTF-8, or holds a NUL byte.

    Examples
    --------
    >>> decode_text("b = 1".encode(), "g.toml")
    'b = 1'
    >>> decode_text("é".encode("latin-1"), "g.toml")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: 'g.toml' is not UTF-8 text (byte 0xe9 at offset 0); save it as UTF-8
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise PosKernelsError(
            f"{name!r} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}){hint}; save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise PosKernelsError(f"{name!r} is not text: it holds a NUL byte at offset {text.index(chr(0))}")
    return text


def parse_json(text: str, where: str) -> Any:
    """The JSON value of ``text``; anything else is a :class:`PosKernelsError` that says where (``where``) and why.

    Refused as well as malformed JSON: an integer of more digits than Python converts (5,000-digit literals) and
    nesting deeper than Python's stack.

    Parameters
    ----------
    text : str
        The JSON text.
    where : str
        Its source, for the message.

    Returns
    -------
    object

    Raises
    ------
    PosKernelsError
        If ``text`` cannot be read as JSON.

    Examples
    --------
    >>> parse_json('{"a": [1, 2]}', "f.json")
    {'a': [1, 2]}
    >>> parse_json('{"a": ', "f.json")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: f.json: not valid JSON (Expecting value at line 1, column 7)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise PosKernelsError(f"{where}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    except (ValueError, RecursionError) as err:  # a 5,000-digit integer; nesting deeper than Python's stack
        raise PosKernelsError(f"{where}: cannot be read ({type(err).__name__}: {str(err)[:120]})") from None


def read_text(path: str | os.PathLike[str], what: str, limit: int = 64 * 2**20) -> str:
    """The UTF-8 text of the file at ``path`` (``what`` names it in errors), at most ``limit`` bytes.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str
        What it is (``"config"``), for the message.
    limit : int
        The most bytes read.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        On every failure: missing, a folder, unreadable, too large, not UTF-8.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "c.json").write_text("{}")
    >>> read_text(folder / "c.json", "config")
    '{}'
    >>> read_text(folder, "config")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the config '...' is a folder, not a file
    """
    return decode_text(read_bytes(path, what, limit), str(path))


def _read_up_to(fh, most: int, block: int = 2**20) -> bytes:
    """At most ``most`` bytes of ``fh``, read a block at a time: ``fh.read(most)`` would allocate ``most`` bytes
    up front (a gigabyte for a limit of one), whatever the file holds.  At most ``most / block + 1`` reads."""
    chunks, total = [], 0
    while total < most:
        chunk = fh.read(min(block, most - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_bytes(path: str | os.PathLike[str], what: str, limit: int = 64 * 2**20) -> bytes:
    """The bytes of the file at ``path`` (``what`` names it in errors), at most ``limit``; a FIFO never blocks.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str
        What it is (``"config"``), for the message.
    limit : int
        The most bytes read.

    Returns
    -------
    bytes

    Raises
    ------
    PosKernelsError
        On every failure: missing, a folder, unreadable, too large.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> _ = path.write_text("{}")
    >>> read_bytes(path, "config")
    b'{}'
    >>> read_bytes(path, "config", limit=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the config '.../c.json' is 2 bytes; the limit is 1 bytes
    """
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO no process writes to would wait forever; opened so, it reads as empty (a pipe
        # with a writer, such as the shell's <(...), is read to its end as usual).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise PosKernelsError(f"the {what} {shown!r} is a folder, not a file") from None
    except OSError as err:
        raise PosKernelsError(f"cannot read the {what} {shown!r}: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise PosKernelsError(f"the {what} {shown!r} is a folder, not a file")
        if st.st_size > limit:
            raise PosKernelsError(f"the {what} {shown!r} is {st.st_size} bytes; the limit is {limit} bytes")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = _read_up_to(fh, limit + 1)
    except OSError as err:
        raise PosKernelsError(f"cannot read the {what} {shown!r}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # a pipe or a device has no size to stat: counted as read
        raise PosKernelsError(f"the {what} {shown!r} is more than {limit} bytes; the limit is {limit} bytes")
    return data
