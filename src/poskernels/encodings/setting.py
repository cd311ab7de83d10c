"""A scheme's settings: one :class:`Setting` each (a default and the range it accepts), checked when it is defined.

A setting is a field of the head's configuration that one scheme reads (ALiBi's slope, T5's bucket count) and a
sweep's grid may vary.  :class:`~poskernels.encodings.scheme.Scheme` refuses, when a class is defined, settings that
are not a dict of public names to valid :class:`Setting` records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import PosKernelsError, check_int, check_real

__all__ = ["Setting"]


@dataclass(frozen=True)
class Setting:
    """One setting of a scheme: its default and the range it accepts (a field of the head's configuration).

    Attributes
    ----------
    default : int or float
        Its value unless a configuration (or a sweep's grid) sets another.
    lo, hi : float or None
        The closed range it accepts (None: open); an ``int`` default makes an integer setting.
    doc : str
        What it is, in a few words.

    Examples
    --------
    >>> Setting(0.5, 0.0, None, "slope s").check("alibi_slope", 0.25)
    0.25
    >>> Setting(32, 1, 2**20, "buckets").check("t5_buckets", 2.5)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: t5_buckets must be an integer in [1, 1048576] (buckets); got 2.5
    """

    default: int | float
    lo: float | None = None
    hi: float | None = None
    doc: str = ""

    @property
    def kind(self) -> type:
        """``int`` or ``float``, the type of the default."""
        return int if isinstance(self.default, int) and not isinstance(self.default, bool) else float

    def check(self, name: str, value):
        """``value`` as the setting's type if it lies in range, else :class:`PosKernelsError`."""
        if self.kind is int:
            return check_int(name, value, self.lo, self.hi, self.doc)
        value = check_real(name, value, self.lo, self.hi, open_lo=self.lo is not None and self.lo == 0)
        return value


def _check_settings(cls, name: str) -> None:
    """Refuse a scheme class whose ``settings`` is not a dict of public names to valid :class:`Setting` records."""
    settings = cls.settings
    if not isinstance(settings, dict) or not all(isinstance(v, Setting) for v in settings.values()):
        raise PosKernelsError(f"scheme {name!r}: settings must be a dict of name -> Setting; got {settings!r}")
    for key, setting in settings.items():
        if not isinstance(key, str) or not key.isidentifier() or key.startswith("_"):
            raise PosKernelsError(f"scheme {name!r}: a setting's name must be a public identifier; got {key!r}")
        if isinstance(setting.default, bool) or not isinstance(setting.default, (int, float)):
            raise PosKernelsError(f"scheme {name!r}: setting {key!r} needs an int or float default; got "
                                  f"{setting.default!r}")  # fmt: skip
        if isinstance(setting.default, float) and not math.isfinite(setting.default):
            raise PosKernelsError(f"scheme {name!r}: setting {key!r} needs a finite default; got {setting.default!r}")
        try:
            setting.check(key, setting.default)
        except PosKernelsError as err:
            raise PosKernelsError(f"scheme {name!r}: setting {key!r} has a default out of its range: {err}") from None
