"""``minigpt explain CARD_ID --answer TEXT``: the offline rubric check from the shell.

Prints the checklist points the answer makes (✓) and those it misses (✗), or with ``--json`` one
object ``{"found": [...], "missed": [...]}`` holding each point's checklist text, for scripting.
Torch-free: it reads the decks only (numeric cards described, not computed) and writes nothing.
"""

from __future__ import annotations

import json

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError
from minigpt.text import printable


@click.command("explain")
@click.argument("card_id")
@click.option("--answer", "answer", required=True, metavar="TEXT", help="Your answer, in your own words.")
@click.option("--json", "as_json", is_flag=True, help='Print {"found": [...], "missed": [...]}.')
def explain(card_id: str, answer: str, as_json: bool) -> None:
    """Check an explain answer against CARD_ID's checklist, offline: points made and missed."""
    from minigpt.study.decks import load_decks
    from minigpt.study.rubric import alias_table, check

    try:
        deck = load_decks(numbers=False)
    except TutorError as e:
        raise _fail(e) from None
    card = deck.get(card_id)
    if card is None or not card.checklist:
        what = "no card" if card is None else "a card without a checklist (not an explain question)"
        raise UserError(f"{card_id!r} is {what}; explain questions are the deck's question cards")
    if not answer.strip():
        raise UserError("the answer is empty: write it after --answer")
    result = check(card, answer, alias_table(deck))
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    for i, point in enumerate(result.points):
        click.echo(printable(f"{'✓' if i in result.found else '✗'} {point}"))
    click.echo(f"{len(result.found)} of {len(result.points)} points found")
