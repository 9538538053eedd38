"""Widgets of the flashcard review: the card (front, then the answer) and the four rating buttons.

They only draw what ``minigpt.study`` computed; the screen decides what happens on a key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Static

from minigpt.study.cards import StudyCard
from minigpt.text import markup_escape as escape

KIND_LABELS = {
    "term": "term → definition",
    "reverse": "definition → term",
    "question": "question",
    "cloze": "fill the blank",
    "numeric": "numbers",
    "user": "your card",
}


def card_title(card: StudyCard) -> str:
    """A name for a card in lists (stats, leeches): its term and direction, or its question."""
    if card.kind in ("term", "reverse"):
        return f"{card.term} ({KIND_LABELS[card.kind]})"
    return " ".join(card.front.split())


def card_front(card: StudyCard) -> str:
    return escape(card.front, prose=True)  # a card's sides are prose: the joiners scripts need stay


def card_back(card: StudyCard) -> str:
    """The answer side; a question also lists its checklist, a number its worked solution."""
    text = escape(card.back, prose=True)
    if card.checklist:
        text += "\n\n[b]Checklist[/b]\n" + "\n".join(f" • {escape(c, prose=True)}" for c in card.checklist)
    return text


class CardView(VerticalScroll):
    """One card: the front always, the back once ``revealed`` is set."""

    revealed: reactive[bool] = reactive(False)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.card: StudyCard | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="card-kind")
        yield Static(id="card-front")
        yield Static(id="card-back")

    def show(self, card: StudyCard | None, *, empty_text: str = "") -> None:
        self.card = card
        self.revealed = False
        kind = self.query_one("#card-kind", Static)
        front = self.query_one("#card-front", Static)
        if card is None:
            kind.update("")
            front.update(empty_text)
        else:
            kind.update(f"[dim]{KIND_LABELS.get(card.kind, card.kind)}[/dim]")
            front.update(card_front(card))
        self._draw_back()
        self.scroll_home(animate=False)

    def watch_revealed(self, _old: bool, _new: bool) -> None:
        if self.is_mounted:
            self._draw_back()

    def _draw_back(self) -> None:
        back = self.query_one("#card-back", Static)
        if self.card is None:
            back.update("")
        elif self.revealed:
            back.update("[b]Answer[/b]\n" + card_back(self.card))
        else:
            back.update("[dim]space: show the answer[/dim]")


class RatingBar(Horizontal):
    """Again / Hard / Good / Easy with the interval each would give; clickable, keys 1-4."""

    class Rated(Message):
        def __init__(self, rating: int) -> None:
            super().__init__()
            self.rating = rating

    def compose(self) -> ComposeResult:
        for r in (1, 2, 3, 4):
            btn = Button(str(r), id=f"rate-{r}", classes="rate-button")
            btn.can_focus = False  # keys 1-4 rate; focus stays on the card
            yield btn

    def set_labels(self, labels: dict[int, str] | None) -> None:
        """``labels`` from StudySession.button_labels, or None to hide the choice (not revealed):
        buttons that only read "1 2 3 4" before the answer invite a rating without it."""
        self.visible = labels is not None
        for r in (1, 2, 3, 4):
            btn = self.query_one(f"#rate-{r}", Button)
            if labels is None:
                btn.label = f"{r}"
                btn.disabled = True
            else:
                btn.label = f"{r} {labels[r]}"
                btn.disabled = False

    def labels(self) -> dict[int, str]:
        return {r: str(self.query_one(f"#rate-{r}", Button).label) for r in (1, 2, 3, 4)}

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Rated(int(event.button.id.rsplit("-", 1)[1])))
