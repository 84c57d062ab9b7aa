"""Evaluate the small arithmetic expressions that tie published cells and claims to data.

Expressions such as ``h100_moe_c16_output_tps / strix_best_tg128_tps`` are written by
people in YAML, so they get a deliberately tiny language (numbers, names, + - * / **,
parentheses, min/max/abs) and errors that say which name is unknown.
"""

from __future__ import annotations

import ast
import functools
import math
import operator

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FUNCS = {"min": min, "max": max, "abs": abs}


class ExpressionError(ValueError):
    """An expression that cannot be parsed or uses something it may not."""


class MissingValue(LookupError):
    """An expression names a value the data does not have (yet)."""

    def __init__(self, names: list[str]):
        self.names = names
        super().__init__(", ".join(names))


def names_in(expr: str) -> set[str]:
    """The value names an expression uses."""
    return set(_names(str(expr)))


@functools.lru_cache(maxsize=4096)
def _names(expr: str) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(_parse(expr)) if isinstance(n, ast.Name) and n.id not in _FUNCS)


@functools.lru_cache(maxsize=4096)
def _checked(expr: str) -> ast.Expression:
    """The parsed expression, refused if it uses anything outside the language (once per
    text: a claim's stated range evaluates one expression at up to 2^n corners)."""
    tree = _parse(expr)
    _check(tree.body)
    return tree


def evaluate(expr: str, values: dict[str, float | None]) -> float:
    """Evaluate `expr` over `values`; raise MissingValue for absent or None values."""
    tree = _checked(str(expr))
    missing = sorted(
        n for n in _names(str(expr)) if values.get(n) is None or _isnan(values.get(n))
    )
    if missing:
        raise MissingValue(missing)
    try:
        return float(_eval(tree.body, values))
    except ZeroDivisionError:
        return math.nan


_ALLOWED = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.Call, ast.Load,
            *_BINOPS, ast.USub)


def _check(tree: ast.AST) -> None:
    """Refuse anything outside the tiny language before looking up any name."""
    for node in ast.walk(tree):
        bad = not isinstance(node, _ALLOWED)
        if isinstance(node, ast.Call):
            bad = not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS) or bool(node.keywords)
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            bad = True
        if bad:
            raise ExpressionError(
                f"unsupported element {type(node).__name__}: use numbers, names, + - * / ** and min/max/abs"
            )


def _parse(expr: str) -> ast.Expression:
    try:
        return ast.parse(str(expr), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {expr!r}: {exc.msg}") from exc


def _isnan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _eval(node: ast.AST, values: dict):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, values)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        return _FUNCS[node.func.id](*(_eval(a, values) for a in node.args))
    raise ExpressionError(f"unsupported element {ast.dump(node)[:60]!r}: "
                          "use numbers, names, + - * / ** and min/max/abs")
