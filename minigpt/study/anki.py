"""Export the decks to an Anki package, and import the learner's own cards.

Export: one Anki note per study card, GUID = ``genanki.guid_for("minigpt-tutor", card_id)`` so a
second export updates the same notes in Anki instead of duplicating them. Scheduling is NOT
transferred (Anki starts the cards as new); ``export_apkg`` says so in its result.
A generative numeric card (``minigpt.study.templates``) is one note keyed by its note id, exported
with its deck's first case as fixed numbers (Anki cannot draw new ones): its GUID is the note's,
so the per-case notes of an earlier export (``num.warmup-lr.half``, ``num.block-params.d768`` …:
every note whose deck says ``template = true``) are no longer updated and can be deleted in Anki;
every other card's GUID is unchanged.

Import: Markdown files with ``Q:`` / ``A:`` blocks, or TSV files (front<TAB>back per line), go
into the ``user_cards`` table of the progress database (deck name chosen by the caller). Their
ids are ``user.<deck>.<hash of the front>``, so re-importing the same file updates, never
duplicates. ``user_deck(store)`` returns them as StudyCards (kind "user") to merge into a Deck.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from minigpt import extras, guarded
from minigpt.errors import CardImportError, UnsafeFileError
from minigpt.outputs import write_output_with
from minigpt.store import Store
from minigpt.study import scheduler
from minigpt.study.cards import Deck, StudyCard

MODEL_ID = 1_741_902_316          # fixed forever: Anki matches note types on it
DECK_ID = 1_741_902_317
GUID_SALT = "minigpt-tutor"

EXPORT = "exporting an Anki package (.apkg)"


def _genanki():
    """genanki, imported only by an export (the ``anki`` extra); the import of cards needs none."""
    extras.require("anki", EXPORT)
    import genanki

    return genanki


def _note_type(genanki):
    return genanki.Model(
        MODEL_ID, "minigpt-tutor card",
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "CardId"}, {"name": "Lesson"}],
        templates=[{"name": "Card 1", "qfmt": "{{Front}}",
                    "afmt": "{{FrontSide}}<hr id=answer>{{Back}}"}],
    )


def card_guid(card_id: str) -> str:
    return _genanki().guid_for(GUID_SALT, card_id)


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
    genanki = _genanki()
    path = Path(path)
    adeck, note_type = genanki.Deck(DECK_ID, title), _note_type(genanki)
    for card in deck:
        tags = [t.replace(" ", "_") for t in (card.lesson, card.kind, *card.tags)]
        adeck.add_note(genanki.Note(model=note_type, guid=genanki.guid_for(GUID_SALT, card.id), tags=tags,
                                    fields=[_html(card.front), _html(_back(card)),
                                            card.id, card.lesson]))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output_with(path, lambda tmp: genanki.Package(adeck).write_to_file(str(tmp)), f"the deck {path.name}")
    n = len(adeck.notes)
    return ExportResult(path, n, f"Exported {n} cards to {path}. Scheduling is not transferred: "
                                 f"Anki will show them as new cards.")


# -- import -----------------------------------------------------------------------------------
MAX_IMPORT_BYTES = 5 * 2**20  # a card file is notes, not a dataset
MAX_SIDE_CHARS = 20_000  # one side of one card



_MARKER = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?([QA])(?:\*\*)?\s*[:：]\s?(.*)$")


def parse_markdown(text: str, source: str = "<text>") -> list[tuple[str, str]]:
    """``Q: ...`` then ``A: ...`` (either may continue on following lines), blocks in any order.

    Text before the first ``Q:`` (a title, notes) is ignored; a question without an answer, an
    answer without a question and an empty side are refused with their line.
    """
    cards: list[tuple[int, list[str], list[str] | None]] = []  # (line of Q:, question, answer)
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _MARKER.match(line)
        if m and m.group(1) == "Q":
            cards.append((lineno, [m.group(2)], None))
        elif m:  # "A:"
            if not cards or cards[-1][2] is not None:
                raise CardImportError(f"{source}: line {lineno}: 'A:' without a 'Q:' before it")
            cards[-1] = (cards[-1][0], cards[-1][1], [m.group(2)])
        elif cards:
            (cards[-1][2] if cards[-1][2] is not None else cards[-1][1]).append(line)
    pairs = []
    for lineno, question, answer in cards:
        if answer is None:
            raise CardImportError(f"{source}: line {lineno}: question has no 'A:' answer")
        pairs.append(_checked(lineno, "\n".join(question).strip(), "\n".join(answer).strip(), source))
    return pairs


def _unquote(field: str) -> str:
    """A spreadsheet's quoting removed (a field in double quotes, inner quotes doubled)."""
    field = field.strip()
    if len(field) >= 2 and field[0] == field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


def parse_tsv(text: str, source: str = "<text>") -> list[tuple[str, str]]:
    """One card a line: the front, a tab, the back (which keeps any further tabs); ``#`` comments.

    Lines are never joined (a stray quote cannot swallow the rest of the file).
    """
    pairs = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        front, tab, back = line.partition("\t")
        if not tab:
            raise CardImportError(f"{source}: line {lineno}: need front<TAB>back")
        pairs.append(_checked(lineno, _unquote(front), _unquote(back), source))
    return pairs


def _checked(lineno: int, front: str, back: str, source: str) -> tuple[str, str]:
    for side, value in (("question", front), ("answer", back)):
        if not value:
            raise CardImportError(f"{source}: line {lineno}: the {side} is empty")
        if len(value) > MAX_SIDE_CHARS:
            raise CardImportError(f"{source}: line {lineno}: the {side} has {len(value):,} characters "
                                  f"(at most {MAX_SIDE_CHARS:,})")
    return front, back


def read_card_file(path: Path | str) -> list[tuple[str, str]]:
    """The cards of a ``.md``/``.txt`` (Q:/A:) or ``.tsv``/``.tab`` file, checked (not stored)."""
    path = Path(path)
    try:
        raw = guarded.read_bytes(path, MAX_IMPORT_BYTES)  # a regular file, not waited on, within the limit
    except UnsafeFileError as e:
        why = f"too large for a card file (at most {MAX_IMPORT_BYTES >> 20} MiB)" if e.too_large else e.strerror
        raise CardImportError(f"{path.name}: {why}") from None
    except IsADirectoryError:
        raise CardImportError(f"{path.name}: not a regular file (a folder)") from None
    except OSError as e:
        raise CardImportError(f"{path.name}: cannot read ({e.strerror or e})") from None
    if b"\x00" in raw:
        raise CardImportError(f"{path.name}: contains NUL bytes; this looks like a binary file, not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise CardImportError(f"{path.name}: line {line} is not valid UTF-8; save the file as UTF-8") from None
    pairs = (parse_tsv(text, path.name) if path.suffix.lower() in (".tsv", ".tab")
             else parse_markdown(text, path.name))
    if not pairs:
        raise CardImportError(f"{path.name}: no cards found (expected Q:/A: blocks or front<TAB>back)")
    seen: dict[str, int] = {}
    for number, (front, _) in enumerate(pairs, 1):
        if front in seen:
            raise CardImportError(f"{path.name}: cards {seen[front]} and {number} have the same question; "
                                  f"merge or reword them")
        seen[front] = number
    return pairs


def user_card_id(deck_name: str, front: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", deck_name.lower()).strip("-") or "mine"
    return f"user.{slug}.{hashlib.sha1(front.strip().encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def import_file(store: Store, path: Path | str, deck_name: str = "mine") -> list[str]:
    """Import a ``.md``/``.txt`` (Q:/A:) or ``.tsv`` file; returns the card ids written.

    All or nothing: a malformed file (CardImportError) or a database that refuses the write
    (``minigpt.store.StoreError``) leaves the stored cards as they were.
    """
    path = Path(path)
    pairs = read_card_file(path)
    now = scheduler.iso(scheduler.utc_now())
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
