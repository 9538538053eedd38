"""The one function a kata practises may not be called: refused in the source, and at run time.

The source check reads the learner's code with ``ast`` (nothing runs): it follows imports and
aliases (``import torch.nn.functional as F`` then ``F.softmax``, ``from torch import softmax as s``)
and, for a ``Tensor.name`` rule, any method call ``.name(…)``. What it cannot see
(``getattr(torch, "soft" + "max")``) is caught while the code runs: :func:`guard` replaces each
forbidden callable by one that records the call and raises, and the grader fails every case once a
call was recorded, even if the learner's code caught the exception. Names are only one way in: the
operators behind them are refused at torch's dispatcher by :mod:`minigpt.katas.ban`, whatever the
spelling, and the bounded runner's harness replaces the names before the learner's code is loaded.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
from collections.abc import Iterable, Iterator

from minigpt.errors import KataCodeError


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``torch.nn.functional.softmax`` for ``F.softmax`` when ``F`` names torch.nn.functional."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _aliases(tree: ast.AST) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def forbidden_uses(source: str, forbidden: Iterable[str]) -> list[tuple[int, str]]:
    """(line, rule) for each use of a forbidden function in ``source``; a syntax error raises
    :class:`KataCodeError` with its line."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise KataCodeError(f"line {e.lineno}: syntax error: {e.msg}") from None
    rules = list(forbidden)
    modules = [r for r in rules if not r.startswith("Tensor.")]
    methods = {r.removeprefix("Tensor."): r for r in rules if r.startswith("Tensor.")}
    aliases = _aliases(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = _dotted(node, aliases)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                found += [(node.lineno, r) for r in modules if full == r or full.startswith(r + ".")]
        if name:
            found += [(node.lineno, r) for r in modules if name == r or name.startswith(r + ".")]
        if isinstance(node, ast.Attribute) and node.attr in methods:
            base = _dotted(node.value, aliases) or ""
            if not any(base == r.rpartition(".")[0] for r in modules):  # torch.softmax is reported once
                found.append((node.lineno, methods[node.attr]))
    return sorted(set(found))


def check_source(source: str, forbidden: Iterable[str], function: str) -> None:
    """Raise :class:`KataCodeError` when ``source`` uses a forbidden call or lacks ``function``."""
    uses = forbidden_uses(source, forbidden)
    if uses:
        line, rule = uses[0]
        raise KataCodeError(f"line {line}: calls {rule}, the function this kata asks you to write yourself")
    tree = ast.parse(source)
    if not any(isinstance(n, ast.FunctionDef) and n.name == function for n in tree.body):
        raise KataCodeError(f"no function called {function}() at the top level of your code")


def _resolve(rule: str):
    """(owner object, attribute name) for a rule such as ``torch.nn.functional.softmax``."""
    if rule.startswith("Tensor."):
        import torch

        return torch.Tensor, rule.removeprefix("Tensor.")
    owner_name, _, attr = rule.rpartition(".")
    parts = owner_name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            owner = getattr(owner, part)
        return owner, attr
    raise LookupError(rule)


@contextlib.contextmanager
def guard(forbidden: Iterable[str], calls: list[str]) -> Iterator[None]:
    """While inside, each forbidden callable appends its rule to ``calls`` and raises."""
    saved = []
    try:
        for rule in forbidden:
            try:
                owner, attr = _resolve(rule)
                original = getattr(owner, attr)
            except (LookupError, AttributeError):
                continue  # not in this torch version: nothing to call

            def refuse(*args, _rule=rule, **kwargs):
                calls.append(_rule)
                raise KataCodeError(f"{_rule} is the function this kata asks you to write yourself")

            setattr(owner, attr, refuse)
            saved.append((owner, attr, original))
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)
