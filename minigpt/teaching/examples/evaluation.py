"""Worked examples for "Evaluation": contamination by n-gram overlap, a judge asked twice,
pass@k over a benchmark, the expected calibration error and a score's standard error."""

from __future__ import annotations

from minigpt.teaching import evaluation, reasoning
from minigpt.teaching.examples.registry import count, example, fmt, table

TRAINING_TEXT = (
    "A train leaves the station at 3 pm travelling at 60 miles per hour. "
    "Another train leaves the same station at 4 pm travelling at 80 miles per hour. "
    "The recipe asks for two cups of flour and one egg."
)
TEST_ITEMS = (
    ("copied", "A train leaves the station at 3 pm travelling at 60 miles per hour."),
    ("reworded", "At 3 pm a train departs from the station, moving at 60 mph."),
    ("fresh", "How many edges does a cube have, and how many faces?"),
)
OVERLAP_N = (3, 8)


@example("eval.contamination", "Three test items against a training text: n-gram overlap")
def _contamination() -> str:
    rows = [[label] + [f"{evaluation.ngram_overlap(text, TRAINING_TEXT, n):.0%}" for n in OVERLAP_N]
            for label, text in TEST_ITEMS]
    return (table(["test item", "3-grams found", "8-grams found"], rows)
            + "\n\nWords are lower-cased and punctuation dropped before comparing. The copy "
              "is caught at any n; the rewording shares a few short phrases and no long "
              "one, so a long-n check misses it. Real checks use long n-grams (13 words "
              "for GPT-3) to avoid flagging common phrases, and accept that paraphrases slip "
              "through.")


# (winner with A first, winner with B first) for ten questions
JUDGE_VERDICTS = [("A", "A"), ("A", "B"), ("B", "B"), ("A", "B"), ("A", "A"),
                  ("A", "B"), ("B", "B"), ("B", "A"), ("A", "B"), ("A", "A")]


@example("eval.judge_swap", "A judge asked twice on ten pairs, the answers swapped")
def _judge_swap() -> str:
    rep = evaluation.swap_report(JUDGE_VERDICTS)
    rows = [["same answer wins both times", rep.consistent, f"{rep.consistency:.0%}"],
            ["first slot wins both times", rep.first_both, f"{rep.first_both / rep.total:.0%}"],
            ["second slot wins both times", rep.second_both,
             f"{rep.second_both / rep.total:.0%}"]]
    return (table(["outcome", "pairs", "share"], rows)
            + f"\n\nOnly {rep.consistent} of {rep.total} verdicts survive the swap; the "
              "others follow the slot, and mostly the first one: this judge has a position "
              "bias. Counting a flip as a tie, or averaging both orders, removes the slot's "
              "effect from the score.")


BENCH_N = 200
BENCH_RIGHT = (0, 2, 20, 150, 200)  # right answers of 200 samples, for five problems
BENCH_K = (1, 10, 100)


@example("eval.pass_at_k", "pass@k over five problems, 200 samples each")
def _bench_pass_at_k() -> str:
    rows = [[c] + [fmt(reasoning.pass_at_k(BENCH_N, c, k), 3) for k in BENCH_K] for c in BENCH_RIGHT]
    means = [sum(reasoning.pass_at_k(BENCH_N, c, k) for c in BENCH_RIGHT) / len(BENCH_RIGHT)
             for k in BENCH_K]
    rows.append(["benchmark mean"] + [fmt(m, 3) for m in means])
    return (table(["right of 200"] + [f"pass@{k}" for k in BENCH_K], rows)
            + "\n\nThe estimate is made per problem and then averaged. Sampling many more "
              "answers than k (here 200 for k up to 100) keeps its variance low; pass@100 "
              "measures what a model can reach with a verifier, pass@1 what it does alone.")


CONFIDENCES = [0.1, 0.2, 0.3, 0.35, 0.55, 0.6, 0.65, 0.7, 0.8, 0.85, 0.9, 0.95]
CORRECT = [False, False, True, False, True, False, True, True, True, True, True, False]
BINS = 4


@example("eval.ece", "Expected calibration error of twelve answers in four bins")
def _ece() -> str:
    bins = evaluation.calibration_bins(CONFIDENCES, CORRECT, BINS)
    n = len(CONFIDENCES)
    rows = [[f"{b.low:.2f}–{b.high:.2f}", b.count, fmt(b.accuracy, 3), fmt(b.confidence, 3),
             fmt(abs(b.accuracy - b.confidence), 3), fmt(b.count / n * abs(b.accuracy - b.confidence), 4)]
            for b in bins]
    ece = evaluation.expected_calibration_error(CONFIDENCES, CORRECT, BINS)
    top = bins[-1]
    return (table(["bin", "answers", "accuracy", "confidence", "gap", "weighted"], rows)
            + f"\n\nECE = sum of the weighted gaps = {fmt(ece, 4)}. Confidences: "
              + ", ".join(fmt(p, 2) for p in CONFIDENCES) + "; right: "
              + ", ".join("yes" if ok else "no" for ok in CORRECT)
              + f". The top bin claims {fmt(top.confidence, 3)} and is right "
                f"{top.accuracy:.0%} of the time: overconfident. With few answers per bin the "
                "estimate is noisy, and the number of bins changes it.")


SE_ACCURACY = 0.7
SE_SIZES = (100, 500, 2000)


@example("eval.standard_error", "How sure is a 70% score? Standard error by benchmark size")
def _standard_error() -> str:
    rows = []
    for n in SE_SIZES:
        se = evaluation.standard_error(SE_ACCURACY, n)
        rows.append([count(n), fmt(se * 100, 2), f"± {fmt(1.96 * se * 100, 1)}"])
    return (table(["questions", "standard error (points)", "95% interval"], rows)
            + "\n\nSE = √(p(1 − p)/n). On 100 questions a 3-point lead between two models is "
              "well inside the noise; it takes thousands of questions before a gap of a point "
              "or two means anything.")
