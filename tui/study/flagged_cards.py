"""The cards flagged "this question is wrong", read and resolved in the app (ctrl+p "Flagged cards").

Each open flag shows its card's question, answer, lesson, note and date; ``r`` resolves the one
highlighted, so it counts again everywhere (minigpt.study.flags.left_out), as ``minigpt cards
--resolve CARD_ID`` does. A classroom or browser learner has no command line: this is their way.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from minigpt.errors import DeckError
from minigpt.study import flags
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader
from tui.saving import keeps_screen


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


class FlaggedCardsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="flagged_cards.back"),
        Binding("r", "resolve", "Resolve (it counts again)", show=True, id="flagged_cards.resolve"),
    ]
    PALETTE_PREFIX = "Flagged cards"

    def __init__(self) -> None:
        super().__init__()
        self.found: list[flags.Flag] = []
        self.deck = None

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="flagged-summary")
        yield OptionList(id="flagged-list")
        yield Static(id="flagged-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Flagged cards"
        from minigpt.study.anki import with_user_cards
        from minigpt.study.decks import cached_decks

        try:
            self.deck = with_user_cards(cached_decks(), self.app.store)
        except (DeckError, OSError):  # reported on the flashcards screen; the ids still show
            self.deck = None
        self.fill()
        self.query_one(OptionList).focus()

    def fill(self) -> None:
        self.found = flags.flags(self.app.store)
        n = len(self.found)
        self.query_one("#flagged-summary", Static).update(
            f"[b]{n} card{'s' * (n != 1)} flagged as wrong[/b] · out of quizzes, interviews, readiness "
            "and the plan until resolved" if n else
            "No card is flagged. In flashcards (f) or a quiz (ctrl+f) a card you think is wrong can be.")
        options = self.query_one(OptionList)
        options.clear_options()
        for f in self.found:
            card = self.deck.get(f.card_id) if self.deck is not None else None
            question = _one_line(card.front, 60) if card is not None else "(no longer in the decks)"
            options.add_option(Option(f"{escape(question)}\n  [dim]{escape(f.card_id)}[/dim]", id=f.card_id))
        if self.found:
            options.highlighted = 0
        self.show_detail()

    def highlighted(self) -> flags.Flag | None:
        index = self.query_one(OptionList).highlighted
        return self.found[index] if index is not None and index < len(self.found) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show_detail()

    def show_detail(self) -> None:
        f = self.highlighted()
        detail = self.query_one("#flagged-detail", Static)
        if f is None:
            detail.update("")
            return
        card = self.deck.get(f.card_id) if self.deck is not None else None
        lines = [f"[b]Note[/b] {escape(f.note or '(none)')} · flagged {escape(f.flagged_at[:10])}"]
        if card is not None:
            lines += [f"[b]Answer[/b] {escape(_one_line(card.back, 200))}",
                      f"[dim]lesson {escape(card.lesson or '-')} · deck file {escape(Path(str(card.source)).name)}[/dim]"]
        detail.update("\n".join(lines))

    @keeps_screen
    def action_resolve(self) -> None:
        f = self.highlighted()
        if f is None:
            self.notify("No flagged card to resolve.")
            return
        flags.resolve_flag(self.app.store, f.card_id)
        self.notify(f"{f.card_id}: resolved; it counts again.")
        self.fill()
