"""Every key that works where the learner was: the focused control's own keys, the screen's, and the
app-wide ones, taken from the same binding chain the footer reads (so keys a screen switches off
with ``check_action`` are not listed)."""

from __future__ import annotations

import re
import textwrap

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.keymap import shown_key_of


def _literal(text: str) -> str:
    """Text shown as it is inside markup: every "[" escaped (a key can be "[")."""
    return text.replace("[", "\\[")


KEY_COLUMN = 14
BOX_WIDTH = 76  # #help-body's width in app.tcss; the text is 6 narrower (border, padding, scrollbar)


def _key_text(binding: Binding, app=None) -> str:
    """The key as the learner types it: the footer's own glyph for a named character
    (``right_square_bracket`` → ``]``), otherwise its name (``ctrl+o``, clearer than ``^o``)."""
    if binding.key_display:
        return binding.key_display
    if app is not None and "_" in binding.key:
        shown = app.get_key_display(binding)
        if len(shown) == 1:
            return shown
    return binding.key


def _bindings_table(title: str, bindings, width: int = BOX_WIDTH - 6, app=None) -> list[str]:
    """A section of key rows; long descriptions wrap under themselves (a hanging indent)."""
    rows, seen = [], set()
    indent = " " * (2 + KEY_COLUMN + 1)
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        if not b.description or (b.action, b.description) in seen:
            continue
        seen.add((b.action, b.description))
        key = _literal(f"{_key_text(b, app):<{KEY_COLUMN}}")  # "[" is a key, not markup
        lines = textwrap.wrap(b.description, max(20, width - len(indent))) or [""]
        rows.append(f"  [b]{key}[/b] {_literal(lines[0])}")
        rows += [indent + _literal(line) for line in lines[1:]]
    return [f"[b u]{_literal(title)}[/b u]", *rows, ""] if rows else []


def _words(class_name: str) -> str:
    """A class name in words: "AttentionStepper" → "attention stepper" (never shown as code)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", class_name).lower()


def _title(node) -> str:
    """A section title for the node that owns some bindings, in the learner's words: the
    screen's own title, "Everywhere", or what the focused control is (no class names, no ids)."""
    if isinstance(node, Screen):
        return (getattr(node, "HELP_TITLE", None) or node.sub_title
                or _words(node.__class__.__name__.replace("Screen", "")).capitalize() or "This screen")
    if node is node.app:
        return "Everywhere"
    name = getattr(node, "HELP_TITLE", None) or _words(node.__class__.__name__)
    return f"In the focused {name}"


def _declared_here(node) -> set[str]:
    """The ids of the bindings this app's own classes declare for ``node`` (each under the key the
    learner gave it, if any): Textual's built-ins (scrolling, focus cycling, copy) have none and are
    summed up once under "Lists and text"."""
    out = set()
    for cls in type(node).__mro__:
        if cls.__module__.startswith("tui."):
            out.update(b.id for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding) and b.id)
    return out


def key_sections(origin: Screen) -> list[tuple[str, list[Binding]]]:
    """(title, bindings) for each node of the origin's binding chain that has working keys of its
    own: the screen first, then the focused control (and its containers), then the app."""
    sections: dict[int, tuple[object, list[Binding]]] = {}
    declared: dict[int, set] = {}
    for active in origin.active_bindings.values():
        node = active.node
        if id(node) not in declared:
            declared[id(node)] = _declared_here(node)
        if active.binding.id in declared[id(node)]:
            sections.setdefault(id(node), (node, []))[1].append(active.binding)
    chain = [node for node, _ in origin._binding_chain]
    rank = {id(node): (0 if isinstance(node, Screen) else 2 if node is origin.app else 1, i)
            for i, node in enumerate(chain)}
    nodes = sorted(sections.values(), key=lambda item: rank.get(id(item[0]), (3, 0)))
    return [(_title(node), bindings) for node, bindings in nodes]


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.close"),
                Binding("j,down", "scroll(1)", "Scroll down", show=False, id="help.scroll_down"),
                Binding("k,up", "scroll(-1)", "Scroll up", show=False, id="help.scroll_up"),
                Binding("space,pagedown", "scroll(10)", "Page down", show=False, id="help.page_down"),
                Binding("b,pageup", "scroll(-10)", "Page up", show=False, id="help.page_up")]

    def __init__(self, origin: Screen):
        super().__init__()
        self.origin = origin

    def compose(self) -> ComposeResult:
        lines = ["[b]Keys[/b]  (escape closes · j/k scroll, as in lessons)", ""]
        try:
            sections = key_sections(self.origin)
        except Exception:  # a binding chain Textual has changed: the declared keys still help
            sections = [(_title(self.origin), self.origin.BINDINGS), ("Everywhere", self.app.BINDINGS)]
        for title, bindings in sections:
            lines += _bindings_table(title, bindings, min(BOX_WIDTH, self.app.size.width) - 6, self.app)
        lines += [
            "[b u]Lists and text[/b u]",
            "  [b]↑ ↓ PgUp PgDn[/b]  move and scroll",
            "  [b]tab / shift+tab[/b] next / previous control",
            "  [b]escape[/b]         back",
            "  [b]F1[/b]             these keys, also from a text field (where ? is typed)",
            "",
            "[b u]Command palette[/b u]",
            f"  {_literal(shown_key_of(self.app, 'app.palette', 'ctrl+p'))}, then type: a lesson's title, an area, "
            "'theme', 'home', 'keys'.",
        ]
        with VerticalScroll(id="help-body"):
            yield Static("\n".join(lines))

    def action_dismiss(self) -> None:
        self.dismiss()

    def action_scroll(self, rows: int) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_relative(y=rows, animate=False)
