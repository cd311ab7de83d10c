"""How each position scheme enters the head: the scheme registry, seen from the model.

The schemes' hooks (``init``, ``code`` / ``code_backward``, ``bias`` / ``bias_backward``, ``rotary``) live with
their metadata in one registry, :data:`poskernels.encodings.SCHEMES` (the entries in
:mod:`poskernels.encodings.registry`, the contract and the shapes of every hook in
:mod:`poskernels.encodings.scheme`): they need only NumPy and the codes, and one record per scheme keeps a
scheme's title, its forward and its backward in one place.  :data:`HEAD_SCHEMES` is that same dict, under the
name the head's modules use.

>>> from poskernels.encodings import SCHEMES
>>> HEAD_SCHEMES is SCHEMES
True
"""

from __future__ import annotations

from ..encodings.registry import SCHEMES
from ..encodings.scheme import Scheme, default_positions

__all__ = ["HEAD_SCHEMES", "HeadScheme", "default_positions"]

#: Registry of position schemes, by name: :data:`poskernels.encodings.SCHEMES` itself.
HEAD_SCHEMES = SCHEMES
#: The base of every scheme (:class:`poskernels.encodings.Scheme`), under the model's name.
HeadScheme = Scheme
