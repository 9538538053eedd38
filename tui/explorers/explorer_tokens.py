"""Tokens explorer: type text, see how byte-pair encoding splits it at several vocabulary sizes.

The tokenizer is trained once (in a worker thread, about a second) on the most common names and
the lessons' own prose; smaller vocabularies are the first merges of that one training run.
ctrl+l loads a trained model: the typed text in its own character vocabulary, and each letter's
nearest characters in its learned token embedding; or a GPT-2 folder: the text as its BPE pieces,
each piece's nearest tokens in its embedding (one row of similarities per piece, in a worker).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static

from minigpt.pretrained.gpt2 import PretrainedCheckpoint
from minigpt.teaching.bpe import BPE, UNKNOWN_ID, show_token, token_rows
from minigpt.teaching.model_views import TokenView, encode_known, load_explorable, nearest_tokens, token_view
from minigpt.text import printable
from tui.common.checkpoint_picker import LoadsCheckpoint
from tui.common.header import TutorHeader
from tui.workers import Result, background

SAMPLE = "The cache keeps keys and values."
MAX_INPUT = 400  # characters; the explorer is for sentences, not documents


class TokensExplorerScreen(LoadsCheckpoint, Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True, id="explorer_tokens.back"),
                Binding("ctrl+r", "reset", "Sample text", show=True, id="explorer_tokens.reset"),
                LoadsCheckpoint.MODEL_BINDING]
    view_of = staticmethod(token_view)
    refusal_at = "#tok-model"
    picker_title = "Read the text with a trained model's characters"
    MAX_NEIGHBOUR_LETTERS = 12  # letters whose neighbours are listed (the first ones of the text)
    MAX_NEIGHBOUR_PIECES = 12  # a GPT-2's pieces whose neighbours are listed: a row of 50,257 each
    lists_pretrained = True

    def __init__(self) -> None:
        super().__init__()
        self.bpe: BPE | None = None
        self.rows = []
        self.model: TokenView | None = None
        self.pretrained: PretrainedCheckpoint | None = None  # a GPT-2 folder's model, when one is loaded

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with VerticalScroll(classes="explorer-body"):
            yield Static("[b]Tokens[/b]  BPE learned on the names and the lessons; each row a "
                         "bigger vocabulary", classes="explorer-text")
            with Horizontal(classes="explorer-row"):
                yield Label("text")
                yield Input(SAMPLE, id="tok-text", max_length=MAX_INPUT)
            yield Static("training the tokenizer…", id="tok-status", classes="explorer-muted")
            yield Static(id="tok-model", classes="explorer-text")
            yield Static(id="tok-rows", classes="explorer-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#tok-text").focus()
        self.train()

    @dataclass
    class Trained(Result):
        bpe: BPE

    @background(thread=True, exclusive=True, group="train", what="Training the tokenizer")
    def train(self) -> Trained:
        from minigpt.teaching.examples.tokenization import explorer_bpe

        return self.Trained(explorer_bpe())

    @on(Trained)
    def _trained(self, message: Trained) -> None:
        self.bpe = bpe = message.bpe
        self.query_one("#tok-status", Static).update(
            f"{len(bpe.merges)} merges · ␣ space · ⏎ newline · red: never seen in training")
        self.recompute()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.recompute()
        self.show_model_tokens()

    def model_view(self, path):
        """A character model's TokenView; a GPT-2 folder's checkpoint itself (its neighbours are
        found per typed piece, never for the whole vocabulary)."""
        ckpt = load_explorable(path)
        return ckpt if isinstance(ckpt, PretrainedCheckpoint) else token_view(ckpt)

    def show_model(self, path, view) -> None:
        if isinstance(view, PretrainedCheckpoint):
            self.model, self.pretrained = None, view
        else:
            self.model, self.pretrained = view, None
        self.show_model_tokens()

    @dataclass
    class Neighbours(Result):
        """A GPT-2's reading of the text: its pieces with their nearest tokens, or why not."""
        text: str
        rows: list
        error: str = ""

    @background(thread=True, exclusive=True, group="neighbours")
    def find_neighbours(self, text: str) -> Neighbours:
        try:
            return self.Neighbours(text, nearest_tokens(self.pretrained, text, k=3, limit=self.MAX_NEIGHBOUR_PIECES))
        except ValueError as e:
            return self.Neighbours(text, [], str(e))

    @on(Neighbours)
    def _neighbours(self, message: Neighbours) -> None:
        if self.pretrained is None:
            return
        ckpt, text = self.pretrained, message.text
        out = Text()
        ids = ckpt.tokenizer.encode(text) if not message.error else []
        out.append(f"{printable(ckpt.path.name)}: byte-level BPE of {ckpt.tokenizer.size:,} tokens: "
                   f"{len(ids)} tokens for {len(text)} characters\n", style="bold")
        if message.error:
            out.append(f"✗ {message.error}\n", style="red")
        else:
            out.append(printable("|".join(ckpt.tokenizer.piece(i) for i in ids)) + "\n")
            out.append("ids " + " ".join(map(str, ids)) + "\n", style="dim")
            cut = f" (the first {len(message.rows)})" if len(ids) > len(message.rows) else ""
            out.append(f"nearest tokens in its embedding (cosine){cut}:\n", style="bold")
            for piece, near in message.rows:
                out.append(printable(f"{piece} → " + ", ".join(f"{n} {v:+.2f}" for n, v in near)) + "\n")
        self.query_one("#tok-model", Static).update(out)

    def show_model_tokens(self) -> None:
        """The text as the loaded model reads it: one id per character, then each letter's nearest
        characters in its embedding (cosine similarity of the rows of tok_emb); a GPT-2's pieces
        and their nearest tokens come from a worker."""
        if self.pretrained is not None:
            self.find_neighbours(self.query_one("#tok-text", Input).value)
            return
        if self.model is None:
            return
        m, text = self.model, self.query_one("#tok-text", Input).value
        pairs = encode_known(m, text)
        out = Text()
        out.append(f"{printable(m.label)}: {len(m.chars)} characters, one token each: "
                   f"{len(pairs)} tokens for {len(text)} characters\n", style="bold")
        out.append("ids " + " ".join("?" if i is None else str(i) for _, i in pairs) + "\n", style="dim")
        unknown = sorted({c for c, i in pairs if i is None})
        if unknown:
            out.append("not in its vocabulary: " + " ".join(printable(show_token(c)) for c in unknown) + "\n", style="red")
        letters = [c for c in dict.fromkeys(c for c, i in pairs if i is not None)][:self.MAX_NEIGHBOUR_LETTERS]
        out.append("nearest characters in its embedding (cosine):\n", style="bold")
        items = [f"{show_token(c)}→" + ",".join(f"{show_token(n)} {v:+.2f}" for n, v in m.neighbours[c][:2])
                 for c in letters]
        for start in range(0, len(items), 4):  # four a line: a line break never splits one
            out.append(printable("  ".join(items[start:start + 4])) + "\n")
        self.query_one("#tok-model", Static).update(out)

    def action_reset(self) -> None:
        self.query_one("#tok-text", Input).value = SAMPLE

    def recompute(self) -> None:
        if self.bpe is None:
            return
        from minigpt.teaching.examples.tokenization import EXPLORER_MERGES

        text = self.query_one("#tok-text", Input).value
        self.rows = token_rows(self.bpe, text, EXPLORER_MERGES)
        out = Text()
        for row in self.rows:
            out.append(f"vocabulary {row.vocab_size:,}: {len(row.tokens)} tokens "
                       f"for {len(text)} characters\n", style="bold")
            for n, (token, token_id) in enumerate(zip(row.tokens, row.ids)):
                out.append("|" if n else "")
                out.append(show_token(token), style="bold red" if token_id == UNKNOWN_ID else "")
            ids = " ".join("?" if i == UNKNOWN_ID else str(i) for i in row.ids)
            out.append(f"\nids {ids}\n", style="dim")
        unknown = self.rows[0].unknown if self.rows else []
        if unknown:
            out.append("not in the training text: " + " ".join(unknown)
                       + " (a byte-level tokenizer never has this problem)", style="red")
        self.query_one("#tok-rows", Static).update(out)
