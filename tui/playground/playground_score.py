"""Score a name the learner types: how likely the model finds each character, the total
log-probability, and what the model would have said instead after each prefix; on a pretrained
GPT-2, the same for each token of a typed text (its per-token surprise)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from minigpt.errors import SamplingError
from minigpt.playground.inspection import is_pretrained, score_name, score_text
from minigpt.text import markup_escape as escape
from minigpt.text import printable
from tui.common.header import TutorHeader
from tui.playground.playground_bars import bar, prob_style, show_char

WHERE = {"train": "● in train", "val": "◐ in val", "test": "◑ in test", "new": "★ new"}


class ScoreScreen(Screen):
    PALETTE_PREFIX = "Score"
    BINDINGS = [
        Binding("escape", "back", "Back", show=True, id="playground_score.back"),
        Binding("enter", "score", "Score", show=True, id="playground_score.score"),
        Binding("f", "focus_input", "Type a name", show=True, id="playground_score.focus_input"),
    ]

    def __init__(self, loaded, word: str = ""):
        super().__init__()
        # A continuation may hold control bytes (GPT-2 samples any byte): the field shows them made
        # visible, and scoring the field unchanged scores the continuation itself.
        self.loaded, self.word, self.shown = loaded, word, printable(word)
        self.score = None

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Input(self.shown, placeholder="type a name, then enter", id="score-input")
        yield Static(id="score-total")
        yield DataTable(id="score-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        if is_pretrained(self.loaded):  # GPT-2 scores a typed text, token by token: no names
            self.sub_title = "per-token surprise of a text"
            self.query_one(Input).placeholder = "type a text, then enter"
            self.query_one(DataTable).add_columns("after", "next", "p", "", "model's best")
        else:
            self.sub_title = "score a name"
            self.query_one(DataTable).add_columns("after", "next", "p", "", "model's best", "greedy name")
        self.query_one(Input).focus()
        if self.word:
            self.action_score()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_score()

    def action_focus_input(self) -> None:
        self.query_one(Input).focus()

    def action_back(self) -> None:
        if isinstance(self.focused, Input) and self.score is not None:
            self.query_one(DataTable).focus()
        else:
            self.app.pop_screen()

    def action_score(self) -> None:
        total = self.query_one("#score-total", Static)
        table = self.query_one(DataTable)
        pretrained = is_pretrained(self.loaded)  # a typed text, token by token, instead of a name
        try:
            typed = self.query_one(Input).value
            text = self.word if typed == self.shown else typed
            sc = (score_text if pretrained else score_name)(self.loaded, text)
        except SamplingError as e:  # the typed name stays in the field to be fixed
            total.update(f"[b $error]⚠ {escape(str(e))}[/]")
            total.add_class("pg-error")
            table.clear()  # the last name's rows would read as this one's
            self.score = None
            return
        total.remove_class("pg-error")
        self.score = sc
        where = WHERE.get(sc.membership, "membership unknown") if sc.membership else "membership unknown"
        unit, item = ("token", "text's next token") if pretrained else ("char", "name's next character")
        word = escape(printable(sc.word) if pretrained else sc.word)  # (a model's output: control bytes made visible)
        cut = f" ({escape(sc.note)})" if sc.note else ""
        total.update(f"[b]{word}[/b]{cut}  total log p [b]{sc.total_logprob:.3f}[/b]  "
                     f"per {unit} {sc.mean_logprob:.3f}  {'' if pretrained else where}\n"
                     f"[$text-muted]p = probability of the {item} after the prefix; "
                     f"▲ = the model's own first choice[/]")
        table.clear()
        for r in sc.rows:
            top = "▲" if r.best == r.char else " "
            style = self._rich_style(prob_style(r.prob))
            if pretrained:  # BPE pieces from a model's files: made printable, never read as markup
                after, char, best = (Text(printable(v)) for v in (r.prefix, f"'{r.char}'", f"'{r.best}' {r.best_prob:.2f}"))
            else:
                after, char, best = Text("." + r.prefix), show_char(r.char), f"{show_char(r.best)} {r.best_prob:.2f}"
            cells = [after, char, Text(f"{r.prob:.3f}{top}", style=style), Text(bar(r.prob, 10), style=style), best]
            table.add_row(*cells, *([] if pretrained else [Text(r.continuation)]))

    def _rich_style(self, style: str) -> str:
        """DataTable cells are Rich text: turn theme variables into the theme's actual colours."""
        variables = self.app.theme_variables
        return " ".join(variables.get(w[1:], "") if w.startswith("$") else w for w in style.split())
