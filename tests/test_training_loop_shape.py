"""The training loop stays readable: every function of training/loop.py and training/trainer.py
fits on a screen (at most 80 lines), the way nanoGPT's train.py reads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80


def long_functions(path: Path, limit: int = MAX_LINES) -> list[str]:
    """``name (N lines)`` for every function or method in ``path`` longer than ``limit``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append(f"{node.name} ({lines} lines)")
    return found


@pytest.mark.parametrize("module", ["loop.py", "trainer.py"])
def test_every_function_of_the_loop_fits_on_a_screen(module):
    assert long_functions(ROOT / "minigpt" / "training" / module) == []


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "long.py").write_text(f"def too_long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert long_functions(tmp_path / "long.py") == [f"too_long ({MAX_LINES + 1} lines)"]


def test_the_loop_reads_as_named_steps():
    """_train calls the trainer's steps by name; no closure hides inside it."""
    tree = ast.parse((ROOT / "minigpt" / "training" / "loop.py").read_text(encoding="utf-8"))
    train = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_train")
    assert not [n for n in ast.walk(train) if isinstance(n, ast.FunctionDef) and n is not train]
    called = {n.func.attr for n in ast.walk(train) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert {"setup", "train_step", "log", "finish"} <= called
