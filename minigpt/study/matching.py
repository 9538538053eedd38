"""Checking a typed term: normalisation, aliases, a small typo budget, confusables, a diff.

``match_answer(typed, expected, aliases=(), confusables=())`` returns a ``MatchResult``:
``verdict`` is "exact" (or an accepted alias), "typo" (close enough, graded Hard), or "wrong".
A listed confusable is wrong even when it is within the typo budget of the expected answer:
"batch normalization" is a different idea from "layer normalization", not a misspelling.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

# The longest typed answer graded: a term, or a cloze's few blanks, is far shorter. Beyond it the
# answer is cut before grading (its edit distance costs length × the answer's: 19 s for a pasted
# megabyte, on the app's thread), and the app's answer box stops there.
MAX_ANSWER_CHARS = 500

_PUNCT = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")


# Dashes and the minus sign all read as "-" (a learner types "-" for the "−" a card shows).
_DASHES = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-",
                         "\u2013": "-", "\u2014": "-", "\ufe63": "-", "\uff0d": "-"})


def _fold(text: str) -> str:
    """Compatibility-decompose, drop accents, case-fold; twice, since case-folding can produce
    letters that decompose again (so that the result is a fixed point)."""
    for _ in range(2):
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    return text.translate(_DASHES)


def normalize(text: str) -> str:
    """Case-fold, strip accents, turn hyphens/punctuation into spaces, collapse whitespace.

    An answer made only of symbols ("−∞", "√") keeps its symbols, without spaces: normalising
    never turns a non-blank answer into nothing (an empty form would match nothing typed).
    """
    t = _fold(text)
    words = _SPACE.sub(" ", _PUNCT.sub(" ", t.replace("-", " "))).strip()
    if not words:
        return _SPACE.sub("", t)
    # British and American spellings of the same word count as the same answer.
    words = re.sub(r"(?<=[a-z])isation", "ization", words)
    return re.sub(r"(?<=[a-z])ise\b", "ize", words)


@functools.lru_cache(maxsize=8192)  # a deck's names are compacted once, not per answer
def _compact(text: str) -> str:
    return normalize(text).replace(" ", "")


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein (optimal string alignment): swapping two letters is one typo."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = ca != cb
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def typo_budget(expected: str) -> int:
    """0 for up to 3 characters, 1 up to 6, 2 up to 12, then one more per 8 characters."""
    n = len(_compact(expected))
    if n <= 3:
        return 0
    if n <= 6:
        return 1
    if n <= 12:
        return 2
    return 2 + (n - 5) // 8


def _nearer(got: str, other: str, best: int, strictly: bool) -> bool:
    """Is ``other`` nearer to ``got`` than ``best`` (or as near, unless ``strictly``)?"""
    if abs(len(got) - len(other)) > best:  # cheap bound: the distance is at least that
        return False
    d = edit_distance(got, other)
    return d < best or (not strictly and d == best)


@dataclass(frozen=True)
class MatchResult:
    verdict: str                  # "exact" | "typo" | "wrong"
    matched: str | None           # the accepted form that matched (expected or an alias)
    distance: int
    confusable: str | None        # set when the answer is a listed confusable
    diff: list[tuple[str, str]]   # (op, text) pairs: "equal" | "insert" | "delete"

    @property
    def correct(self) -> bool:
        return self.verdict != "wrong"

    @property
    def rating(self) -> int:
        """Again (1) when wrong, Hard (2) for a typo, Good (3) when exact."""
        return {"wrong": 1, "typo": 2, "exact": 3}[self.verdict]


def char_diff(typed: str, expected: str) -> list[tuple[str, str]]:
    """Character diff from what was typed to what was expected, for colouring.

    "delete" = typed but not expected, "insert" = expected but missing, "equal" = shared.
    """
    import difflib

    a, b = typed.strip(), expected.strip()
    out: list[tuple[str, str]] = []
    sm = difflib.SequenceMatcher(None, a.lower(), b.lower(), autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            out.append(("equal", b[j1:j2]))
        else:
            if i2 > i1:
                out.append(("delete", a[i1:i2]))
            if j2 > j1:
                out.append(("insert", b[j1:j2]))
    return out


def match_answer(typed: str, expected: str, aliases=(), confusables=(),
                 budget: int | None = None, rivals=()) -> MatchResult:
    """Grade ``typed`` against ``expected`` and its ``aliases``.

    ``confusables`` are listed near-misses, wrong whenever the typed text is nearer to one of
    them than to every accepted form. ``rivals`` are the names of the deck's other concepts: a
    typed string that would pass as a typo is wrong when a rival is at least as close, so no
    string is ever right for two concepts. Only the first MAX_ANSWER_CHARS of ``typed`` are graded.
    """
    typed = typed[:MAX_ANSWER_CHARS]
    got = _compact(typed)
    forms = [expected, *aliases]
    diff = char_diff(typed, expected)
    if not got:
        return MatchResult("wrong", None, len(_compact(expected)), None, diff)
    for form in forms:
        if got == _compact(form):
            return MatchResult("exact", form, 0, None, diff)
    own = {_compact(f) for f in forms}
    best, best_d = None, 10**9
    for form in forms:
        d = edit_distance(got, _compact(form))
        if d < best_d:
            best, best_d = form, d
    allowed = typo_budget(best) if budget is None else budget
    near_miss = best_d <= allowed
    for other, always in [(c, True) for c in confusables] + [(r, False) for r in rivals]:
        c = _compact(other)
        if not c or c in own:
            continue  # the same words as an accepted form: not a rival
        if got == c or ((always or near_miss) and _nearer(got, c, best_d, always)):
            return MatchResult("wrong", None, edit_distance(got, _compact(expected)), other, diff)
    if near_miss:
        return MatchResult("typo", best, best_d, None, diff)
    return MatchResult("wrong", None, best_d, None, diff)
