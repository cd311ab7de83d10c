"""A claim's inputs as the claims table writes them: small expressions over the paths of a ``numbers.json``.

Each row of the table (:mod:`poskernels.claims.table`) names the per-seed values its statistic reads, ``x`` or
``a`` and ``b`` (and a kind's scalars such as a target ``t``), each as an expression.  An expression is Python's
syntax for arithmetic, parsed and checked when the table is read and evaluated by this module alone (never
``eval``):

* a string is a path in the file, ``"tournament/per_seed/rope/256"`` (an input that is one path may drop the
  quotes): a per-seed list is read as floats (a seed
  with no value as NaN), a number as a float64 scalar; its first part is the section the claim needs;
* numbers; ``+ - * /``, unary minus; a comparison, chained or not, is 1.0 seed by seed where it holds, else 0.0;
* ``e[i]``, ``e[:, i]``: an index or slice of an array;
* a name from the suite's ``[constants]`` (``HOLD``), or another suite's (``beyond.HOLD``);
* a function of :data:`FUNCTIONS`.

Examples
--------
>>> numbers = {"tournament": {"per_seed": {"rope": {"32": [1.0, 0.9], "64": [0.5, None]}}}}
>>> e = parse("'tournament/per_seed/rope/32' > 'tournament/per_seed/rope/64'", {})
>>> e.sections, evaluate(e, numbers).tolist()
(('tournament',), [1.0, 0.0])
>>> evaluate(parse("'tournament/per_seed/rope/32' - HOLD", {"HOLD": 0.05}), numbers).tolist()
[0.95, 0.85]
>>> parse("open('x')", {})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
poskernels.errors.PosKernelsError: unknown function 'open' in "open('x')"; accepted: abs, alibi_tail_bound, ...
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

import numpy as np

from ..errors import PosKernelsError
from .functions import FUNCTIONS, SECTIONS

__all__ = ["Expression", "evaluate", "parse"]

#: An input that is one path may be written bare, without the quotes an expression gives it.
_PLAIN_PATH = re.compile(r"[\w.]+(/[\w.]+)+")
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMPARE = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@dataclass(frozen=True)
class Expression:
    """One input, parsed and checked: its text, its tree (constants already substituted) and the sections it reads."""

    text: str
    tree: ast.expr
    sections: tuple[str, ...]


def parse(text: str, constants: dict) -> Expression:
    """Parse and check one input expression; ``constants`` maps a name to its value.

    Refuses, with one clear error, any syntax but the module's, an unknown name or function, and a path outside the
    trained sections.

    Parameters
    ----------
    text : str
        The expression (a claim row's input).
    constants : dict
        The names it may use (:func:`poskernels.claims.table.constants`).

    Returns
    -------
    Expression
        Its text, its tree with the constants substituted, and the sections it reads.

    Raises
    ------
    PosKernelsError
        If the text is not an expression the evaluator reads, or names an unknown constant, function or section.

    Examples
    --------
    >>> parse('"tournament/per_seed/rope/32" - 0.5', {}).sections
    ('tournament',)
    >>> parse('"rope/32"', {})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: path 'rope/32' in '"rope/32"' is not in a trained section; accepted first
    parts: tournament, rescaled, rebound, sinusoidal, thm2, filings, long
    """
    try:
        tree = ast.Constant(text) if _PLAIN_PATH.fullmatch(text) else ast.parse(text, mode="eval").body
    except SyntaxError as err:
        raise PosKernelsError(f"input {text!r} is not an expression ({err.msg})") from None
    sections: list[str] = []
    tree = _check(tree, text, constants, sections)
    return Expression(text, tree, tuple(dict.fromkeys(sections)))


def _constant(node: ast.expr, text: str, constants: dict):
    """A function's raw argument: a literal, a constant's name, or a tuple of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return _named(f"{node.value.id}.{node.attr}", text, constants)
    raise PosKernelsError(f"in {text!r}: a function of names takes literals or constants, got {ast.unparse(node)!r}")


def _named(name: str, text: str, constants: dict):
    if name not in constants:
        known = ", ".join(sorted(constants)) or "none"
        raise PosKernelsError(f"unknown name {name!r} in {text!r}; the constants are: {known}")
    return constants[name]


def _path(value: str, text: str, sections: list) -> None:
    head = value.split("/")[0]
    if head not in SECTIONS:
        raise PosKernelsError(
            f"path {value!r} in {text!r} is not in a trained section; accepted first parts: {', '.join(SECTIONS)}"
        )
    sections.append(head)


def _check(node: ast.expr, text: str, constants: dict, sections: list) -> ast.expr:
    """The tree with every constant's name replaced by its value; raises on anything the evaluator does not read."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            _path(node.value, text, sections)
        elif isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise PosKernelsError(f"in {text!r}: {node.value!r} is neither a path nor a number")
        return node
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else f"{ast.unparse(node.value)}.{node.attr}"
        value = _named(name, text, constants)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise PosKernelsError(f"in {text!r}: the constant {name!r} is {value!r}, not a number")
        return ast.copy_location(ast.Constant(value), node)
    if isinstance(node, ast.Call):
        return _check_call(node, text, constants, sections)
    children = _children(node, text)
    for field, value in children:
        if isinstance(value, list):
            setattr(node, field, [_check(v, text, constants, sections) for v in value])
        else:
            setattr(node, field, _check(value, text, constants, sections))
    return node


def _children(node: ast.expr, text: str) -> list:
    """The sub-expressions of an operator node, or an error naming what is not read."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return [("left", node.left), ("right", node.right)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [("operand", node.operand)]
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        return [("left", node.left), ("comparators", node.comparators)]
    if isinstance(node, ast.Subscript):
        return [("value", node.value)]  # the index is checked when it is read: literals only
    raise PosKernelsError(f"in {text!r}: {ast.unparse(node)!r} is not read (accepted: + - * /, comparisons, e[i])")


def _check_call(node: ast.Call, text: str, constants: dict, sections: list) -> ast.expr:
    name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
    if name not in FUNCTIONS or node.keywords:
        raise PosKernelsError(f"unknown function {name!r} in {text!r}; accepted: {', '.join(sorted(FUNCTIONS))}")
    fn = FUNCTIONS[name]
    if fn.raw:
        args = [_constant(a, text, constants) for a in node.args]
        sections.extend(fn.sections)
        if fn.path_arg and args:
            _path(str(args[0]), text, sections)
        node.args = [ast.Constant(a) for a in args]
    else:
        node.args = [_check(a, text, constants, sections) for a in node.args]
    return node


def _index(node: ast.expr):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_index(node.operand)
    if isinstance(node, ast.Slice):
        return slice(*(None if p is None else _index(p) for p in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.Tuple):
        return tuple(_index(e) for e in node.elts)
    raise ValueError(f"index {ast.unparse(node)!r}: integers and slices only")


def read_path(numbers: dict, path: str):
    """The value at ``path``: a per-seed list as floats (None as NaN), a number as a float64.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.
    path : str
        ``/``-separated keys.

    Returns
    -------
    ndarray or numpy.float64

    Raises
    ------
    KeyError
        If a key is missing.
    TypeError
        If the value is neither a list nor a number.

    Examples
    --------
    >>> read_path({"tournament": {"per_seed": {"rope": {"32": [0.9, None]}}}}, "tournament/per_seed/rope/32").tolist()
    [0.9, nan]
    >>> float(read_path({"thm2": {"bound": 2}}, "thm2/bound"))
    2.0
    """
    value = numbers
    for part in path.split("/"):
        value = value[part]
    if isinstance(value, list):
        return np.array([np.nan if v is None else v for v in value], dtype=float)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.float64(value)
    raise TypeError(f"{path}: a {type(value).__name__}, not a per-seed list or a number")


def evaluate(expr: Expression, numbers: dict):
    """The expression's value on a ``numbers.json`` dict (KeyError, IndexError, TypeError where it lacks it).

    Parameters
    ----------
    expr : Expression
        :func:`parse`'s output.
    numbers : dict
        A ``numbers.json`` dict.

    Returns
    -------
    ndarray, numpy.float64 or float
        The value: per-seed arrays where the paths are per-seed lists.

    Examples
    --------
    >>> expr = parse('"tournament/per_seed/rope/32" - 0.5', {})
    >>> evaluate(expr, {"tournament": {"per_seed": {"rope": {"32": [0.9, 1.0]}}}}).tolist()
    [0.4, 0.5]
    """
    return _eval(expr.tree, numbers)


def _eval(node: ast.expr, numbers: dict):
    if isinstance(node, ast.Constant):
        return read_path(numbers, node.value) if isinstance(node.value, str) else node.value
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, numbers), _eval(node.right, numbers))
    if isinstance(node, ast.UnaryOp):
        return -_eval(node.operand, numbers)
    if isinstance(node, ast.Compare):
        left, held = _eval(node.left, numbers), True
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, numbers)
            held = held & _COMPARE[type(op)](left, right)
            left = right
        return np.asarray(held).astype(float) if np.ndim(held) else np.float64(held)
    if isinstance(node, ast.Subscript):
        return _eval(node.value, numbers)[_index(node.slice)]
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    fn = FUNCTIONS[node.func.id]
    if fn.raw:
        return fn.call(numbers, *(a.value for a in node.args if isinstance(a, ast.Constant)))
    return fn.call(*(_eval(a, numbers) for a in node.args))
