"""The architecture, checked: import contracts, no import cycles, no torch before the first frame."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    r = subprocess.run([lint, "--config", str(REPO / "pyproject.toml")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_ruff_is_clean():
    """Lint and import order (pyproject's [tool.ruff]); the pinned ruff of the test extra."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    r = subprocess.run([ruff, "check", "--no-cache", "."], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def _cycles(graph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), i.e. import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v) & modules:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return found


def test_no_module_imports_a_module_that_imports_it_back():
    graph = grimp.build_graph("minigpt", "tui")
    # A package's __init__ is not an import of its children, so packages are left out.
    modules = {m for m in graph.modules if not (REPO / m.replace(".", "/")).is_dir()}
    assert _cycles(graph, modules) == []


def test_home_screen_path_does_not_import_torch():
    code = (
        "import sys\n"
        "import tui.cli, tui.app, tui.screens.home\n"
        "print('torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def _library_and_app_sources():
    for folder in ("minigpt", "tui"):
        for path in sorted((REPO / folder).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")


def test_one_size_rule_for_every_model_kind():
    """MAX_PARAMS and the measuring of a planned model live in minigpt/models/build.py only: the form,
    the session and the checkpoint reader call check_model_size (issue 24 item 2). A second cap,
    or a second comparison against it, fails here."""
    import re

    elsewhere = [(name, m.group()) for name, text in _library_and_app_sources() if name != "minigpt/models/build.py"
                 for m in re.finditer(r"MAX_\w*PARAMS\w*|planned_size\(", text)]
    assert elsewhere == [], f"a second size rule: {elsewhere}"
    users = {name for name, text in _library_and_app_sources() if "check_model_size(" in text}
    assert {"minigpt/training/session.py", "minigpt/checkpoint.py"} <= users


def test_one_guarded_reader_for_user_reachable_files():
    """Every file a user can reach is read through minigpt.guarded (regular file, size cap, never
    blocking on a FIFO): a plain read_text / read_bytes / json.load / tomllib.load elsewhere fails."""
    import re

    plain = re.compile(r"(?<!guarded)\.read_(?:text|bytes)\(|json\.load\(|tomllib\.load\(")
    found = [f"{name}:{text[: m.start()].count(chr(10)) + 1}" for name, text in _library_and_app_sources()
             if name != "minigpt/guarded.py" for m in plain.finditer(text)]
    assert found == [], f"read these through minigpt.guarded: {found}"
