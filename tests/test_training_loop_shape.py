"""The training loop stays readable the way nanoGPT's train.py reads: every function of
training/loop.py and training/trainer.py fits on a screen (at most 80 lines), ``_train`` names
each step (train step, evaluate-and-save, log, thread retune, snapshot, stop) in that order, and
the step reads as one process's, with what follows it behind the observers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOOP = ROOT / "minigpt" / "training" / "loop.py"
TRAINER = ROOT / "minigpt" / "training" / "trainer.py"
MAX_LINES = 80
# What a reader of nanoGPT's train.py looks for in the loop, in the order the loop does it.
NAMED_STEPS = ["train_step", "evaluate_and_save", "log", "retune_threads", "keep_snapshot", "should_stop"]


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


def function(path: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def method_calls(node: ast.AST, owner: str) -> list[str]:
    """The methods of ``owner`` (``owner.name(...)``) that ``node`` calls, in the order written."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and isinstance(n.func.value, ast.Name) and n.func.value.id == owner]
    return [c.func.attr for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]


def condition_of(loop: ast.AST, step: str) -> list[str]:
    """The trainer's methods called in the test of the innermost ``if`` around ``trainer.step()``."""
    around = [n for n in ast.walk(loop) if isinstance(n, ast.If)
              and step in method_calls(ast.Module(body=n.body, type_ignores=[]), "trainer")]
    assert around, f"trainer.{step}() is not under an if"
    return method_calls(max(around, key=lambda n: n.lineno).test, "trainer")


@pytest.mark.parametrize("module", ["loop.py", "trainer.py"])
def test_every_function_of_the_loop_fits_on_a_screen(module):
    assert long_functions(ROOT / "minigpt" / "training" / module) == []


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "long.py").write_text(f"def too_long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert long_functions(tmp_path / "long.py") == [f"too_long ({MAX_LINES + 1} lines)"]


def test_the_loop_reads_as_named_steps():
    """_train calls the trainer's steps by name; no closure hides inside it."""
    train = function(LOOP, "_train")
    assert not [n for n in ast.walk(train) if isinstance(n, ast.FunctionDef) and n is not train]
    called = {n.func.attr for n in ast.walk(train) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert {"setup", "train_step", "log", "finish"} <= called


def test_the_loop_names_each_step_in_order():
    """Evaluation is in the loop, at eval steps, as nanoGPT's ``if iter_num % eval_interval == 0``
    is; the log record and the thread count's retune at logging steps; then the snapshot and the stop."""
    loop = next(n for n in ast.walk(function(LOOP, "_train")) if isinstance(n, ast.While))
    assert [c for c in method_calls(loop, "trainer") if c in NAMED_STEPS] == NAMED_STEPS
    assert condition_of(loop, "evaluate_and_save") == ["is_eval"]
    assert condition_of(loop, "log") == ["should_log"]
    assert condition_of(loop, "retune_threads") == ["should_log"]


def test_the_check_sees_a_step_hidden_or_out_of_order(tmp_path):
    hidden = ("def _train(trainer):\n    while not trainer.finished:\n        trainer.train_step()\n"
              "        if trainer.should_log():\n            trainer.log()\n")
    (tmp_path / "loop.py").write_text(hidden)
    loop = next(n for n in ast.walk(function(tmp_path / "loop.py", "_train")) if isinstance(n, ast.While))
    assert [c for c in method_calls(loop, "trainer") if c in NAMED_STEPS] != NAMED_STEPS
    with pytest.raises(AssertionError, match="not under an if"):
        condition_of(loop, "evaluate_and_save")


def test_the_step_reads_as_one_process():
    """train_step asks its world for the reductions (a single process's world returns its input):
    it never calls the distributed module, nor asks whether it is distributed to return early;
    the weight average and the probes are the observers' (forward, backward, clip, step, and the
    skip-or-fail rule stay in view)."""
    step = function(TRAINER, "train_step")
    names = {n.id for n in ast.walk(step) if isinstance(n, ast.Name)}
    attributes = {n.attr for n in ast.walk(step) if isinstance(n, ast.Attribute)}
    assert "distributed" not in names | attributes
    assert not [n for n in ast.walk(step) if isinstance(n, ast.Return)]
    assert {"global_tokens", "scaled_loss", "agree"} <= set(method_calls(step, "world"))
    assert not {"layers", "average", "snapshots"} & attributes
    assert {"before_update", "after_update", "backward", "clip_grad_norm_", "step", "_skip_or_fail"} <= attributes
    trainer_module = ast.parse(TRAINER.read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(trainer_module) if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name) and n.value.id == "distributed"]
