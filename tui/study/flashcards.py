"""Flashcard review: the due cards one by one, rated 1-4 with FSRS (minigpt.study.review).

Every rating is one database transaction, so quitting at any moment keeps every answer. Cram mode
reviews ahead: answers are logged as "cram" and the schedule is not touched; the quiz opens this
screen in cram mode over the cards a round missed. `u` only undoes this window's own answers.
Export (e) and import (i) are the mix-in ``tui.study.flashcard_files``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from minigpt.errors import DeckError, UndoError
from minigpt.study.anki import with_user_cards
from minigpt.study.decks import cached_decks
from minigpt.study.formats import RATING_NAMES
from minigpt.study.review import LEARN_AHEAD, StudySession
from minigpt.study.scheduler import describe_time
from minigpt.study.templates import fresh
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.common.header import TutorHeader
from tui.saving import keeps_screen, tell_study_notes
from tui.study.flashcard_files import FlashcardFiles
from tui.study.study_card import CardView, RatingBar


class FlashcardsScreen(FlashcardFiles, Screen):
    # 1-4 are not in the footer: the rating buttons show them with their intervals.
    BINDINGS = [
        Binding("escape", "back", "Back", id="flashcards.back"),
        Binding("space", "reveal", "Show answer", show=True, id="flashcards.reveal"),
        Binding("1", "rate(1)", "Again", show=False, id="flashcards.again"),
        Binding("2", "rate(2)", "Hard", show=False, id="flashcards.hard"),
        Binding("3", "rate(3)", "Good", show=False, id="flashcards.good"),
        Binding("4", "rate(4)", "Easy", show=False, id="flashcards.easy"),
        Binding("u", "undo", "Undo", show=True, id="flashcards.undo"),
        Binding("s", "suspend", "Suspend", show=True, id="flashcards.suspend"),
        Binding("b", "bury", "Bury", show=False, id="flashcards.bury"),
        Binding("f", "flag", "Question wrong?", show=False, id="flashcards.flag"),
        Binding("c", "toggle_cram", "Cram", show=True, id="flashcards.toggle_cram"),
        Binding("l", "suspend_leech", "Suspend leech", show=False, id="flashcards.suspend_leech"),
        Binding("e", "export", "Export .apkg", show=False, id="flashcards.export"),
        Binding("i", "import", "Import", show=False, id="flashcards.import"),
        Binding("o", "toggle_read_only", "New: read lessons only", show=False, id="flashcards.toggle_read_only"),
        Binding("plus", "new_limit(5)", "More new/day", key_display="+", show=False, id="flashcards.more_new"),
        Binding("minus", "new_limit(-5)", "Fewer new/day", key_display="-", show=False, id="flashcards.fewer_new"),
    ]

    def __init__(self, review: list[str] | None = None) -> None:
        super().__init__()
        self.session: StudySession | None = None
        self.review = list(review or [])  # card ids to go through at once (missed in a quiz)
        self.cram = bool(self.review)
        self.cram_ids: list[str] = list(self.review)
        self.cram_pos = 0
        self.current: str | None = None
        self.previous: str | None = None  # the card shown last: its siblings do not come next
        self.leech: str | None = None     # a card that just reached 8 lapses, awaiting a decision
        self.undo_stack: list[tuple[str, str]] = []  # ("rate", id) | ("suspend", id), this visit
        self._shown_at = time.monotonic()
        self._wake = None  # the timer that shows the next card when it comes due (empty screen)

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="fc-counts")
        yield CardView(id="fc-card")
        yield Static(id="fc-leech")
        yield RatingBar(id="fc-ratings")
        with Vertical(id="fc-import"):
            yield Static("Import cards from a Markdown (Q:/A:) or TSV (front<TAB>back) file. "
                         "enter: import · escape: cancel", id="fc-import-help")
            yield Input(placeholder="path/to/cards.md", id="fc-import-path")
            yield Static(id="fc-import-error")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Flashcards"
        self.query_one("#fc-import").display = False
        self.query_one("#fc-leech").display = False
        try:
            deck = with_user_cards(cached_decks(), self.app.store)
        except DeckError as e:
            self.query_one("#fc-counts", Static).update(f"✗ A deck file could not be read: {escape(str(e))}")
            self.query_one(CardView).show(None, empty_text="Fix the deck file and reopen Flashcards.")
            return
        self.session = StudySession(self.app.store, deck)
        self.cram_ids = [c for c in self.cram_ids if c in deck.cards]
        self.query_one(CardView).focus()
        self.advance()
        tell_study_notes(self)

    # -- drawing ------------------------------------------------------------------------------
    def advance(self) -> None:
        """Show the next card of the queue (or of the cram list)."""
        if self.session is None:
            return
        if self.cram:
            while self.cram_pos < len(self.cram_ids) and self.session.status(
                    self.cram_ids[self.cram_pos]).suspended:
                self.cram_pos += 1
            self.current = self.cram_ids[self.cram_pos] if self.cram_pos < len(self.cram_ids) else None
        else:
            self.current = self.session.next_card(after=self.previous)
        self.show_current()

    def show_current(self) -> None:
        view = self.query_one(CardView)
        if self.current is None:
            if self.review:
                done = "Every missed card reviewed. escape: back to the quiz"
            elif self.cram:
                done = "Cram list finished. c: back to the scheduled review."
            else:
                done = ("Nothing to study right now: every due card is done."
                        + self._wait_for_next() +
                        " c: cram (review ahead) · o: new cards only from lessons read · escape: back")
            view.show(None, empty_text=done)
        else:
            view.show(fresh(self.session.deck[self.current]))  # generative cards: new inputs each time
            self.previous = self.current
        self._shown_at = time.monotonic()
        self.refresh_strip()
        self.refresh_bindings()

    def _wait_for_next(self) -> str:
        """Come back to life when the next card comes due (learn-ahead included); say when."""
        if self._wake is not None:
            self._wake.stop()
            self._wake = None
        due = self.session.next_due()
        if due is None:
            return ""
        delay = (due - LEARN_AHEAD - datetime.now(UTC)).total_seconds()
        self._wake = self.set_timer(min(max(delay, 1.0), 3600.0), self._woken)
        return f" The next card comes due {describe_time(due)}."

    def _woken(self) -> None:
        self._wake = None
        if self.current is None and not self.cram:
            self.advance()

    def refresh_strip(self) -> None:
        s = self.session
        c = s.counts()
        limit = s.new_per_day()
        only_read = " · read lessons only" if s.new_from_read_lessons() else ""
        plan = s.plan()
        today = (f"interview plan: new today {plan.new_done_today}/{plan.new_share_today}" if plan is not None
                 else f"new today {s.new_introduced_today()}/{limit}{only_read}")
        katas = f" · Katas due [b]{c.katas}[/b]" if c.katas else ""  # solved on the kata screen
        text = (f"New [b]{c.new}[/b] · Learning [b]{c.learning}[/b] · Due [b]{c.due}[/b]{katas}"
                f"   [dim]{today}[/dim]")
        strip = self.query_one("#fc-counts", Static)
        if self.cram:  # one line at 80 columns: the scheduled counts stay visible for reference
            what = "[b]MISSED[/b] quiz cards" if self.review else "[b]CRAM[/b] review ahead"
            text = (f"{what}, schedule untouched · "
                    f"{min(self.cram_pos + 1, len(self.cram_ids))}/{len(self.cram_ids)} │ "
                    f"new {c.new} · learning {c.learning} · due {c.due}")
        strip.set_class(self.cram, "-cram")
        strip.update(text)
        view = self.query_one(CardView)
        bar = self.query_one(RatingBar)
        if self.current is None or not view.revealed:
            bar.set_labels(None)
        elif self.cram:
            bar.set_labels({r: f"{n} · cram" for r, n in RATING_NAMES.items()})
        else:
            bar.set_labels(s.button_labels(self.current))
        leech = self.query_one("#fc-leech", Static)
        leech.display = self.leech is not None
        if self.leech is not None:
            card = s.deck[self.leech]
            st = s.status(self.leech)
            where = Path(card.source).name if card.source else "your imported file"
            leech.update(
                f"⚠ Leech: “{escape(card.front[:60])}” has been forgotten {st.lapses} times. "
                f"Rewrite it in {escape(where)} (your progress stays with it) "
                f"or press [b]l[/b] to suspend it. Rating the next card dismisses this.")

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("rate", "reveal", "suspend", "bury", "flag") and (
                self.session is None or self.current is None):
            return False  # no card: these keys leave the footer rather than do nothing
        if action == "rate" and not self.query_one(CardView).revealed:
            return False
        if action == "reveal" and self.query_one(CardView).revealed:
            return False
        if action in ("undo", "toggle_cram", "export", "import", "toggle_read_only", "new_limit") \
                and self.session is None:
            return False
        if action == "suspend_leech":
            return self.leech is not None
        return True

    # -- actions ------------------------------------------------------------------------------
    def action_back(self) -> None:
        if self.query_one("#fc-import").display:
            self.close_import()
        else:
            self.app.pop_screen()

    def action_reveal(self) -> None:
        view = self.query_one(CardView)
        if self.current is not None and not view.revealed:
            view.revealed = True
            self.refresh_strip()
            self.refresh_bindings()

    def on_rating_bar_rated(self, event: RatingBar.Rated) -> None:
        self.action_rate(event.rating)

    @keeps_screen
    def action_rate(self, rating: int) -> None:
        if self.current is None or not self.query_one(CardView).revealed:
            return
        card_id = self.current
        ms = int((time.monotonic() - self._shown_at) * 1000)
        if self.cram:
            self.session.cram(card_id, rating, duration_ms=ms)
            self.cram_pos += 1
        else:
            before = self.session.status(card_id).lapses
            after = self.session.rate(card_id, rating, duration_ms=ms)
            self.leech = card_id if after.is_leech and after.lapses > before else None
        self.undo_stack.append(("rate", card_id))
        self.notify(f"{RATING_NAMES[rating]} ({rating})" + (" · cram, not scheduled" if self.cram else ""),
                    timeout=1)
        self.advance()

    @keeps_screen
    def action_undo(self) -> None:
        if self.session is None:
            return
        if self.undo_stack and self.undo_stack[-1][0] == "suspend":
            _, card_id = self.undo_stack.pop()
            self.session.suspend(card_id, False)
            self.notify("Suspension undone")
        else:
            try:
                card_id = self.session.undo()
            except UndoError as e:
                self.notify(f"Not undone: {e}", severity="warning")
                return
            if card_id is None:
                self.notify("Nothing of yours to undo in this window")
                return
            if self.undo_stack:
                self.undo_stack.pop()
            if self.cram and self.cram_pos > 0 and self.cram_ids[self.cram_pos - 1] == card_id:
                self.cram_pos -= 1
            self.notify("Last rating undone")
        if self.leech == card_id:
            self.leech = None
        self.current = card_id  # the undone card comes back, answer hidden
        self.show_current()

    @keeps_screen
    def action_suspend(self) -> None:
        if self.current is None:
            return
        self.session.suspend(self.current)
        self.undo_stack.append(("suspend", self.current))
        self.notify("Suspended: it leaves every queue (u undoes)")
        if self.cram:
            self.cram_pos += 1
        self.advance()

    def action_flag(self) -> None:
        """This question is wrong: flag the card with a note; it leaves the queue until reviewed."""
        if self.current is not None:
            card_id = self.current
            navigation.open_screen(self.app, "flag_note", card_id,
                                   callback=lambda done: self._flagged(card_id, done))

    def _flagged(self, card_id: str, done: bool | None) -> None:
        if done and card_id == self.current:
            self.notify("Flagged: out of your queue until resolved (ctrl+p Flagged cards)")
            if self.cram:
                self.cram_pos += 1
            self.advance()

    @keeps_screen
    def action_suspend_leech(self) -> None:
        if self.leech is None:
            return
        self.session.suspend(self.leech)
        self.undo_stack.append(("suspend", self.leech))
        self.notify("Leech suspended (u undoes)")
        self.leech = None
        self.advance()

    @keeps_screen
    def action_bury(self) -> None:
        if self.current is None:
            return
        until = self.session.bury(self.current)
        self.notify(f"Buried until {describe_time(until)}")
        if self.cram:
            self.cram_pos += 1
        self.advance()

    def action_toggle_cram(self) -> None:
        if self.session is None:
            return
        self.cram = not self.cram
        self.review = []
        if self.cram:
            self.cram_ids, self.cram_pos = self.session.cram_queue(), 0
            self.notify("Cram mode: reviewing ahead; answers are logged but the schedule is untouched")
        else:
            self.notify("Back to the scheduled review")
        self.advance()

    @keeps_screen
    def action_toggle_read_only(self) -> None:
        if self.session is None:
            return
        on = not self.session.new_from_read_lessons()
        self.session.set_new_from_read_lessons(on)
        self.notify("New cards only from lessons you have read" if on else
                    "New cards from every lesson, in lesson order")
        if not self.cram and self.current is None:
            self.advance()
        else:
            self.refresh_strip()

    @keeps_screen
    def action_new_limit(self, step: int) -> None:
        if self.session is None:
            return
        self.session.set_new_per_day(self.session.new_per_day() + step)
        self.notify(f"New cards per day: {self.session.new_per_day()}")
        if not self.cram and self.current is None:
            self.advance()
        else:
            self.refresh_strip()
