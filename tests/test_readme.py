"""The README names the app's surface exactly: every home key, every footer key of every screen and
widget, and every command of ``minigpt``, and nothing that does not exist; docs/reliability.md's
table of option bounds is the option list's.

Screens and widgets are found by walking the ``tui`` package (not by module paths), so a new one,
wherever it lives, fails here until the README's key table has a row for its binding ids.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

import click

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RELIABILITY = REPO / "docs" / "reliability.md"

# Each row of the README's key table (its "where" cell) → the binding-id namespaces (the text before
# the dot of ``id="flashcards.undo"``) whose keys the row names. Widgets sit with the screen they
# appear on.
ROWS: dict[str, tuple[str, ...]] = {
    "everywhere": ("app",),
    "help (`?`)": ("help",),
    "home": ("home",),
    "lessons": ("lessons",),
    "a lesson": ("lesson", "snippet", "snippet_editor"),
    "flashcards": ("flashcards",),
    "flag a card": ("flag_note",),
    "flagged cards": ("flagged_cards",),
    "quiz": ("quiz", "choice", "checklist"),
    "study stats": ("stats",),
    "interview plan": ("study_plan", "plan_field"),
    "mock interview": ("interview",),
    "ending an interview": ("interview_end",),
    "katas": ("katas",),
    "a kata": ("kata",),
    "attention stepper": ("attention", "matrix"),
    "explorers menu": ("explorer_menu",),
    "an explorer": ("explorer", "explorer_scaling", "explorer_positions", "explorer_norms", "explorer_params",
                    "explorer_tokens"),
    "trained attention": ("explorer_trained", "attention_grid"),
    "choosing a model": ("checkpoint_picker",),
    "training": ("training", "dropdown"),
    "a yes/no question": ("confirm", "start_run", "start_sweep"),
    "runs": ("runs",),
    "compare runs": ("compare_runs",),
    "playground": ("playground",),
    "step through a name": ("playground_step",),
    "score a name": ("playground_score",),
    "temperature sweep": ("playground_sweep",),
    "compare models": ("playground_compare",),
    "experiments": ("experiments",),
    "an experiment": ("experiment",),
    "lab jobs": ("lab_menu",),
    "window too small": ("too_small",),
}
# Where every key is named, not only the footer's: the first list a learner sees, and the app's own.
EVERY_KEY = {"home", "app"}


@cache
def binding_classes() -> tuple[type, ...]:
    """Every class in the ``tui`` package that declares bindings itself (the app, screens, widgets)."""
    import tui

    found = []
    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # running it opens the app
            continue
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values()
                  if isinstance(v, type) and v.__module__ == module.__name__ and v.__dict__.get("BINDINGS")]
    return tuple(found)


@cache
def bindings() -> tuple:
    """(namespace, binding) for every binding with an id (those without are Textual's own)."""
    from tui.keymap import as_binding

    return tuple((b.id.split(".", 1)[0], b) for cls in binding_classes()
                 for b in map(as_binding, cls.__dict__["BINDINGS"]) if b.id)


def binding_keys(binding) -> list[str]:
    from tui.keymap import keys_of, normalise_key

    return [normalise_key(k) for k in keys_of(binding)]


def section(text: str, heading: str) -> str:
    assert f"\n{heading}\n" in text, f"the README has no section {heading!r}"
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def named_keys(cell: str) -> set[str]:
    """The keys a table cell names in backticks (`1`–`5` is a range), as Textual names them."""
    from tui.keymap import normalise_key

    cell = re.sub(r"`(\d)`–`(\d)`", lambda m: " ".join(f"`{d}`" for d in range(int(m[1]), int(m[2]) + 1)), cell)
    return {normalise_key(k) for k in re.findall(r"`([^`]+)`", cell)}


@cache
def key_table() -> dict[str, set[str]]:
    rows = {}
    for line in section(README.read_text(encoding="utf-8"), "## Keys").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 2 and cells[0] not in ("where", "---"):
            assert cells[0] not in rows, f"the key table has two rows {cells[0]!r}"
            rows[cells[0]] = named_keys(cells[1])
    return rows


README_MAX_LINES = 250  # a page a new user reads through; the details live in docs/


def test_the_readme_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


def test_the_key_table_has_exactly_the_rows_this_test_knows():
    assert list(key_table()) == list(ROWS)


def test_every_binding_namespace_belongs_to_a_row():
    placed = {ns for namespaces in ROWS.values() for ns in namespaces}
    unplaced = sorted({ns for ns, _ in bindings()} - placed)
    assert not unplaced, f"bindings {unplaced} have no row in the README's key table (add one, and to ROWS)"
    stale = sorted(placed - {ns for ns, _ in bindings()})
    assert not stale, f"ROWS names binding namespaces no class declares: {stale}"


def test_the_readme_names_every_home_key_and_every_footer_key():
    rows = key_table()
    missing = []
    for ns, b in bindings():
        if not (b.show or ns in EVERY_KEY):
            continue
        row = next(r for r, namespaces in ROWS.items() if ns in namespaces)
        if binding_keys(b)[0] not in rows[row]:  # the footer shows a binding's first key
            missing.append(f"{row}: {b.key} ({b.id})")
    assert not missing, f"keys the README's table does not name: {missing}"


def test_every_key_the_readme_names_is_bound_there():
    rows = key_table()
    for row, namespaces in ROWS.items():
        bound = {k for ns, b in bindings() if ns in namespaces for k in binding_keys(b)}
        assert rows[row] <= bound, f"the README's {row!r} row names keys not bound there: {sorted(rows[row] - bound)}"


# -- the command line --------------------------------------------------------------------------------
def command_paths() -> set[tuple[str, ...]]:
    from tui.cli import main

    found: set[tuple[str, ...]] = set()

    def walk(group: click.Group, path: tuple[str, ...]) -> None:
        for name in group.list_commands(click.Context(group)):
            command = group.get_command(click.Context(group), name)
            found.add((*path, name))
            if isinstance(command, click.Group):
                walk(command, (*path, name))

    walk(main, ())
    return found


def readme_commands() -> list[tuple[str, ...]]:
    """Each ``minigpt WORD [WORD]`` the README writes, the second word kept when it is lowercase
    letters and hyphens (a subcommand or an argument: the test tells them apart)."""
    text = README.read_text(encoding="utf-8")
    return [tuple(m.split()) for m in re.findall(r"(?<![\w/.-])minigpt ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", text)]


def test_the_readme_names_every_command_and_subcommand():
    text = README.read_text(encoding="utf-8")
    missing = sorted(" ".join(p) for p in command_paths() if f"minigpt {' '.join(p)}" not in text)
    assert not missing, f"commands the README never names: {missing}"


def test_every_command_the_readme_names_exists():
    paths = command_paths()
    groups = {p[:-1] for p in paths if len(p) > 1}
    for words in readme_commands():
        assert words[:1] in paths, f"the README names `minigpt {words[0]}`, which is no command"
        if words[:1] in groups:
            assert len(words) == 2 and words in paths, f"the README names `minigpt {' '.join(words)}`: no such subcommand"


# -- docs/reliability.md -----------------------------------------------------------------------------
BOUNDS_HEADING = "## Every option's bounds"


def expected_bounds_table() -> str:
    from minigpt.training.options import OPTIONS

    lines = ["| option | accepted |", "|---|---|"]
    for opt in OPTIONS:
        if opt.choices:
            accepted = "one of " + ", ".join(f"`{c}`" for c in opt.choices)
        elif opt.bounds_text():
            accepted = ("a whole number" if opt.kind is int else "a number") + opt.bounds_text()
        else:  # on/off switches and the data file's path have no bounds
            continue
        lines.append(f"| `{opt.cli_flag}` | {accepted} |")
    return "\n".join(lines)


def test_the_readme_links_the_reliability_promises():
    assert "](docs/reliability.md)" in README.read_text(encoding="utf-8")
    assert "## Reliability" not in README.read_text(encoding="utf-8"), "the promises live in docs/reliability.md"


def test_the_option_bounds_are_the_option_lists():
    table = section(RELIABILITY.read_text(encoding="utf-8"), BOUNDS_HEADING).strip().split("\n\n", 1)[1]
    current = table.split("\n\n", 1)[0].strip()
    assert current == expected_bounds_table(), (
        "docs/reliability.md's bounds differ from minigpt/training/options.py; the table should read:\n"
        + expected_bounds_table())



def test_the_lesson_list_has_one_line_per_lesson():
    """tests/test_beyond_lessons.py finds each lesson at its number; nothing else is numbered there."""
    from minigpt.lessons import load_lessons

    listed = re.findall(r"^\d+\. ", section(README.read_text(encoding="utf-8"), "## The lessons"), re.M)
    assert len(listed) == len(load_lessons())
