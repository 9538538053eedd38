"""Every key that works where the learner was: the focused control's own keys, the screen's, and the
app-wide ones, taken from the same binding chain the footer reads (so keys a screen switches off
with ``check_action`` are not listed)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def _bindings_table(title: str, bindings) -> list[str]:
    rows, seen = [], set()
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        if not b.description or (b.action, b.description) in seen:
            continue
        seen.add((b.action, b.description))
        key = b.key_display or b.key
        rows.append(f"  [b]{key:<14}[/b] {b.description}")
    return [f"[b u]{title}[/b u]", *rows, ""] if rows else []


def _title(node) -> str:
    """A section title for the node that owns some bindings: a screen, the app, a control."""
    if isinstance(node, Screen):
        return node.__class__.__name__.replace("Screen", "") or "Screen"
    if node is node.app:
        return "Everywhere"
    name = getattr(node, "HELP_TITLE", None) or node.__class__.__name__
    return f"In the focused {name}" if node.id is None else f"In the focused {name} (#{node.id})"


def key_sections(origin: Screen) -> list[tuple[str, list[Binding]]]:
    """(title, bindings) for each node of the origin's binding chain that has working keys:
    the focused control and its containers first, then the screen, then the app."""
    sections: dict[int, tuple[object, list[Binding]]] = {}
    for active in origin.active_bindings.values():
        sections.setdefault(id(active.node), (active.node, []))[1].append(active.binding)
    order = {id(node): i for i, (node, _) in enumerate(origin._binding_chain)}
    nodes = sorted(sections.values(), key=lambda item: order.get(id(item[0]), len(order)))
    return [(_title(node), bindings) for node, bindings in nodes]


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, origin: Screen):
        super().__init__()
        self.origin = origin

    def compose(self) -> ComposeResult:
        lines = ["[b]Keys[/b]  (escape closes)", ""]
        try:
            sections = key_sections(self.origin)
        except Exception:  # a binding chain Textual has changed: the declared keys still help
            sections = [(_title(self.origin), self.origin.BINDINGS), ("Everywhere", self.app.BINDINGS)]
        for title, bindings in sections:
            lines += _bindings_table(title, bindings)
        lines += [
            "[b u]Lists and text[/b u]",
            "  [b]↑ ↓ PgUp PgDn[/b]  move and scroll",
            "  [b]tab / shift+tab[/b] next / previous control",
            "  [b]escape[/b]         back",
            "",
            "[b u]Command palette[/b u]",
            "  ctrl+p, then type: a lesson's title, an area, 'theme', 'home', 'keys'.",
        ]
        with VerticalScroll(id="help-body"):
            yield Static("\n".join(lines))

    def action_dismiss(self) -> None:
        self.dismiss()
