"""The bound every property test of hostile input shares: only PosKernelsError escapes, in bounded work and memory.

:func:`bounded` runs one call under :mod:`tracemalloc` (NumPy reports its buffers to it) and an address-space
ceiling (:data:`resource.RLIMIT_AS`, a hard stop should a call try to allocate gigabytes), and returns the
exception that escaped, if any, with the peak of traced memory.  The work bound is a count of operations, never a
clock: every function call the call makes, Python's and C's (NumPy's among them), counted by a profile hook, and
past :data:`CALLS` the call is stopped with :class:`Overwork` (a loop that would not end stops after as many calls on
any machine under any load; hypothesis' ``deadline``, a clock, is off).  Between two calls a C function runs on
memory that the ceiling bounds.

Float64's edges count as escapes too: a ``RuntimeWarning`` (overflow, invalid value, division by zero) raised
inside the call is an error there, and a call that returns NaN (in a float, an array, or a tuple, list or
dataclass of them) from arguments that held none is reported as :class:`SilentNaN`.  An infinite or zero result
that is the right answer is computed under ``np.errstate``; a meaningless one is refused with PosKernelsError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import resource
import sys
import tracemalloc
import warnings

import numpy as np

from poskernels.errors import MAX_ELEMENTS, PosKernelsError

#: Peak traced memory one call may reach: eight arrays of the library's size budget (8 x 128 MiB).
PEAK_BYTES = 8 * 8 * MAX_ELEMENTS

#: Address space the test process may add while a call runs (beyond what it held before): a runaway
#: allocation fails with MemoryError, which the test reports, instead of swapping the machine.
HEADROOM_BYTES = 3 * 2**30


#: Function calls (Python and C) one call may make before it is stopped and reported: over 20 times the most any
#: hostile input of the suite makes (1.1 million, ``census`` of a 1,024-wide head).
CALLS = 25_000_000


class SilentNaN(Exception):
    """A call returned NaN from arguments without NaN: it should have refused them (PosKernelsError)."""


def _has_nan(value, depth: int = 0) -> bool:
    """Whether ``value`` is, or holds (in sequences, mappings and dataclass fields, 3 levels deep), a NaN."""
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return bool(np.isnan(value))
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if depth >= 3:
        return False
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


class Overwork(BaseException):
    """Raised in a call that made more than its budget of calls (a BaseException: no ``except Exception`` takes it)."""


@contextlib.contextmanager
def work_limit(calls: int = CALLS):
    """Raise :class:`Overwork` in this thread once the code inside has made more than ``calls`` function calls.

    Yields a one-item list holding the count so far.

    >>> with work_limit(1000) as made:
    ...     _ = [abs(i) for i in range(10)]
    >>> made[0] >= 10
    True
    """
    made = [0]

    def count(frame, event, arg):
        if event == "call" or event == "c_call":
            made[0] += 1
            if made[0] > calls:
                sys.setprofile(None)
                raise Overwork(f"still running after {calls:,} calls")

    previous = sys.getprofile()
    sys.setprofile(count)
    try:
        yield made
    finally:
        sys.setprofile(previous)


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@contextlib.contextmanager
def address_ceiling():
    """Cap the process's address space at its current size plus :data:`HEADROOM_BYTES` (Linux), restored after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    now = _vm_bytes()
    if now:
        cap = now + HEADROOM_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def bounded(fn, *args, **kwargs):
    """Call ``fn``; return ``(escaped, peak_bytes)`` where ``escaped`` is a non-library exception or None.

    A ``RuntimeWarning`` is raised as an error inside the call (so it escapes), and a NaN returned from arguments
    without NaN escapes as :class:`SilentNaN`.
    """
    tracemalloc.start()
    try:
        with address_ceiling(), work_limit(), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            result = fn(*args, **kwargs)
        if _has_nan(result) and not _has_nan(list(args) + list(kwargs.values())):
            raise SilentNaN(f"returned NaN from arguments without NaN: {args!r:.300} {kwargs!r:.300}")
    except PosKernelsError:
        escaped = None
    except (Exception, Overwork) as err:  # noqa: BLE001 - the point: anything else is a failure of the library
        escaped = err
    else:
        escaped = None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return escaped, peak


def assert_only_library_error(fn, *args, **kwargs) -> None:
    """Fail if ``fn(*args, **kwargs)`` raises anything but PosKernelsError or traces more than :data:`PEAK_BYTES`."""
    escaped, peak = bounded(fn, *args, **kwargs)
    name = getattr(fn, "__name__", repr(fn))
    if escaped is not None:
        raise AssertionError(f"{name} let {type(escaped).__name__} escape: {escaped}") from escaped
    assert peak <= PEAK_BYTES, f"{name} traced {peak / 2**20:.0f} MiB (bound {PEAK_BYTES / 2**20:.0f} MiB)"
