"""Checking a typed term: normalisation, aliases, a small typo budget, confusables, a diff.

``match_answer(typed, expected, aliases=(), confusables=())`` returns a ``MatchResult``:
``verdict`` is "exact" (or an accepted alias), "typo" (close enough, graded Hard), or "wrong".
A listed confusable is wrong even when it is within the typo budget of the expected answer:
"batch normalization" is a different idea from "layer normalization", not a misspelling.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_PUNCT = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Case-fold, strip accents, turn hyphens/punctuation into spaces, collapse whitespace."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(ch for ch in t if not unicodedata.combining(ch)).casefold()
    t = t.replace("-", " ").replace("\u2013", " ").replace("\u2014", " ")
    t = _PUNCT.sub(" ", t)
    t = _SPACE.sub(" ", t).strip()
    # British and American spellings of the same word count as the same answer.
    t = re.sub(r"(?<=[a-z])isation", "ization", t)
    t = re.sub(r"(?<=[a-z])ise\b", "ize", t)
    return t


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
                 budget: int | None = None) -> MatchResult:
    got = _compact(typed)
    forms = [expected, *aliases]
    diff = char_diff(typed, expected)
    if not got:
        return MatchResult("wrong", None, len(_compact(expected)), None, diff)
    for form in forms:
        if got == _compact(form):
            return MatchResult("exact", form, 0, None, diff)
    for conf in confusables:
        if got == _compact(conf) or edit_distance(got, _compact(conf)) < min(
            edit_distance(got, _compact(f)) for f in forms
        ):
            return MatchResult("wrong", None, edit_distance(got, _compact(expected)), conf, diff)
    best, best_d = None, 10**9
    for form in forms:
        d = edit_distance(got, _compact(form))
        if d < best_d:
            best, best_d = form, d
    allowed = typo_budget(best) if budget is None else budget
    if best_d <= allowed:
        return MatchResult("typo", best, best_d, None, diff)
    return MatchResult("wrong", None, best_d, None, diff)
