"""The offline rubric check: which checklist points of an explain card a typed answer makes.

No model and no network: each point's key words are its own checklist text (plus the point's
``keys`` in the deck, when a point lists accepted variants), and the answer is matched point by
point on normalised, stemmed words, in any order. A point is found when at least
:data:`MATCH_SHARE` of its key words occur in the answer with the same polarity as in the point:
a word with "not", "no", "never" or "n't" up to :data:`NEGATION_WINDOW` words before it is
negated, so "does not run in parallel" does not make "runs in parallel" (and a point that is
itself negative, "RMSNorm does not re-centre", needs the negation). A point's ``keys`` entry is a
list of phrases; any one of them found whole (all its words, same polarity) finds the point.

The deck's term cards lend their aliases: a point's aliases are read as their terms, and an
answer's as both ("LN" also says "layernorm"; "ignore targets" still says "targets"), so a point
need not list every name.

The stemmer is a small suffix rule (:func:`stem`), stated here so the figures can be checked:
lower-case words lose, repeatedly while at least :data:`MIN_STEM` letters stay, the longest of
:data:`SUFFIXES`; "ies"/"ied" become "y". The learner's confirmed ticks are logged in the
``rubric_check`` table (:func:`log_check`) beside the pre-ticks, so the matcher's misses can be
counted later.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from minigpt.skipped_rows import skip
from minigpt.store import Store, _utc_now
from minigpt.study.cards import Deck, StudyCard

MATCH_SHARE = 0.6       # of a point's key words, the share the answer must make
NEGATION_WINDOW = 3     # words before a word that a negation reaches
MIN_STEM = 3
SUFFIXES = ("isation", "ization", "ations", "ation", "ating", "ated", "ates", "ate",
            "ments", "ment", "ness", "ings", "ing",
            "ised", "ized", "ises", "izes", "ise", "ize", "ally", "al", "ies", "ied", "ed",
            "es", "ly", "s", "e")
NEGATIONS = frozenset({"not", "no", "never", "without", "nor"})
# Words that carry no point on their own (as written, before stemming).
STOPWORDS = frozenset("""
a an the of to in on at by for with from as and or but so then than that this these those it its
is are was were be been being do does did has have had can could will would should may might must
each every any all one ones per only also just very much more most less same other into onto over
under up out about than via vs versus what which who whom why how when where there here their they
them we you your our i he she his her e g i.e eg ie etc s t
""".split())
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def stem(word: str) -> str:
    """The suffix rule: strip the longest listed suffix while MIN_STEM letters remain."""
    while True:
        for suffix in SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
                word = word[:-len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
                break
        else:
            return word


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("n't", " not").replace("’", "'").replace("−", "-")
    return text


@dataclass(frozen=True)
class Word:
    stem: str
    negated: bool


def words(text: str, aliases: dict[tuple[str, ...], tuple[str, ...]] | None = None, *,
          keep_alias: bool = False) -> list[Word]:
    """The text's content words, stemmed, each with its polarity; an alias is replaced by its term
    (``keep_alias``: followed by it, for an answer, so that either spelling in a point matches)."""
    raw = [w if w in STOPWORDS or w in NEGATIONS else stem(w) for w in _WORD.findall(_normalise(text))]
    if aliases:
        raw = _rewrite(raw, aliases, keep_alias)
    out: list[Word] = []
    since_negation = NEGATION_WINDOW + 1
    for w in raw:
        if w in NEGATIONS:
            since_negation = 0
            continue
        since_negation += 1
        if w not in STOPWORDS:
            out.append(Word(w, since_negation <= NEGATION_WINDOW))
    return out


def _rewrite(raw: list[str], aliases: dict[tuple[str, ...], tuple[str, ...]], keep_alias: bool) -> list[str]:
    longest = max((len(a) for a in aliases), default=0)
    out: list[str] = []
    i = 0
    while i < len(raw):
        for n in range(min(longest, len(raw) - i), 0, -1):
            term = aliases.get(tuple(raw[i:i + n]))
            if term is not None:
                out.extend((raw[i:i + n] if keep_alias else []) + list(term))
                i += n
                break
        else:
            out.append(raw[i])
            i += 1
    return out


def alias_table(deck: Deck | Iterable[StudyCard]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Every term card's aliases (stemmed word tuples) → its term's words."""
    table: dict[tuple[str, ...], tuple[str, ...]] = {}
    for card in deck:
        if card.kind != "term" or not card.aliases:
            continue
        term = tuple(stem(w) for w in _WORD.findall(_normalise(card.term)))
        for alias in card.aliases:
            key = tuple(stem(w) for w in _WORD.findall(_normalise(alias)))
            if key and key != term and not all(k in STOPWORDS for k in key):
                table.setdefault(key, term)
    return table


@functools.cache
def bundled_aliases() -> dict[tuple[str, ...], tuple[str, ...]]:
    """The alias table of the bundled decks, read once (empty when a deck cannot be read)."""
    from minigpt.errors import DeckError
    from minigpt.study.decks import cached_decks

    try:
        return alias_table(cached_decks())  # the app's one read of the deck files
    except (DeckError, OSError):
        return {}


def _keys(words_: list[Word]) -> set[tuple[str, bool]]:
    return {(w.stem, w.negated) for w in words_}


@dataclass(frozen=True)
class RubricResult:
    points: tuple[str, ...]
    found: tuple[int, ...]      # indices into points, in order

    @property
    def missed(self) -> tuple[int, ...]:
        return tuple(i for i in range(len(self.points)) if i not in self.found)

    def to_dict(self) -> dict[str, list[str]]:
        return {"found": [self.points[i] for i in self.found],
                "missed": [self.points[i] for i in self.missed]}


def point_found(point: str, answer: set[tuple[str, bool]], variants: tuple[str, ...] = (),
                aliases: dict | None = None) -> bool:
    """Does the answer (its word keys) make this checklist point?"""
    for phrase in variants:
        need = _keys(words(phrase, aliases))
        if need and need <= answer:
            return True
    need = _keys(words(point, aliases))
    if not need:
        return False
    return len(need & answer) >= MATCH_SHARE * len(need)


def check(card: StudyCard, answer: str, aliases: dict | None = None) -> RubricResult:
    """The points of the card's checklist that the answer makes, and (``missed``) the rest."""
    said = _keys(words(answer, aliases, keep_alias=True))
    variants = card.rubric_keys or ((),) * len(card.checklist)
    found = tuple(i for i, (point, keys) in enumerate(zip(card.checklist, variants))
                  if point_found(point, said, keys, aliases))
    return RubricResult(card.checklist, found)


def log_check(store: Store, card_id: str, answer: str, suggested: Iterable[int],
              confirmed: Iterable[int]) -> None:
    """The learner's ticks after the pre-ticks: what the matcher suggested and what they kept."""
    with store.transaction() as conn:
        conn.execute("INSERT INTO rubric_check(card_id, answer, suggested, confirmed, checked_at) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (card_id, answer, json.dumps(sorted(suggested)), json.dumps(sorted(confirmed)),
                      _utc_now()))


def corrections(store: Store, card_id: str | None = None) -> list[dict]:
    """Logged checks, oldest first, with their suggested and confirmed points as lists."""
    sql = "SELECT * FROM rubric_check" + (" WHERE card_id = ?" if card_id else "") + " ORDER BY id"
    out = []
    for r in store.conn.execute(sql, (card_id,) if card_id else ()):
        try:
            out.append(dict(r) | {"suggested": json.loads(r["suggested"]), "confirmed": json.loads(r["confirmed"])})
        except (TypeError, ValueError, RecursionError):  # a row the tutor never wrote: counted, left out
            skip(store, "rubric_check", r["id"])
    return out
