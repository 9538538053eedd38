"""The learner's keys: every binding of the app has an id, and the settings store can give any id
other keys (``minigpt settings set keys.quiz.submit ctrl+j``), applied with Textual's keymap.

- ``catalogue(app_class)``: every binding of the app by id, found by walking the screen and widget
  packages (so it imports every screen, torch included: the CLI and a background check use it,
  never the first frame);
- ``check_keys`` / ``keymap_problems``: one line for an unknown id, a key Textual has no name for,
  or a key two actions would share where both work (one screen or widget, and the app's own keys);
- ``startup_keymap``: the stored keys the app applies before its first frame, without the catalogue;
- ``served_keymap``: in a browser tab, keys the browser keeps for itself (ctrl+w closes the tab)
  are replaced by ``SERVED_KEYS``, so the footer names keys that reach the app.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache

from textual.binding import Binding
from textual.keys import Keys, _character_to_key

from minigpt import settings
from minigpt.errors import KeymapError
from minigpt.store import Store

MODIFIERS = ("alt", "ctrl", "hyper", "meta", "shift", "super")  # Textual sorts a key's modifiers
NAMED_KEYS = frozenset({k.value for k in Keys if "+" not in k.value and not k.value.startswith("<")}
                       | {_character_to_key(chr(c)) for c in range(33, 127)} | {"space"})

# Keys a browser acts on before the page sees them (new window, new tab, close tab, quit, switch tab).
BROWSER_KEPT = frozenset({"ctrl+n", "ctrl+t", "ctrl+w", "ctrl+q", "ctrl+tab", "ctrl+shift+tab",
                          "ctrl+shift+n", "ctrl+shift+t", "ctrl+shift+w", "ctrl+shift+q",
                          "ctrl+pagedown", "ctrl+pageup", "f11", "f12"})
# What a served tab uses instead, for each binding whose keys the browser keeps.
SERVED_KEYS: dict[str, str] = {"app.quit": "f10", "home.quit": "f10", "too_small.quit": "f10",
                               "app.theme": "f9", "interview.skip": "f8"}


def as_binding(b) -> Binding:
    return Binding(*b) if isinstance(b, tuple) else b


def keys_of(binding: Binding) -> list[str]:
    return [k.strip() for k in binding.key.split(",")]


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _quoted(text: str) -> str:
    """Typed text as a message shows it: quoted, control characters visible, a long one cut short."""
    return repr(_clip(text))


# -- key names ---------------------------------------------------------------------------------------
def normalise_key(text: str) -> str:
    """One key as Textual names it ("?" → "question_mark", "Ctrl+Shift+X" → "ctrl+shift+x");
    KeymapError for a name Textual has no key for."""
    raw = text.strip()
    *mods, base = raw.split("+") if raw != "+" else ["+"]
    mods = [m.strip().lower() for m in mods]
    if not base.strip() or any(m not in MODIFIERS for m in mods) or len(set(mods)) != len(mods):
        raise KeymapError(f"{_quoted(raw)} is not a key: a key is a name (f5, enter, j) after any of "
                          f"{', '.join(m + '+' for m in MODIFIERS)}")
    base = base.strip()
    if len(base) == 1:
        base = _character_to_key(base)
        if mods and len(base) == 1:
            base = base.lower()  # ctrl+J is ctrl+j: Textual names a held-modifier letter in lower case
    else:
        base = base.lower()
    if base not in NAMED_KEYS:
        raise KeymapError(f"{_quoted(raw)} is not a key Textual knows: use a character or a name such as "
                          "enter, escape, tab, space, f1-f24, up, pageup, question_mark")
    return "+".join([*sorted(mods), base])


def normalise_keys(text: str) -> str:
    """A comma-separated list of keys, each normalised (a comma itself is the key "comma")."""
    parts = text.split(",")
    if not text.strip() or any(not p.strip() for p in parts):
        raise KeymapError(f"{_quoted(text)} is not a list of keys: separate keys with commas, as in ctrl+j or f5,j "
                          "(the comma key is 'comma')")
    keys = [normalise_key(p) for p in parts]
    return ",".join(dict.fromkeys(keys))


# -- the app's bindings ------------------------------------------------------------------------------
@cache
def binding_classes(app_class: type) -> tuple[type, ...]:
    """Every class that declares bindings itself: the app's, and those of every module of every area
    package (found by walking ``tui``, so a new screen or area is checked without being listed; the
    browser package serves the app and has no keys of its own)."""
    import tui

    modules = []
    for area in pkgutil.iter_modules(tui.__path__):
        if area.ispkg and area.name != "browser":
            pkg = importlib.import_module(f"tui.{area.name}")
            modules += [importlib.import_module(f"{pkg.__name__}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__)]
    found = [app_class]
    for module in modules:
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == module.__name__
                    and value.__dict__.get("BINDINGS")):
                found.append(value)
    return tuple(found)


def own_bindings(cls: type) -> list[Binding]:
    return [as_binding(b) for b in cls.__dict__.get("BINDINGS", [])]


@cache
def catalogue(app_class: type) -> dict[str, Binding]:
    """Every binding id of the app → its binding as declared (its default keys)."""
    return {b.id: b for cls in binding_classes(app_class) for b in own_bindings(cls) if b.id}


def _namespaces(app_class: type) -> list[tuple[str, list[Binding]]]:
    """(name, bindings) for each place keys are looked up together: a class's bindings with those it
    inherits (Textual's own included); a screen's also with the app's, which work on every screen."""
    from textual.screen import Screen

    app_bindings = [b for bs in app_class._merge_bindings().key_to_bindings.values() for b in bs]
    out = []
    for cls in binding_classes(app_class):
        merged = [b for bs in cls._merge_bindings().key_to_bindings.values() for b in bs]
        if issubclass(cls, Screen):
            merged += app_bindings
        out.append((cls.__name__, merged))
    return out


def _who(binding: Binding) -> str:
    return binding.id or f"Textual's {binding.action}"


def _action(binding: Binding) -> str:
    return binding.action.removeprefix("app.")  # the home screen's quit is the app's


def keymap_problems(keymap: Mapping[str, str], app_class: type) -> list[tuple[str, str]]:
    """(id, one line) for each entry the app cannot use: an unknown id, a key Textual has no name
    for, or a key it would share with another action where both are looked up (the defaults'
    own sharing, such as a lesson's x for experiments or its lab job, is not a clash, nor is one key
    for two bindings of one action)."""
    known, problems, normal = catalogue(app_class), [], {}
    for binding_id, text in keymap.items():
        if binding_id not in known:
            problems.append((binding_id, f"keys.{_clip(binding_id)}: no key of the app has the id {_quoted(binding_id)} "
                                         "(`minigpt keys` lists them)"))
            continue
        try:
            normal[binding_id] = normalise_keys(text)
        except KeymapError as e:
            problems.append((binding_id, f"keys.{binding_id}: {e}"))
    for _name, bindings in _namespaces(app_class):
        holders: dict[str, list[Binding]] = {}
        for b in bindings:
            for key in normal[b.id].split(",") if b.id in normal else [b.key]:
                if b not in holders.setdefault(key, []):
                    holders[key].append(b)
        for b in bindings:
            if b.id not in normal:
                continue
            for key in normal[b.id].split(","):
                others = [o for o in holders.get(key, []) if _who(o) != _who(b) and _action(o) != _action(b)]
                if others and key not in keys_of(known[b.id]):
                    line = (f"keys.{b.id}: {key} is already {_who(others[0])} where {b.id} works; "
                            f"give one of them another key")
                    if (b.id, line) not in problems:
                        problems.append((b.id, line))
    return problems


def check_keys(stored: Mapping[str, str], binding_id: str, text: str, app_class: type) -> str:
    """The keys to store for ``binding_id`` (normalised), with the others already stored; a
    KeymapError saying in one line why not (the CLI's check before ``settings set keys.<id>``)."""
    problems = [line for who, line in keymap_problems({**stored, binding_id: text}, app_class) if who == binding_id]
    if problems:
        raise KeymapError(problems[0])
    return normalise_keys(text)


def usable_keymap(keymap: Mapping[str, str], app_class: type) -> tuple[dict[str, str], list[str]]:
    """The entries that can be applied and a line for each one left out (entries are dropped
    until none clashes: a clash leaves both its sides at their defaults)."""
    kept, dropped = dict(keymap), []
    while problems := keymap_problems(kept, app_class):
        for binding_id, line in problems:
            if kept.pop(binding_id, None) is not None:
                dropped.append(line)
    return {k: normalise_keys(v) for k, v in kept.items()}, dropped


# -- what the app applies ----------------------------------------------------------------------------
def startup_keymap(store: Store) -> tuple[dict[str, str], list[str]]:
    """The stored keys whose names Textual knows (checked without importing the screens), and a line
    for each stored entry that cannot be read."""
    stored, unreadable = settings.members(store, settings.KEYS)
    keymap, lines = {}, [f"keys.{_clip(item)}: the stored text is not a list of keys" for item in unreadable]
    for binding_id, text in stored.items():
        try:
            keymap[binding_id] = normalise_keys(text)
        except KeymapError as e:
            lines.append(f"keys.{_clip(binding_id)}: {e}")
    return keymap, lines


def served_keymap(keymap: Mapping[str, str]) -> dict[str, str]:
    """The keymap for a browser tab: a binding whose default keys the browser keeps gets its
    ``SERVED_KEYS`` key, and a learner's key the browser keeps is left out (the binding keeps the
    learner's other keys, else its served key, else its default)."""
    out = {**SERVED_KEYS, **keymap}
    for binding_id, keys in keymap.items():
        parts = keys.split(",")
        kept = [k for k in parts if k not in BROWSER_KEPT]
        if len(kept) == len(parts):
            continue
        if kept or binding_id in SERVED_KEYS:
            out[binding_id] = ",".join(kept) or SERVED_KEYS[binding_id]
        else:
            del out[binding_id]
    return out


def shown_key(app, binding: Binding) -> str:
    """The key the learner presses for ``binding`` now (the keymap's first one, else the declared)."""
    mapped = getattr(app, "_keymap", {}).get(binding.id) if binding.id else None
    if mapped:
        return app.get_key_display(Binding(mapped.split(",")[0], binding.action))
    return binding.key_display or binding.key.split(",")[0]


def shown_key_of(app, binding_id: str, declared: str) -> str:
    """The key shown for ``binding_id`` where a screen prints it itself (the home screen's list)."""
    return shown_key(app, Binding(declared, "", id=binding_id))
