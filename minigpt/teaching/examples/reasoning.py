"""Worked examples for "Reasoning models": pass@k, majority voting, how GRPO, DAPO and Dr. GRPO
weigh tokens, DAPO's clip and length penalty, and a process reward model's scores."""

from __future__ import annotations

from minigpt.teaching import reasoning as R
from minigpt.teaching.examples.registry import count, example, fmt, table

PASS_N = 10
PASS_CASES = ((1, 1), (1, 5), (3, 1), (3, 5), (3, 8), (5, 5))


@example("reasoning.pass_at_k", "pass@k from 10 samples: the unbiased estimate and the plug-in")
def _pass_at_k() -> str:
    rows = [[c, k, fmt(R.pass_at_k(PASS_N, c, k), 3), fmt(R.pass_at_k_plugin(PASS_N, c, k), 3)]
            for c, k in PASS_CASES]
    return (table(["right of 10", "k", "1 − C(n−c,k)/C(n,k)", "1 − (1 − c/n)^k"], rows)
            + "\n\nThe plug-in form treats the k tries as drawn with replacement, so it can "
              "draw the same wrong answer twice; it is lower for every k > 1. At k = 1 the two "
              "agree (c/n), and with 3 right of 10 any 8 samples must hold a right one, which "
              "only the unbiased form says.")


VOTE_CASES = (("right answer the most likely", {"right": 0.4, "x": 0.35, "y": 0.25}),
              ("one wrong answer more likely", {"right": 0.3, "x": 0.5, "y": 0.2}))
VOTES = (1, 3, 5, 7)


@example("reasoning.self_consistency", "Majority voting over n samples, three possible answers")
def _self_consistency() -> str:
    rows = []
    for label, probs in VOTE_CASES:
        for n in VOTES:
            rows.append([label if n == VOTES[0] else "", n,
                         fmt(R.majority_vote_accuracy(probs, "right", n), 3),
                         fmt(R.best_of_n_with_verifier(probs["right"], n), 3)])
    return (table(["one sample's answers", "n", "majority right", "any right"], rows)
            + "\n\nOne sample's chances: "
            + "; ".join(", ".join(f"{a} {p:.0%}" for a, p in probs.items())
                        for _, probs in VOTE_CASES)
            + ". Voting helps only when the right "
              "answer is the most likely single answer; otherwise more votes lock in the "
              "wrong one. 'Any right' is best-of-n with a perfect verifier (pass@n), the "
              "ceiling a reward model can reach by picking.")


GROUP_REWARDS = [1.0, 1.0, 0.0, 0.0]
GROUP_LENGTHS = [200, 800, 300, 1600]
GENERATION_LIMIT = 2048


@example("reasoning.token_weights", "How three objectives weigh each token of four answers")
def _token_weights() -> str:
    methods = ("GRPO", "DAPO", "Dr. GRPO")
    weights = {m: R.token_weights(GROUP_REWARDS, GROUP_LENGTHS, m, GENERATION_LIMIT)
               for m in methods}
    rows = []
    for i, (r, n) in enumerate(zip(GROUP_REWARDS, GROUP_LENGTHS, strict=True)):
        rows.append([f"{'right' if r else 'wrong'}, {count(n)} tokens"]
                    + [fmt(weights[m][i] * 1e4, 2) for m in methods]
                    + [fmt(weights["GRPO"][i] * n, 3)])
    return (table(["answer", "GRPO ×1e4", "DAPO ×1e4", "Dr. GRPO ×1e4", "GRPO whole"], rows)
            + "\n\nEach number multiplies one token's log-probability gradient on the first "
              "update (ratio 1, nothing clipped). GRPO divides by the answer's own length, so "
              "every answer gets the same total push whatever its length: a short right "
              "answer's tokens are pushed hard, and a long wrong answer's tokens are "
              "punished least, which lets wrong answers grow long. DAPO divides by all the "
              f"group's tokens ({count(sum(GROUP_LENGTHS))}) and Dr. GRPO by the fixed limit "
              f"({count(GENERATION_LIMIT)}): every token of a right answer weighs the same.")


STD_GROUPS = (1, 4, 7)  # right answers out of 8


@example("reasoning.std_scaling", "A right answer's advantage, groups of 8: with and without std")
def _std_scaling() -> str:
    rows = []
    for right in STD_GROUPS:
        rewards = [1.0] * right + [0.0] * (8 - right)
        rows.append([f"{right} of 8", fmt(R.grpo_advantages(rewards)[0], 3),
                     fmt(R.dr_grpo_advantages(rewards)[0], 3)])
    return (table(["group", "GRPO (r − mean)/std", "Dr. GRPO r − mean"], rows)
            + "\n\nDividing by the group's spread lifts questions the model nearly always or "
              "nearly never solves: one success of 8 earns more than twice the push it gets "
              "without the division. Dr. GRPO drops the division so that every question's "
              "update has the scale of its rewards.")


CLIP_PROBS = (0.01, 0.1, 0.5, 0.9)


@example("reasoning.dapo_clip", "How far one update may move a token: ε = 0.2 against 0.28 above")
def _dapo_clip() -> str:
    rows = []
    for p in CLIP_PROBS:
        lo, hi = R.clip_range(p, 0.2, 0.2)
        _, dapo_hi = R.clip_range(p, 0.2, 0.28)
        rows.append([fmt(p, 2), f"{fmt(lo, 4)} – {fmt(hi, 4)}", fmt(dapo_hi, 4),
                     fmt(dapo_hi - p, 4)])
    return (table(["π_old", "PPO/GRPO range", "DAPO upper", "DAPO rise"], rows)
            + "\n\nThe clip bounds the ratio, so a rare token can gain only a sliver of "
              "probability per update while a likely one gains a lot: exploration dies as "
              "entropy collapses. DAPO keeps the lower bound at 0.2 and raises the upper one to "
              "0.28 ('clip-higher'), giving unlikely tokens more room to grow.")


OVERLONG_MAX, OVERLONG_CACHE = 20480, 4096
OVERLONG_LENGTHS = (12000, 16384, 18432, 20480, 21000)


@example("reasoning.overlong", "DAPO's length penalty: limit 20,480 tokens, 4,096 of soft zone")
def _overlong() -> str:
    rows = [[count(n), fmt(R.overlong_penalty(n, OVERLONG_MAX, OVERLONG_CACHE), 2)]
            for n in OVERLONG_LENGTHS]
    return (table(["answer length", "added reward"], rows)
            + "\n\nAn answer cut off by the limit has no final answer to check; scoring it "
              "plainly wrong would punish sound reasoning that merely ran long. The penalty "
              f"instead grows linearly through the last {count(OVERLONG_CACHE)} tokens.")


PRM_SOLUTIONS = (("A", [0.95, 0.9, 0.9, 0.3]), ("B", [0.8, 0.8, 0.75, 0.8]),
                 ("C", [0.99, 0.6, 0.95, 0.95]))


@example("reasoning.prm", "Three solutions scored step by step by a process reward model")
def _prm() -> str:
    rows = [[name, ", ".join(fmt(p, 2) for p in steps), fmt(R.prm_score(steps), 3),
             fmt(R.prm_score(steps, "min"), 2)] for name, steps in PRM_SOLUTIONS]
    best = {how: max(PRM_SOLUTIONS, key=lambda s, h=how: R.prm_score(s[1], h))[0]
            for how in ("product", "min")}
    return (table(["solution", "P(step right)", "product", "weakest"], rows)
            + f"\n\nBest-of-3 picks {best['product']} by the product and {best['min']} by "
              "the weakest step. A confident start does not save A, whose last step is "
              "probably wrong; an outcome reward model sees only the end and cannot say where "
              "a solution went wrong.")
