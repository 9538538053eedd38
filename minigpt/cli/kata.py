"""``minigpt kata``: the coding exercises from the shell, for people who prefer their own editor.

``list``, ``show`` and ``solution`` read the kata folders only (no torch); ``check`` grades a file
in the bounded runner, prints one line per failing case (the first one in detail) and exits 0
only when every case passes. Attempts are recorded in the progress database, as in the app.
"""

from __future__ import annotations

from pathlib import Path

import click

from minigpt import guarded
from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError
from minigpt.text import printable


def _kata(name: str):
    from minigpt.katas.catalogue import kata_by_name

    try:
        return kata_by_name(name)
    except TutorError as e:
        raise _fail(e) from None


def _store():
    from minigpt import paths
    from minigpt.store import Store

    return Store(paths.database_path())


@click.group(short_help="Coding exercises (softmax, attention…) graded by hidden tests.")  # the docstring's "…" ran into click's "..."
def kata() -> None:
    """Coding exercises: write softmax, attention, a KV-cache step… and have them graded."""


@kata.command("list")
def list_katas() -> None:
    """Every kata, in the order of the lessons it practises, with your progress."""
    from minigpt.katas.catalogue import load_katas
    from minigpt.katas.progress import records

    try:
        katas = load_katas()
        mine = records(_store())
    except TutorError as e:
        raise _fail(e) from None
    width = max(len(k.name) for k in katas)
    for k in katas:
        status = mine[k.name].status if k.name in mine else "new"
        click.echo(f"{k.name:<{width}}  {status:<8} {k.title}  [{', '.join(k.lessons)}]")


@kata.command()
@click.argument("name")
def show(name: str) -> None:
    """Print the stub of NAME: save it, write the function, then `minigpt kata check NAME FILE`."""
    click.echo(_kata(name).stub, nl=False)


@kata.command()
@click.argument("name")
def solution(name: str) -> None:
    """Print the reference solution of NAME (recorded as giving up if you have not passed it)."""
    from minigpt.katas.progress import record_solution_shown

    k = _kata(name)
    try:
        record_solution_shown(_store(), k.name)
    except TutorError as e:
        click.echo(printable(f"(not recorded: {e})"), err=True)
    click.echo(k.solution, nl=False)


@kata.command()
@click.argument("name")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def check(name: str, file: Path) -> None:
    """Grade FILE against the hidden tests of NAME: exit 0 when every case passes."""
    from minigpt.katas.progress import record_attempt
    from minigpt.katas.sandbox import grade_source

    k = _kata(name)
    try:
        source = guarded.read_text(file, guarded.TEXT_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {file}: {e}") from None
    report = grade_source(k, source)
    for line in report.lines():
        click.echo(printable(line))
    if report.failures:  # the first failing case in full, on stderr: stdout stays one line per case
        for line in report.failures[0].details().splitlines():
            click.echo(printable(line), err=True)
    try:
        record_attempt(_store(), k.name, passed=report.passed, cases_failed=len(report.failures),
                       cases_total=report.total, source="cli")
    except TutorError as e:
        click.echo(printable(f"(attempt not recorded: {e})"), err=True)
    if not report.passed:
        raise SystemExit(1)
