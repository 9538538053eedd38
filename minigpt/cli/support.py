"""What every ``minigpt`` command shares: turning a ``TutorError`` into one ``Error:`` line (exit
status 2), the ``--data-dir`` option, and small formatting helpers. Torch-free."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from minigpt.errors import TutorError
from minigpt.text import printable


class UserError(click.ClickException, TutorError):
    """A refusal the CLI prints as one ``Error: …`` line with exit status 2."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(printable(message))  # paths and file contents end up in messages


def _fail(e: Exception) -> UserError:
    """One ``Error:`` line with all of the message: a line break inside a path (a folder named
    ``a\nb``) shows as ``␊`` through ``printable`` instead of cutting the reason off after it."""
    return UserError(str(e).strip() or type(e).__name__)


def apply_data_dir(data_dir: Path | None) -> None:
    """Point the per-user folders (progress, settings, runs) at ``data_dir`` for this process."""
    if data_dir is not None:
        os.environ["MINIGPT_DATA_DIR"] = str(data_dir.expanduser().resolve())
    from minigpt import paths

    try:  # one clear line now, rather than a traceback from whichever command first needs it
        paths.user_data_dir()
    except OSError as e:
        raise UserError(f"cannot use {os.environ.get('MINIGPT_DATA_DIR') or 'the data folder'} "
                        f"for progress and runs: {e.strerror or e}") from None


def study_notes() -> list[str]:
    """What the study modules had to work around in this command, one line each: rows of the
    progress database left out, a machine time zone replaced by UTC. Read only from modules
    already imported (a command that never read the study imports nothing here)."""
    notes = []
    rows, days = sys.modules.get("minigpt.skipped_rows"), sys.modules.get("minigpt.study.days")
    if rows is not None and (skipped := rows.take_skipped_note()):
        notes.append(skipped)
    if days is not None and (zone := days.zone_warning()):
        notes.append(zone)
    return notes


def tell_study_notes_on_close(ctx: click.Context) -> None:
    """Print :func:`study_notes` on stderr once the command has run (or failed)."""
    ctx.call_on_close(lambda: [click.echo(f"note: {printable(note)}", err=True) for note in study_notes()])


data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder for progress, settings and training runs (default: the per-user data folder).")


def loss_text(value) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "–"
