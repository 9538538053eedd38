"""Flashcard decks as data: load ``lessons/decks/*.toml`` into ``StudyCard`` objects (the card and
the Deck are ``minigpt.study.cards``).

Schema of a deck file (every id is written in the file and never derived from text, so that
editing a card's wording keeps the learner's progress, which is keyed on the id):

    [deck]
    id = "transformers"            # informational
    title = "Transformers"

    [[card]]                       # kind = "term": yields two study cards,
    id = "term.layer-norm"         #   "term.layer-norm"          term -> definition
    kind = "term"                  #   "term.layer-norm:reverse"  definition -> term
    lesson = "transformer-block"   # (set reverse = false to skip the second one)
    tags = ["normalisation"]
    term = "layer normalization"
    definition = "..."
    aliases = ["layernorm", "LN"]            # also accepted when typing the term
    confusables = ["batch normalization"]    # always WRONG when typed, however close
    group = "normalisation"                  # sibling concepts: distractors come from the group
    [[card.distractors]]                     # known misconceptions for multiple choice
    text = "..."
    why = "why that is wrong"

    [[card]]  kind = "question": front, answer (model answer), checklist (3-5 points),
              short (optional: a one-sentence right answer for multiple choice, which also needs
              at least two [[card.distractors]] of similar length), keys (optional: per
              checklist point, a list of accepted phrases for the offline rubric check)
    [[card]]  kind = "cloze": text with {{c1::hidden}} parts (all hidden at once), hint optional;
              the blanks are all words or all numbers (numbers are compared by value, within
              tolerance / abs_tolerance, default exact); a one-blank cloze lists its other
              accepted words in ``aliases``, a cloze of several blanks per blank:
              ``blank_aliases = { c2 = ["significand"] }``
    related = ["term.decoder-only"]  # optional on any card: ids of cards whose concept is also
                                     # right for this one (GPT and decoder-only, a method and its
                                     # special case); their text is never a wrong option here
    category = "paper"             # optional on a term: what it names ("concept" by default);
                                   # the options of one question all name the same category
    note = "..."                   # optional on any card: cards sharing a note are siblings (the
                                   # same fact asked another way) and are never shown back to back;
                                   # a term's two directions and a numeric's cases share one already

    [[numeric]]                    # numbers computed by minigpt.study.numeric, never typed
    id = "num.block-params"
    generator = "block_params"     # a name in minigpt.study.generators.GENERATORS
    lesson = "transformer-block"
    tolerance = 0.01               # relative, unless abs_tolerance is given
    template = true                # optional: new inputs drawn at each review (the generator's
                                   # template in minigpt.study.templates); one card, id the note's
    [[numeric.case]]
    id = "d768"                    # study card id: "num.block-params.d768" (without template);
    d = 768                        # with one, the first case is the instance shown until a draw
"""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path

from minigpt import guarded
from minigpt.errors import DeckError
from minigpt.study.cards import CATEGORIES, CLOZE_RE, ID_RE, Deck, Distractor, StudyCard, cloze_render


def default_decks_dir() -> Path:
    from minigpt.paths import lessons_dir

    return lessons_dir() / "decks"


def _need(tbl: dict, key: str, where: str, typ=str):
    if key not in tbl:
        raise DeckError(f"{where}: missing {key!r}")
    val = tbl[key]
    if typ is str and (not isinstance(val, str) or not val.strip()):
        raise DeckError(f"{where}: {key!r} must be a non-empty string")
    if typ is list and not isinstance(val, list):
        raise DeckError(f"{where}: {key!r} must be a list")
    return val


def _strs(tbl: dict, key: str, where: str) -> tuple[str, ...]:
    val = tbl.get(key, [])
    if not isinstance(val, list) or not all(isinstance(v, str) and v.strip() for v in val):
        raise DeckError(f"{where}: {key!r} must be a list of non-empty strings")
    return tuple(val)


def _card_from_table(tbl: dict, path: Path, index: int) -> list[StudyCard]:
    where = f"{path.name}: card #{index + 1}"
    cid = _need(tbl, "id", where)
    where = f"{path.name}: card {cid!r}"
    if not ID_RE.match(cid):
        raise DeckError(f"{where}: id must be lower-case letters, digits and . _ : -")
    kind = _need(tbl, "kind", where)
    lesson = _need(tbl, "lesson", where)
    tags = _strs(tbl, "tags", where)
    dis = []
    for j, d in enumerate(tbl.get("distractors", [])):
        if not isinstance(d, dict):
            raise DeckError(f"{where}: distractor #{j + 1} must be a table with text and why")
        dis.append(Distractor(_need(d, "text", f"{where} distractor #{j + 1}"),
                              _need(d, "why", f"{where} distractor #{j + 1}")))
    note = tbl.get("note", "")
    if not isinstance(note, str):
        raise DeckError(f"{where}: 'note' must be a string")
    common = dict(lesson=lesson, tags=tags, distractors=tuple(dis), source=str(path),
                  group=tbl.get("group", ""), related=_strs(tbl, "related", where))
    if kind == "term":
        term = _need(tbl, "term", where)
        definition = _need(tbl, "definition", where)
        category = tbl.get("category", "concept")
        if category not in CATEGORIES:
            raise DeckError(f"{where}: category must be one of {', '.join(CATEGORIES)}")
        extra = dict(term=term, definition=definition, aliases=_strs(tbl, "aliases", where),
                     category=category,
                     confusables=_strs(tbl, "confusables", where))
        cards = [StudyCard(id=cid, kind="term", front=term, back=definition, note=note or cid,
                           **extra, **common)]
        if tbl.get("reverse", True):
            cards.append(StudyCard(id=f"{cid}:reverse", kind="reverse", front=definition,
                                   back=term, note=note or cid, **extra, **common))
        return cards
    if kind == "question":
        front = _need(tbl, "front", where)
        answer = _need(tbl, "answer", where)
        checklist = _strs(tbl, "checklist", where)
        if not 3 <= len(checklist) <= 5:
            raise DeckError(f"{where}: checklist needs 3 to 5 points, has {len(checklist)}")
        short = tbl.get("short", "")
        if not isinstance(short, str):
            raise DeckError(f"{where}: 'short' must be a string")
        if short and len(dis) < 2:
            raise DeckError(f"{where}: a 'short' answer needs at least two distractors")
        return [StudyCard(id=cid, kind="question", front=front, back=answer,
                          checklist=checklist, short=short.strip(), note=note,
                          rubric_keys=_rubric_keys(tbl, checklist, where), **common)]
    if kind == "cloze":
        text = _need(tbl, "text", where)
        answers = tuple(m.group(2) for m in CLOZE_RE.finditer(text))
        if not answers:
            raise DeckError(f"{where}: cloze text has no {{{{c1::...}}}} part")
        from minigpt.numbers import is_number

        if len({is_number(a) for a in answers}) > 1:
            raise DeckError(f"{where}: blanks must be all words or all numbers, not a mix")
        tolerances = {}
        for key in ("tolerance", "abs_tolerance"):
            value = tbl.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise DeckError(f"{where}: {key!r} must be a number ≥ 0")
            tolerances[key] = float(value)
        aliases = _strs(tbl, "aliases", where)
        return [StudyCard(id=cid, kind="cloze", front=cloze_render(text),
                          back=cloze_render(text, reveal=True), cloze_answers=answers,
                          aliases=aliases, blank_aliases=_blank_aliases(tbl, text, aliases, where),
                          confusables=_strs(tbl, "confusables", where), note=note,
                          **tolerances, **common)]
    raise DeckError(f"{where}: unknown kind {kind!r} (term, question or cloze; "
                    f"numbers go in [[numeric]] tables)")


def _rubric_keys(tbl: dict, checklist: tuple[str, ...], where: str) -> tuple[tuple[str, ...], ...]:
    """``keys``: one list of accepted phrases per checklist point (minigpt.study.rubric)."""
    keys = tbl.get("keys")
    if keys is None:
        return ()
    if not isinstance(keys, list) or len(keys) != len(checklist):
        raise DeckError(f"{where}: 'keys' needs one list of phrases per checklist point ({len(checklist)})")
    return tuple(_strs({"keys": k}, "keys", f"{where} (checklist point #{i + 1})") for i, k in enumerate(keys))


def _blank_aliases(tbl: dict, text: str, aliases: tuple[str, ...],
                   where: str) -> tuple[tuple[str, ...], ...]:
    """Each blank's other accepted words, in the order the blanks appear."""
    numbers = [f"c{m.group(1)}" for m in CLOZE_RE.finditer(text)]
    per_blank = tbl.get("blank_aliases", {})
    if not isinstance(per_blank, dict):
        raise DeckError(f"{where}: 'blank_aliases' must be a table such as {{ c2 = [\"...\"] }}")
    unknown = set(per_blank) - set(numbers)
    if unknown:
        raise DeckError(f"{where}: blank_aliases names no blank {sorted(unknown)[0]!r}")
    if aliases and len(numbers) > 1:
        raise DeckError(f"{where}: a cloze with several blanks lists aliases per blank "
                        f"(blank_aliases = {{ c1 = [...] }}), not in 'aliases'")
    out = []
    for n in numbers:
        own = _strs(per_blank, n, f"{where} blank_aliases")
        out.append(own + aliases if len(numbers) == 1 else own)
    return tuple(out)


def _numeric_cards(tbl: dict, path: Path, index: int, numbers: bool = True) -> list[StudyCard]:
    where = f"{path.name}: numeric #{index + 1}"
    base = _need(tbl, "id", where)
    where = f"{path.name}: numeric {base!r}"
    gen = _need(tbl, "generator", where)
    lesson = _need(tbl, "lesson", where)
    cases = tbl.get("case", [])
    if not cases:
        raise DeckError(f"{where}: needs at least one [[numeric.case]]")
    from minigpt.study.templates import is_template

    # `template = true` makes the note one generative card keyed by the note's id, its first case
    # the instance shown until a review draws a new one; its generator's template
    # (minigpt.study.templates) says how the inputs are drawn.
    declared = tbl.get("template", False)
    if not isinstance(declared, bool):
        raise DeckError(f"{where}: template must be true or false")
    if declared and not is_template(gen):
        raise DeckError(f"{where}: generator {gen!r} has no template to draw inputs from "
                        f"(minigpt.study.templates); drop `template = true`")
    template = gen if declared else ""
    out = []
    for j, case in enumerate(cases[:1] if template else cases):
        cwhere = f"{where} case #{j + 1}"
        cid = _need(case, "id", cwhere)
        card_id = base if template else f"{base}.{cid}"
        params = {k: v for k, v in case.items() if k != "id"}
        if not numbers:  # described, not computed (no torch): for listings such as flag reports
            said = ", ".join(f"{k}={v}" for k, v in params.items())
            out.append(StudyCard(id=card_id, kind="numeric", lesson=lesson,
                                 front=f"{gen}({said})", back="(computed when studied)",
                                 source=str(path), note=tbl.get("note", base), template=template))
            continue
        from minigpt.study import numeric

        try:
            item = numeric.generate(gen, params, tolerance=tbl.get("tolerance"),
                                    abs_tolerance=tbl.get("abs_tolerance"))
        except (KeyError, TypeError, ValueError) as e:
            raise DeckError(f"{cwhere}: cannot generate {gen!r}: {e}") from e
        out.append(StudyCard(id=card_id, kind="numeric", lesson=lesson,
                             front=item.prompt, back=item.solution, numeric=item,
                             tags=_strs(tbl, "tags", where), source=str(path),
                             note=tbl.get("note", base), template=template))
    return out


def load_deck_file(path: Path | str, *, numbers: bool = True) -> list[StudyCard]:
    path = Path(path)
    try:
        data = tomllib.loads(guarded.read_text(path, guarded.TEXT_FILE_BYTES))
    except (OSError, UnicodeDecodeError) as e:  # a FIFO, a device, a file too large: refused, never waited on
        raise DeckError(f"{path.name}: cannot read ({getattr(e, 'strerror', None) or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise DeckError(f"{path.name}: not valid TOML: {e}") from e
    cards: list[StudyCard] = []
    for i, tbl in enumerate(data.get("card", [])):
        cards += _card_from_table(tbl, path, i)
    for i, tbl in enumerate(data.get("numeric", [])):
        cards += _numeric_cards(tbl, path, i, numbers)
    return cards


def load_decks(directory: Path | str | None = None, *, numbers: bool = True) -> Deck:
    """Every ``*.toml`` deck in the folder (coverage.toml excluded), ids checked unique.

    ``numbers=False`` describes numeric cards instead of computing them (no torch import)."""
    directory = Path(directory) if directory else default_decks_dir()
    deck = Deck()
    for path in sorted(directory.glob("*.toml")):
        if path.name == "coverage.toml":
            continue
        deck.files.append(path)
        for card in load_deck_file(path, numbers=numbers):
            if card.id in deck.cards:
                raise DeckError(f"{path.name}: card {card.id!r}: duplicate id "
                                f"(also in {Path(deck.cards[card.id].source).name})")
            deck.cards[card.id] = card
    for card in deck:
        for other in card.related:
            if other not in deck.cards:
                raise DeckError(f"{Path(card.source).name}: card {card.id!r}: related card "
                                f"{other!r} does not exist")
    return deck


_cache: dict[bool, tuple[tuple, Deck]] = {}  # by ``numbers``: computed decks, described decks
_cache_lock = threading.Lock()


def cached_decks(directory: Path | str | None = None, *, numbers: bool = True) -> Deck:
    """The bundled decks, read once and again only when a deck file changes (same folder).

    Reading builds every numeric card (importing torch: a second or two of CPU), so the app calls
    this from a worker thread; the lock makes concurrent first calls read the files once. Callers
    share the returned Deck and must not change it (``with_user_cards`` makes a copy).
    ``numbers=False`` describes numeric cards instead (:func:`load_decks`): the same ids and
    lessons without torch, all that counting cards needs (the home screen's glance).
    """
    folder = Path(directory) if directory else default_decks_dir()
    with _cache_lock:
        key = (str(folder.resolve()),
               tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.toml"))))
        held = _cache.get(numbers)
        if held is None or held[0] != key:
            held = _cache[numbers] = (key, load_decks(folder, numbers=numbers))
        return held[1]
