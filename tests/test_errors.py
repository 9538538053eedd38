"""One error root: every error a user can cause derives from ``minigpt.errors.TutorError``.

Found by reading the source, not by a list kept by hand: a class defined anywhere in ``minigpt``
or ``tui`` whose bases look like an exception must derive from the root, so a new error cannot
slip past ``except TutorError`` in the CLI, the trainer's failed status and the app.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import click
import pytest

from minigpt import errors
from minigpt.errors import TutorError

REPO = Path(__file__).resolve().parent.parent
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}


def _source_modules():
    for package in ("minigpt", "tui"):
        for path in sorted((REPO / package).rglob("*.py")):
            if "_bundled" in path.parts:
                continue
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            yield path, module.removesuffix(".__init__")


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _exception_like(base: str) -> bool:
    return base in BUILTIN_EXCEPTIONS or base.endswith(("Error", "Exception", "Refusal", "Reached")) or \
        base in {"StoreBusy", "StoreReadOnly", "StoreFull", "StoreDamaged", "TutorError"}


def _defined_errors():
    for path, module in _source_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(_exception_like(_base_name(b)) for b in node.bases):
                yield path, module, node.name


@pytest.fixture(scope="module")
def defined():
    """Every error class in the source (an AST scan of every module: 2 s, so not at import)."""
    return list(_defined_errors())


def test_every_error_class_derives_from_the_root(defined):
    assert defined, "the scan found no error classes at all: it is broken"
    outside = []
    for path, module, name in defined:
        cls = getattr(importlib.import_module(module), name)
        if not issubclass(cls, TutorError):
            outside.append(f"{path.relative_to(REPO)}: {name}")
    assert not outside, "errors a user can cause must derive from minigpt.errors.TutorError:\n" + "\n".join(outside)


def test_user_errors_live_in_errors_py_except_the_cli_line(defined):
    """Only the CLI's one-line ``UserError`` (a click exception) lives outside ``errors.py``."""
    elsewhere = {(module, name) for path, module, name in defined if module != "minigpt.errors"}
    assert elsewhere == {("minigpt.cli.support", "UserError")}


def test_old_bases_still_catch_them():
    """Code that caught ValueError or RuntimeError before the root existed still catches them."""
    assert issubclass(errors.DatasetError, ValueError) and issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.StoreBusy, RuntimeError) and issubclass(errors.RunControlError, RuntimeError)
    assert issubclass(errors.UndoError, RuntimeError) and issubclass(errors.CheckpointError, ValueError)
    from minigpt.cli.support import UserError
    assert issubclass(UserError, click.ClickException) and issubclass(UserError, TutorError)


def test_a_class_off_the_root_is_caught_by_the_scan(tmp_path):
    """The AST scan itself: an error class with a built-in base is found."""
    tree = ast.parse("class LostError(ValueError):\n    pass\n")
    node = tree.body[0]
    assert any(_exception_like(_base_name(b)) for b in node.bases)


def test_the_app_imports_errors_only_from_the_errors_module():
    """``tui`` never reaches into a torch-loading module for an error class."""
    names = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, BaseException)}
    wrong = []
    for path in sorted((REPO / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("minigpt") \
                    and node.module != "minigpt.errors":
                wrong += [f"{path.relative_to(REPO)}: {a.name} from {node.module}" for a in node.names if a.name in names]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("command", [["train", "--d-model", "-3"], ["sample", "--checkpoint", "/nonexistent/x"]])
def test_cli_turns_any_tutor_error_into_one_line(command, tmp_path):
    from click.testing import CliRunner

    from minigpt.cli import main

    r = CliRunner().invoke(main, ["--data-dir", str(tmp_path), *command])
    assert r.exit_code == 2, r.output
    assert r.output.strip().startswith("Error:") and len(r.output.strip().splitlines()) == 1, r.output
