"""``minigpt plan``: study to a date. ``--date`` (and ``--lessons``) set the interview day kept in
the progress database; every call prints the plan day by day. Torch-free (numeric cards are
described, not computed: the plan needs their ids only)."""

from __future__ import annotations

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError


def plan_lines(plan) -> list[str]:
    """The plan as lines of text: a summary, what cannot be met, then one line a day."""
    scope = ", ".join(plan.lessons) if plan.lessons else "every lesson"
    lines = [f"Interview on {plan.interview:%a %Y-%m-%d}, in {plan.days_left} day{'s' * (plan.days_left != 1)}: "
             f"{plan.in_scope} cards ({scope})",
             "On track: every card ≥ 90% on the day, if you study each day's share." if plan.feasible
             else "Not on track: " + " ".join(plan.problems)]
    if plan.days:
        lines += ["", f"{'day':<15} {'new':>4} {'reviews':>8} {'(ahead)':>8} {'total':>6}"]
        for i, d in enumerate(plan.days):
            label = "today" if i == 0 else f"{d.day:%a %Y-%m-%d}"
            ahead = f"({d.ahead})" if d.ahead else ""
            lines.append(f"{label:<15} {d.new:>4} {d.reviews:>8} {ahead:>8} {d.load:>6}")
        lines += ["", "ahead: reviews brought forward so the card is fresh on the day; new today "
                      f"{plan.new_done_today} of {plan.new_share_today} done"]
    return lines


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
    for line in plan_lines(made):
        click.echo(line)
