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


# Imported after the first frame, never on its way: torch, and the headless commands (the app's
# entry point is their click group too; their imports took ~0.1 s of the first frame).
NOT_BEFORE_THE_FIRST_FRAME = ("torch", "minigpt.cli.main", "minigpt.cli.train", "minigpt.runs.lab",
                              "minigpt.alerts")


def test_home_screen_path_does_not_import_torch_or_the_headless_commands():
    code = (
        "import sys\n"
        "import tui.cli, tui.app, tui.home.home\n"
        f"print([m for m in {NOT_BEFORE_THE_FIRST_FRAME!r} if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# Calls that start a child process. Only minigpt.spawn makes them: the environment, session,
# niceness, thread policy and the bound of a snippet's tree are decided in one place.
_SPAWNING_CALLS = {("subprocess", "Popen"), ("subprocess", "run"), ("subprocess", "call"),
                   ("subprocess", "check_call"), ("subprocess", "check_output"),
                   ("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell"),
                   ("os", "fork"), ("os", "posix_spawn"), ("os", "posix_spawnp"), ("os", "spawnv"),
                   ("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execvp")}


def _spawning_calls(path: Path) -> list[str]:
    import ast

    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported_names = {alias.asname or alias.name: (node.module, alias.name) for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) for alias in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            base = func.value
            name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if (name, func.attr) in _SPAWNING_CALLS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}.{func.attr}")
        elif isinstance(func, ast.Name) and imported_names.get(func.id) in _SPAWNING_CALLS:
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {func.id}")
    return found


def test_only_the_spawn_module_starts_child_processes():
    """Trainers, sweep schedulers, torchrun launchers and lesson snippets all start through
    minigpt.spawn; a second way to start one fails here (asyncio.subprocess.X counts as asyncio.X)."""
    own = REPO / "minigpt" / "spawn.py"
    offenders = [hit for package in ("minigpt", "tui") for path in sorted((REPO / package).rglob("*.py"))
                 if path != own for hit in _spawning_calls(path)]
    assert offenders == [], "start child processes through minigpt.spawn:\n" + "\n".join(offenders)
    assert _spawning_calls(own), "the spawn module itself must still be found by this check"


def test_no_screen_calls_another_objects_private_methods():
    """A screen talks to another screen (or widget) through its public methods: a call of
    ``other._name()`` from a screen's module ties two screens' insides together (runs.py once
    switched the training screen's mode with its ``_set_mode``). Screens are those the navigation
    table names."""
    import ast

    from tui.navigation import SCREENS

    found = []
    screen_files = {REPO / (target.partition(":")[0].replace(".", "/") + ".py") for target in SCREENS.values()}
    for path in sorted(screen_files):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name, owner = node.func.attr, node.func.value
            if not name.startswith("_") or name.startswith("__"):
                continue
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}()")
    assert not found, "private methods called from outside their object:\n" + "\n".join(found)


def test_only_the_navigation_table_reaches_a_screen():
    """Screens and widgets share their area's package, so the old folder rule (screens above widgets)
    is kept here: no module of the app imports a screen's module (the table imports it by name)."""
    import ast

    from tui.navigation import SCREENS

    screens = {target.partition(":")[0] for target in SCREENS.values()}
    found = []
    for path in sorted((REPO / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else []) + \
                    ([a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if isinstance(node, ast.ImportFrom) and node.module:
                names += [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{path.relative_to(REPO)}:{node.lineno} {name}" for name in names if name in screens]
    assert found == [], "open screens through tui.navigation:\n" + "\n".join(found)


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
             # spawn.py reads the kernel's own files (/proc, a cgroup's procs), never a user's, and
             # sits below guarded in the layers
             if name not in ("minigpt/guarded.py", "minigpt/spawn.py") for m in plain.finditer(text)]
    assert found == [], f"read these through minigpt.guarded: {found}"


def test_no_test_module_imports_another():
    """What two test modules share lives in tests/helpers/: importing a test module from another
    runs its collection-time work again and ties the two files' fixtures and names together."""
    import ast

    offenders = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith(("test_", "conftest")):
                    offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert not offenders, "test modules importing other test modules (move the shared part to tests/helpers/):\n" + \
        "\n".join(offenders)
