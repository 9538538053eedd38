"""The rows of the progress database its readers left out as unreadable, counted, and the one line
that says so (``minigpt.study.rows`` and ``minigpt.katas.history`` count; the CLI prints the line
on stderr after a command, the app shows it once).

A row counts once however many readers meet it: it is kept by its table and key.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_skipped: dict[str, dict[str, set]] = {}  # database file name -> table -> the keys of rows left out


def skip(store, table: str, key: object) -> None:
    """Count one row of ``table`` (its id or key) in ``store``'s database as left out."""
    with _lock:
        _skipped.setdefault(store.path.name, {}).setdefault(table, set()).add(key)


def take_skipped_note() -> str | None:
    """One line naming how many rows were left out since the last call, or None; then forgets them."""
    with _lock:
        found = {name: tables for name, tables in _skipped.items() if tables}
        _skipped.clear()
    if not found:
        return None
    parts = []
    for name, tables in sorted(found.items()):
        n = sum(len(keys) for keys in tables.values())
        which = ", ".join(f"{table} {len(keys)}" for table, keys in sorted(tables.items()))
        parts.append(f"{name}: {n} row{'s' * (n != 1)} could not be read and {'were' if n != 1 else 'was'} "
                     f"left out ({which})")
    return "; ".join(parts)
