"""Export the decks to an Anki package, and import the learner's own cards.

Export: one Anki note per study card, GUID = ``genanki.guid_for("minigpt-tutor", card_id)`` so a
second export updates the same notes in Anki instead of duplicating them. Scheduling is NOT
transferred (Anki starts the cards as new); ``export_apkg`` says so in its result.

Import: Markdown files with ``Q:`` / ``A:`` blocks, or TSV files (front<TAB>back per line), go
into the ``user_cards`` table of the progress database (deck name chosen by the caller). Their
ids are ``user.<deck>.<hash of the front>``, so re-importing the same file updates, never
duplicates. ``user_deck(store)`` returns them as StudyCards (kind "user") to merge into a Deck.
"""

from __future__ import annotations

import csv
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import genanki

from minigpt.store import Store
from minigpt.study import scheduler as sch
from minigpt.study.decks import Deck, StudyCard

MODEL_ID = 1_741_902_316          # fixed forever: Anki matches note types on it
DECK_ID = 1_741_902_317
GUID_SALT = "minigpt-tutor"

_MODEL = genanki.Model(
    MODEL_ID, "minigpt-tutor card",
    fields=[{"name": "Front"}, {"name": "Back"}, {"name": "CardId"}, {"name": "Lesson"}],
    templates=[{"name": "Card 1", "qfmt": "{{Front}}",
                "afmt": "{{FrontSide}}<hr id=answer>{{Back}}"}],
)


def card_guid(card_id: str) -> str:
    return genanki.guid_for(GUID_SALT, card_id)


def _html(text: str) -> str:
    from html import escape

    return escape(text).replace("\n", "<br>")


def _back(card: StudyCard) -> str:
    if card.kind == "question":
        return card.back + "\n\n" + "\n".join(f"• {c}" for c in card.checklist)
    return card.back


@dataclass(frozen=True)
class ExportResult:
    path: Path
    notes: int
    message: str


def export_apkg(deck: Deck, path: Path | str, *, title: str = "minigpt-tutor") -> ExportResult:
    path = Path(path)
    adeck = genanki.Deck(DECK_ID, title)
    for card in deck:
        tags = [t.replace(" ", "_") for t in (card.lesson, card.kind, *card.tags)]
        adeck.add_note(genanki.Note(model=_MODEL, guid=card_guid(card.id), tags=tags,
                                    fields=[_html(card.front), _html(_back(card)),
                                            card.id, card.lesson]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    genanki.Package(adeck).write_to_file(str(tmp))
    tmp.replace(path)
    n = len(adeck.notes)
    return ExportResult(path, n, f"Exported {n} cards to {path}. Scheduling is not transferred: "
                                 f"Anki will show them as new cards.")


# -- import -----------------------------------------------------------------------------------
class CardImportError(ValueError):
    """A file to import is malformed; the message names the file and line."""


def parse_markdown(text: str, source: str = "<text>") -> list[tuple[str, str]]:
    """``Q: ...`` then ``A: ...`` (either may continue on following lines), blocks in any order."""
    pairs: list[tuple[str, str]] = []
    q: list[str] | None = None
    a: list[str] | None = None
    cur = None
    qline = 0

    def flush(lineno: int):
        if q is None:
            return
        if a is None:
            raise CardImportError(f"{source}: line {qline}: question has no 'A:' answer")
        pairs.append(("\n".join(q).strip(), "\n".join(a).strip()))

    for lineno, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(?:[-*]\s*)?(?:\*\*)?([QA])(?:\*\*)?\s*[:：]\s?(.*)$", line)
        if m and m.group(1) == "Q":
            flush(lineno)
            q, a, cur, qline = [m.group(2)], None, "q", lineno
        elif m and m.group(1) == "A":
            if q is None:
                raise CardImportError(f"{source}: line {lineno}: 'A:' without a 'Q:' before it")
            a, cur = [m.group(2)], "a"
        elif cur == "q":
            q.append(line)
        elif cur == "a":
            a.append(line)
    flush(0)
    return [(f, b) for f, b in pairs if f and b]


def parse_tsv(text: str, source: str = "<text>") -> list[tuple[str, str]]:
    pairs = []
    for lineno, row in enumerate(csv.reader(text.splitlines(), delimiter="\t"), 1):
        if not row or not "".join(row).strip() or row[0].startswith("#"):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise CardImportError(f"{source}: line {lineno}: need front<TAB>back")
        pairs.append((row[0].strip(), row[1].strip()))
    return pairs


def user_card_id(deck_name: str, front: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", deck_name.lower()).strip("-") or "mine"
    return f"user.{slug}.{hashlib.sha1(front.strip().encode()).hexdigest()[:10]}"


def import_file(store: Store, path: Path | str, deck_name: str = "mine") -> list[str]:
    """Import a ``.md``/``.txt`` (Q:/A:) or ``.tsv`` file; returns the card ids written."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    pairs = (parse_tsv(text, path.name) if path.suffix.lower() in (".tsv", ".tab")
             else parse_markdown(text, path.name))
    if not pairs:
        raise CardImportError(f"{path.name}: no cards found (expected Q:/A: blocks or front<TAB>back)")
    now = sch.iso(sch.utc_now())
    ids = []
    with store.transaction() as conn:
        for front, back in pairs:
            cid = user_card_id(deck_name, front)
            conn.execute(
                "INSERT INTO user_cards(card_id, deck, front, back, source, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(card_id) DO UPDATE SET "
                "back = excluded.back, source = excluded.source",
                (cid, deck_name, front, back, str(path), now))
            ids.append(cid)
    return ids


def user_cards(store: Store, deck_name: str | None = None) -> list[StudyCard]:
    sql, args = "SELECT * FROM user_cards", ()
    if deck_name:
        sql, args = sql + " WHERE deck = ?", (deck_name,)
    rows = store.conn.execute(sql + " ORDER BY created_at, card_id", args)
    return [StudyCard(id=r["card_id"], kind="user", lesson=f"user:{r['deck']}", front=r["front"],
                      back=r["back"], tags=(r["deck"],), source=r["source"] or "") for r in rows]


def with_user_cards(deck: Deck, store: Store) -> Deck:
    """A new Deck holding the bundled cards plus the learner's imported ones."""
    merged = Deck(dict(deck.cards), list(deck.files))
    for c in user_cards(store):
        merged.cards.setdefault(c.id, c)
    return merged
