"""``minigpt cards --flagged``: the cards learners flagged as wrong, listed (the default) or written
as Markdown; each listed with its question and how to resolve it.

Torch-free: it reads the progress database and the decks only.
"""

from __future__ import annotations

from pathlib import Path

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError, UnsafeFileError
from minigpt.outputs import check_output, write_output
from minigpt.text import printable


@click.command("cards")
@click.option("--flagged", is_flag=True, help="List the cards flagged as wrong (open flags; the default).")
@click.option("--export", "export", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the flagged cards as a Markdown report to this file.")
@click.option("--resolve", "resolve", metavar="CARD_ID", default=None,
              help="Mark one card's flag reviewed: it counts again.")
def cards(flagged: bool, export: Path | None, resolve: str | None) -> None:
    """Flashcards that learners flagged with "this question is wrong"."""
    from minigpt import paths
    from minigpt.store import Store
    from minigpt.study import flags
    from minigpt.study.decks import load_decks

    flagged = flagged or not (export or resolve)  # the listing is what a bare `minigpt cards` asks
    if export:  # before anything is read: a path that cannot be an output is refused at once
        _check_export(export)
    try:
        store = Store(paths.database_path())
        try:
            if resolve:
                if not flags.resolve_flag(store, resolve):
                    raise UserError(f"card {resolve!r} has no open flag")
                click.echo(f"Resolved the flag on {printable(resolve)}.")
            found = flags.flags(store)
        finally:
            store.close()
        deck = load_decks(numbers=False)  # torch-free: numeric cards described, not computed
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    if flagged:
        if not found:
            click.echo("No flagged cards.")
        for f in found:
            card = deck.get(f.card_id)
            where = f" ({card.lesson})" if card is not None else " (no longer in the decks)"
            # the card id, note and question come from files a shared copy may have crafted
            click.echo(printable(f"{f.card_id}{where} · {f.flagged_at[:10]}" + (f" · {f.note}" if f.note else "")))
            if card is not None:
                question = " ".join(card.front.split())
                click.echo(printable(f"  Q: {question if len(question) <= 74 else question[:73] + '…'}"))
        if found:
            click.echo("Resolve one (it counts again): minigpt cards --resolve CARD_ID, "
                       "or r on the Flagged cards screen (ctrl+p)")
    if export:
        try:
            write_output(export, flags.markdown_report(found, deck) + "\n", f"the report {export.name}")
        except OSError as e:
            raise _cannot_write(export, e) from None
        click.echo(f"Wrote {len(found)} flagged card{'s' * (len(found) != 1)} to {printable(export)}.")


def _check_export(export: Path) -> None:
    try:
        check_output(export)
    except OSError as e:
        raise _cannot_write(export, e) from None


def _cannot_write(export: Path, e: OSError) -> UserError:
    return UserError(f"cannot write {e}" if isinstance(e, UnsafeFileError) else f"cannot write {export}: {e.strerror or e}")
