"""The flashcards screen's files, as a mix-in: e exports every card as an Anki .apkg (in a
worker; the outcome is a notice), i imports cards from a Markdown (Q:/A:) or TSV file typed in the
screen's import panel (``#fc-import``), checked by the serving policy before it is read.

The screen (``tui.study.flashcards``) composes the panel and supplies ``session``, ``current``,
``advance`` and ``refresh_strip``.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from minigpt import paths, serving_policy
from minigpt.errors import CardImportError, MissingExtraError, PolicyRefusal
from minigpt.study.anki import export_apkg, import_file, with_user_cards
from minigpt.text import markup_escape as escape
from tui.saving import keeps_screen
from tui.study.study_card import CardView
from tui.workers import background


def export_path() -> Path:
    return paths.user_data_dir() / "exports" / "minigpt-tutor.apkg"


class FlashcardFiles:
    """The flashcards' export (e) and import (i)."""

    def action_export(self) -> None:
        if self.session is not None:
            self.notify("Exporting…", timeout=1)
            self._export(export_path())

    @background(thread=True, exclusive=True, group="export")
    def _export(self, path: Path) -> None:
        # The outcome is a notice, not a result for this screen: notify is thread-safe, and it
        # reaches the learner even if they left the flashcards while the file was written.
        try:
            result = export_apkg(self.session.deck, path)
        except MissingExtraError as e:  # genanki is the anki extra: the notice names the pip command
            self.notify(f"✗ {escape(str(e))}", severity="error", timeout=10)
            return
        except OSError as e:
            self.notify(f"✗ Export failed: {escape(e)}", severity="error")
            return
        self.last_export = result
        self.notify(escape(result.message), timeout=10)

    def action_import(self) -> None:
        panel = self.query_one("#fc-import")
        panel.display = True
        self.query_one("#fc-import-error", Static).update("")
        self.query_one("#fc-import-path", Input).focus()

    def close_import(self) -> None:
        self.query_one("#fc-import").display = False
        self.query_one(CardView).focus()

    @keeps_screen
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "fc-import-path" or self.session is None:
            return
        error = self.query_one("#fc-import-error", Static)
        raw = event.value.strip()
        if not raw:
            error.update("✗ Type the path of a .md, .txt or .tsv file.")
            return
        try:
            path = serving_policy.check_path(raw)  # before looking: a refusal tells nothing of outside files
        except PolicyRefusal as e:
            error.update(f"✗ {escape(str(e))}")
            return
        if not path.is_file():
            error.update(f"✗ No file at {escape(str(path))}")
            return
        try:
            ids = import_file(self.app.store, path)
        except (CardImportError, UnicodeDecodeError, OSError) as e:
            error.update(f"✗ {escape(str(e))}")  # the path stays in the field to fix and retry
            return
        self.session.deck = with_user_cards(self.session.deck, self.app.store)
        event.input.value = ""
        self.close_import()
        self.notify(f"Imported {len(ids)} cards from {escape(path.name)}; new ones join the queue")
        if self.current is None:
            self.advance()
        else:
            self.refresh_strip()
