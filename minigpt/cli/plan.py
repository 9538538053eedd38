"""``minigpt plan``: study to a date. ``--date`` (and ``--lessons``) set the interview day kept in
the progress database; every call prints the plan day by day. Torch-free (numeric cards are
described, not computed: the plan needs their ids only)."""

from __future__ import annotations

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError


@click.command("plan")
@click.option("--date", "day", metavar="YYYY-MM-DD", default=None, help="Set the interview day (a local date).")
@click.option("--lessons", default=None, metavar="ID[,ID…]",
              help="The lessons in scope, comma-separated (default: every lesson; \"\" for every lesson).")
@click.option("--clear", is_flag=True, help="Remove the date: study as usual.")
def plan(day: str | None, lessons: str | None, clear: bool) -> None:
    """Study to a date: every card of the chosen lessons fresh (≥ 90%) on the interview day."""
    from minigpt import paths
    from minigpt.lessons import load_lessons
    from minigpt.store import Store
    from minigpt.study import plan as planning
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import load_decks
    from minigpt.study.review import StudySession

    try:
        store = Store(paths.database_path())
        try:
            if clear:
                planning.set_plan(store, None)
                click.echo("No interview date: studying as usual.")
                return
            current, scope = planning.plan_settings(store)
            if lessons is not None:
                scope = tuple(x.strip() for x in lessons.split(",") if x.strip())
            target = planning.parse_date(day) if day else current
            if target is None:
                raise UserError("no interview date set: give one with --date YYYY-MM-DD")
            deck = with_user_cards(load_decks(numbers=False), store)
            session = StudySession(store, deck, lesson_order={l.id: l.order for l in load_lessons()})
            made = planning.make_plan(store, deck, target, lessons=scope, new_per_day=session.new_per_day(),
                                      scheduler=session.scheduler, lesson_order=session.lesson_order)
            if day or lessons is not None:
                planning.set_plan(store, target, scope)
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    for line in planning.describe(made):
        click.echo(line)
