"""``minigpt progress``: interview readiness per lesson, the overall figure and the weakest three,
then the past mock interviews charted over time (score, and the readiness each started from).

Torch-free: it reads the progress database, the lessons, the decks (numeric cards described, not
computed) and the katas. ``--json`` prints the same figures for scripts.
"""

from __future__ import annotations

import json

import click

from minigpt.cli.support import _fail
from minigpt.errors import TutorError


@click.command("progress")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def progress(as_json: bool) -> None:
    """How ready you are for an interview, lesson by lesson (read, quiz, recall, katas)."""
    from minigpt import paths
    from minigpt.katas.catalogue import load_katas
    from minigpt.katas.history import lesson_katas
    from minigpt.store import Store
    from minigpt.study.days import today
    from minigpt.study.decks import load_decks
    from minigpt.study.interview import day_line
    from minigpt.study.interview_trend import chart_text, points
    from minigpt.study.plan import plan_settings
    from minigpt.study.readiness import readiness_for_store, table

    try:
        store = Store(paths.database_path())
        try:
            try:
                katas = lesson_katas(store, load_katas(), names=True)
            except TutorError:  # a broken kata folder leaves the katas part out
                katas = {}
            r = readiness_for_store(store, katas, deck=load_decks(numbers=False))
            past = points(store)
            day, scope = plan_settings(store)
        finally:
            store.close()
    except TutorError as e:
        raise _fail(e) from e
    if as_json:
        interviews = [{"started_at": p.started_at, "score": round(p.score, 4), "questions": p.questions,
                       "readiness": None if p.readiness is None else round(p.readiness, 4)} for p in past]
        click.echo(json.dumps({**r.as_dict(), "interview_day": day.isoformat() if day else None,
                               "plan_lessons": list(scope), "interviews": interviews}, indent=2))
        return
    click.echo(table(r))
    if day:  # readiness is what the plan raises: say where that plan is
        click.echo(f"\n{day_line(day, today())}: `minigpt plan` paces the study to it.")
    else:
        click.echo("\nNo interview day set: `minigpt plan --date YYYY-MM-DD` plans the study to one.")
    if past:  # 72 columns by 12 lines: it reads in an 80×24 terminal
        click.echo("\nMock interviews\n" + chart_text(past, width=72, height=12))
