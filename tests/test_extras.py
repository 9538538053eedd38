"""The optional parts of the install: each command that needs one says in one line which to install,
and nothing imports an extra's packages until such a command runs."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt import extras
from minigpt.errors import MissingExtraError
from minigpt.store import Store
from minigpt.study import anki
from minigpt.study.cards import Deck
from tui.cli import main

ROOT = Path(__file__).resolve().parent.parent
# The modules only an extra brings, and the one module allowed to import them at its top (it is
# itself imported only inside the command that needs it).
EXTRA_MODULES = {"textual_serve": "serve", "aiohttp": "serve", "genanki": "anki", "pandas": "optimizer"}
BEHIND_AN_EXTRA = {"tui/browser/serve_server.py"}


def _missing(monkeypatch, *modules: str) -> None:
    """Make ``modules`` unimportable for this test: find_spec answers None and import raises."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_pyproject_declares_every_extra_the_module_names_and_the_test_extra_pulls_them_all():
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = [extra.name for extra in extras.EXTRAS]
    assert set(names) <= set(optional)
    assert f"minigpt-tutor[{','.join(names)}]" in optional["test"]
    core = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert not [d for d in core if d.startswith(("genanki", "textual-serve"))]


def test_every_extra_is_installed_where_the_suite_runs():
    assert all(extras.installed(extra.name) for extra in extras.EXTRAS)


def test_a_missing_module_makes_its_extra_missing(monkeypatch):
    _missing(monkeypatch, "genanki")
    assert not extras.installed("anki") and extras.installed("serve")


def test_serve_without_its_extra_says_which_to_install_in_one_line(monkeypatch):
    _missing(monkeypatch, "textual_serve")
    result = CliRunner().invoke(main, ["serve", "--port", "9"])
    assert result.exit_code == 2
    assert result.output == "Error: minigpt serve needs the serve extra: pip install 'minigpt-tutor[serve]'\n"


def test_the_anki_export_without_its_extra_says_which_to_install_and_writes_nothing(monkeypatch, tmp_path):
    _missing(monkeypatch, "genanki")
    with pytest.raises(MissingExtraError) as caught:
        anki.export_apkg(Deck(), tmp_path / "cards.apkg")  # refused before the deck is read
    assert str(caught.value) == "exporting an Anki package (.apkg) needs the anki extra: pip install 'minigpt-tutor[anki]'"
    assert list(tmp_path.iterdir()) == []


def test_importing_cards_needs_no_extra(monkeypatch, tmp_path):
    _missing(monkeypatch, "genanki")
    source = tmp_path / "mine.md"
    source.write_text("Q: What scales the scores?\nA: One over the square root of d_k.\n", encoding="utf-8")
    store = Store(tmp_path / "progress.sqlite3")
    assert len(anki.import_file(store, source)) == 1
    assert [card.front for card in anki.user_cards(store)] == ["What scales the scores?"]


def test_fsrs_fit_without_its_extra_says_which_to_install_before_counting_reviews(monkeypatch, tmp_path):
    _missing(monkeypatch, "pandas")
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["fsrs", "fit"])
    assert result.exit_code == 2
    assert result.output == "Error: fitting FSRS needs the optimizer extra: pip install 'minigpt-tutor[optimizer]'\n"


def _top_level_imports(path: Path) -> set[str]:
    """Modules a module imports at its top (not inside a function), by their full dotted names."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_an_extras_packages_are_imported_only_inside_the_commands_that_need_them():
    offenders = []
    for path in sorted([*ROOT.glob("minigpt/**/*.py"), *ROOT.glob("tui/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative in BEHIND_AN_EXTRA:
            continue
        if not any(name in path.read_text(encoding="utf-8") for name in (*EXTRA_MODULES, "serve_server")):
            continue  # parsed only when it names one: the scan stays well under a second
        imported = _top_level_imports(path)
        found = {name.split(".")[0] for name in imported} & set(EXTRA_MODULES)
        found |= imported & {"tui.browser.serve_server"}
        if found:
            offenders.append(f"{relative}: {sorted(found)}")
    assert not offenders, offenders


def test_the_apps_fsrs_fit_without_its_extra_raises_the_same_line(monkeypatch, tmp_path):
    from minigpt.errors import StudySettingError
    from minigpt.study import fsrs_fit

    _missing(monkeypatch, "pandas")
    with pytest.raises(StudySettingError, match=r"^fitting FSRS needs the optimizer extra: pip install 'minigpt-tutor\[optimizer\]'$"):
        fsrs_fit.fit(Store(tmp_path / "progress.sqlite3"))
