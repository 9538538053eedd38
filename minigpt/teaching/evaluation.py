"""The maths of evaluating language models on small numbers: n-gram overlap as a contamination
check, a judge's position consistency when the two answers are swapped, the expected
calibration error, and the standard error of a benchmark score.

- Contamination: GPT-3 (Brown et al. 2020) flagged a test item if any 13-word sequence of it
  appeared in the training data; the share of an item's n-grams found there is the milder form.
- LLM-as-judge biases (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena"): position, verbosity and self-enhancement; asking twice with the answers swapped and
  keeping only the verdicts that agree is the usual check for the first.
- Expected calibration error (Guo et al. 2017, "On Calibration of Modern Neural Networks"):
  predictions binned by confidence; Σ_b (|B_b| / N) · |accuracy(B_b) − confidence(B_b)|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def words(text: str) -> list[str]:
    """Lower-case words, punctuation dropped: overlap checks compare normalised text."""
    return "".join(ch.lower() if ch.isalnum() else " " for ch in text).split()


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def ngram_overlap(item: str, corpus: str, n: int) -> float:
    """The share of the item's distinct n-grams that occur in the corpus (0 if it has none)."""
    mine = ngrams(item, n)
    if not mine:
        return 0.0
    return len(mine & ngrams(corpus, n)) / len(mine)


# --- a judge asked twice, the answers swapped ---------------------------------------------


@dataclass(frozen=True)
class SwapReport:
    consistent: int  # the same answer wins in both orders
    first_both: int  # the answer shown first wins both times
    second_both: int  # the answer shown second wins both times
    total: int

    @property
    def consistency(self) -> float:
        return self.consistent / self.total


def swap_report(verdicts: list[tuple[str, str]]) -> SwapReport:
    """Each pair is (winner with A shown first, winner with B shown first), winners "A" or "B".
    Agreeing verdicts name the same answer; a judge that always picks the first slot answers
    ("A", "B"), the second slot ("B", "A")."""
    consistent = sum(1 for ab, ba in verdicts if ab == ba)
    first = sum(1 for ab, ba in verdicts if (ab, ba) == ("A", "B"))
    second = sum(1 for ab, ba in verdicts if (ab, ba) == ("B", "A"))
    return SwapReport(consistent, first, second, len(verdicts))


# --- calibration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int
    accuracy: float
    confidence: float


def calibration_bins(confidences: list[float], correct: list[bool], n_bins: int) -> list[Bin]:
    """Equal-width confidence bins over [0, 1]; a prediction at a boundary goes to the upper bin,
    1.0 to the last. Empty bins are kept with count 0."""
    bins = []
    for b in range(n_bins):
        low, high = b / n_bins, (b + 1) / n_bins
        members = [(p, ok) for p, ok in zip(confidences, correct, strict=True)
                   if low <= p < high or (b == n_bins - 1 and p == 1.0)]
        if members:
            acc = sum(ok for _, ok in members) / len(members)
            conf = sum(p for p, _ in members) / len(members)
        else:
            acc = conf = 0.0
        bins.append(Bin(low, high, len(members), acc, conf))
    return bins


def expected_calibration_error(confidences: list[float], correct: list[bool],
                               n_bins: int) -> float:
    n = len(confidences)
    return sum(b.count / n * abs(b.accuracy - b.confidence)
               for b in calibration_bins(confidences, correct, n_bins))


def standard_error(accuracy: float, n_questions: int) -> float:
    """The standard error of a benchmark accuracy measured on n independent questions."""
    return math.sqrt(accuracy * (1 - accuracy) / n_questions)
