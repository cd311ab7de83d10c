"""The probe's text: English that every machine has offline and that no one here wrote, the docstrings of the
Python standard library, in a fixed order (:data:`MODULES`, then each module's public names sorted), its SHA-256
recorded with the results (docstrings change between Python versions; the hash says which text was read)."""

from __future__ import annotations

import hashlib
import importlib
import inspect

__all__ = ["MODULES", "stdlib_text", "text_sha256"]

#: The standard-library modules read, in this order.
MODULES = ("argparse", "collections", "contextlib", "csv", "dataclasses", "datetime", "decimal", "difflib",
           "fractions", "functools", "heapq", "inspect", "itertools", "json", "logging", "pathlib", "pickle",
           "random", "shutil", "statistics", "string", "subprocess", "tarfile", "textwrap", "threading", "enum",
           "unittest", "zipfile", "email.message", "urllib.parse", "http.client", "asyncio.locks",
           "collections.abc", "configparser", "ftplib", "imaplib", "mailbox", "smtplib", "xml.dom.minidom")  # fmt: skip


def stdlib_text() -> str:
    """The corpus: each module's docstring, then its public classes' and functions' (and their methods'),
    separated by blank lines.

    >>> text = stdlib_text()
    >>> len(text) > 200_000, text == stdlib_text()
    (True, True)
    """
    parts: list[str] = []
    for name in MODULES:
        mod = importlib.import_module(name)
        parts.append(inspect.getdoc(mod) or "")
        for attr in sorted(n for n in vars(mod) if not n.startswith("_")):
            obj = vars(mod)[attr]
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or getattr(obj, "__module__", None) != name:
                continue
            parts.append(inspect.getdoc(obj) or "")
            if inspect.isclass(obj):
                for meth in sorted(n for n in vars(obj) if not n.startswith("_")):
                    if inspect.isfunction(vars(obj)[meth]):
                        parts.append(inspect.getdoc(vars(obj)[meth]) or "")
    return "\n\n".join(p for p in parts if p.strip())


def text_sha256(text: str) -> str:
    """SHA-256 of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()
