"""``minigpt plan``: study to a date. ``--date`` (and ``--lessons``) set the interview day kept in
the progress database, ``--new-per-day`` the new cards a day it paces to (the flashcards' setting);
every call prints the plan day by day, and a changed scope says what it replaced. Torch-free
(numeric cards are described, not computed: the plan needs their ids only)."""

from __future__ import annotations

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError


@click.command("plan")
@click.option("--date", "day", metavar="YYYY-MM-DD", default=None, help="Set the interview day (a local date).")
@click.option("--lessons", default=None, metavar="ID[,ID…]",
              help="The lessons in scope, comma-separated (default: every lesson; \"\" for every lesson).")
@click.option("--new-per-day", "new_per_day", type=int, default=None, metavar="N",
              help="Set the new cards a day (the flashcards' setting the plan paces to).")
@click.option("--clear", is_flag=True, help="Remove the date: study as usual.")
def plan(day: str | None, lessons: str | None, new_per_day: int | None, clear: bool) -> None:
    """Study to a date: every card of the chosen lessons fresh (≥ 90%) on the interview day."""
    from minigpt import paths, settings
    from minigpt.lessons import load_lessons
    from minigpt.store import Store
    from minigpt.study import plan as planning
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import load_decks
    from minigpt.study.review import StudySession

    said: list[str] = []
    try:
        store = Store(paths.database_path())
        try:
            if new_per_day is not None and not settings.NEW_PER_DAY.valid(new_per_day):
                raise UserError(f"--new-per-day {new_per_day}: new cards a day is "
                                f"{settings.NEW_PER_DAY.accepts}")
            if clear:
                planning.set_plan(store, None)
                click.echo("No interview date: studying as usual.")
                return
            current, before = planning.plan_settings(store)
            scope = before
            if lessons is not None:
                scope = tuple(x.strip() for x in lessons.split(",") if x.strip())
            target = planning.parse_date(day) if day else current
            if target is None and new_per_day is None:
                raise UserError("no interview date set: give one with --date YYYY-MM-DD")
            if target is None:
                settings.set(store, settings.NEW_PER_DAY, new_per_day)
                click.echo(f"New cards a day: {new_per_day} (no interview date set: "
                           "minigpt plan --date YYYY-MM-DD plans to one)")
                return
            deck = with_user_cards(load_decks(numbers=False), store)
            session = StudySession(store, deck, lesson_order={l.id: l.order for l in load_lessons()})
            pace = session.new_per_day() if new_per_day is None else new_per_day
            made = planning.make_plan(store, deck, target, lessons=scope, new_per_day=pace,
                                      scheduler=session.scheduler, lesson_order=session.lesson_order)
            if new_per_day is not None:  # once the plan is made: a refused date changes nothing
                settings.set(store, settings.NEW_PER_DAY, new_per_day)
                said.append(f"New cards a day: {new_per_day}")
            if day or lessons is not None:
                planning.set_plan(store, target, scope)
                if current is not None:  # a scope set before is replaced, not added to: say so
                    said.append(planning.scope_change(before, scope))
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    for line in [x for x in said if x] + planning.describe(made):
        click.echo(line)
