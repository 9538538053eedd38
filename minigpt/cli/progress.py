"""``minigpt progress``: interview readiness per lesson, the overall figure and the weakest three.

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
    from minigpt.katas.progress import lesson_katas
    from minigpt.store import Store
    from minigpt.study.decks import load_decks
    from minigpt.study.readiness import readiness_for_store, table

    try:
        store = Store(paths.database_path())
        try:
            try:
                katas = lesson_katas(store, load_katas())
            except TutorError:  # a broken kata folder leaves the katas part out
                katas = {}
            r = readiness_for_store(store, katas, deck=load_decks(numbers=False))
        finally:
            store.close()
    except TutorError as e:
        raise _fail(e) from e
    click.echo(json.dumps(r.as_dict(), indent=2) if as_json else table(r))
