"""``minigpt kata``: the coding exercises from the shell, for people who prefer their own editor.

``list``, ``show`` and ``solution`` read the kata folders only (no torch); ``due`` lists the passed katas
FSRS brings back (``minigpt.study.kata_cards``); ``check`` grades a file
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
    from minigpt.katas.history import records

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
    from minigpt.katas.history import record_solution_shown

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
    from minigpt.katas.history import record_attempt
    from minigpt.katas.sandbox import grade_source

    k = _kata(name)
    try:
        source = guarded.read_text(file, guarded.TEXT_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {file}: {e}") from None
    report = grade_source(k, source)
    store = _store()
    was_due = _due_before(store, k.name)
    for line in report.lines():
        click.echo(printable(line))
    if report.failures:  # the first failing case in full, on stderr: stdout stays one line per case
        for line in report.failures[0].details().splitlines():
            click.echo(printable(line), err=True)
    try:
        record_attempt(store, k.name, passed=report.passed, cases_failed=len(report.failures),
                       cases_total=report.total, source="cli")
        from minigpt.study import kata_cards

        if was_due is not None:
            _rate_resolve(store, k.name, was_due, report)
        else:
            kata_cards.sync_passed(store)  # a first pass makes the kata a card
    except TutorError as e:
        click.echo(printable(f"(attempt not recorded: {e})"), err=True)
    if not report.passed:
        raise SystemExit(1)


def _due_before(store, name: str):
    """The due time of NAME's card when it is due now (this check is then its re-solve), else None."""
    from minigpt.study import kata_cards

    try:
        kata_cards.sync_passed(store)
        card = kata_cards.card(store, name)
    except TutorError:
        return None
    return card.due if card is not None and card.is_due() else None


def _rate_resolve(store, name: str, due, report) -> None:
    """A check of a due kata from the shell: a named mistake rates Again at once; a pass rates Good,
    or Hard when a check since it came due failed. A failure with no named mistake waits for the
    next check (the shell knows neither hints nor the time spent)."""
    from minigpt.study import kata_cards, scheduler

    named = report.failures[0].mistake if report.failures else None
    if not report.passed and named is None:
        return
    failed_since = store.conn.execute(
        "SELECT COUNT(*) FROM kata_attempts WHERE kata = ? AND passed = 0 AND attempted_at >= ?",
        (name, scheduler.iso(due))).fetchone()[0]
    rating, why = kata_cards.rating_for(passed=report.passed, named_mistake=named is not None, hints=0,
                                        failed_checks=failed_since)
    card = kata_cards.rate(store, name, rating, why=why, source="cli")
    click.echo(f"Re-solve rated {scheduler.RATING_NAMES[rating]} ({why}); next due {scheduler.describe_time(card.due)}.")


@kata.command("due")
@click.option("--all", "show_all", is_flag=True, help="Also list the passed katas not yet due.")
def due_katas(show_all: bool) -> None:
    """Passed katas due to be solved again from the stub, with their due dates."""
    from minigpt.study import kata_cards, scheduler

    now = scheduler.utc_now()
    try:
        store = _store()
        kata_cards.sync_passed(store)
        mine = sorted(kata_cards.cards(store).values(), key=lambda c: c.due)
    except TutorError as e:
        raise _fail(e) from None
    due = [c for c in mine if c.is_due(now)]
    shown = mine if show_all else due
    if not shown:
        click.echo("No kata is due." + ("" if mine else " A kata you pass comes back here when it is due."))
        return
    width = max(len(c.kata) for c in shown)
    for c in shown:
        when = "due now" if c.is_due(now) else "due " + scheduler.describe_time(c.due, now)
        click.echo(printable(f"{c.kata:<{width}}  {when:<28} (since {c.due:%Y-%m-%d %H:%M} UTC)"
                             if c.is_due(now) else f"{c.kata:<{width}}  {when}"))
    if due:
        click.echo(f"{len(due)} due: solve each again from the stub (`minigpt kata show NAME`), "
                   f"then `minigpt kata check NAME FILE`.")
