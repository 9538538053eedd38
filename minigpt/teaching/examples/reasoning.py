"""Worked examples for "Reasoning models": pass@k, majority voting, how GRPO, DAPO and Dr. GRPO
weigh tokens, DAPO's clip and length penalty, and a process reward model's scores."""

from __future__ import annotations

from minigpt.runs.lab import JOBS
from minigpt.teaching import reasoning
from minigpt.teaching.examples.registry import count, example, fmt, table

PASS_N = 10
PASS_CASES = ((1, 1), (1, 5), (3, 1), (3, 5), (3, 8), (5, 5))


@example("reasoning.pass_at_k", "pass@k from 10 samples: the unbiased estimate and the plug-in")
def _pass_at_k() -> str:
    rows = [[c, k, fmt(reasoning.pass_at_k(PASS_N, c, k), 3), fmt(reasoning.pass_at_k_plugin(PASS_N, c, k), 3)]
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
                         fmt(reasoning.majority_vote_accuracy(probs, "right", n), 3),
                         fmt(reasoning.best_of_n_with_verifier(probs["right"], n), 3)])
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
    weights = {m: reasoning.token_weights(GROUP_REWARDS, GROUP_LENGTHS, m, GENERATION_LIMIT)
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
        rows.append([f"{right} of 8", fmt(reasoning.grpo_advantages(rewards)[0], 3),
                     fmt(reasoning.dr_grpo_advantages(rewards)[0], 3)])
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
        lo, hi = reasoning.clip_range(p, 0.2, 0.2)
        _, dapo_hi = reasoning.clip_range(p, 0.2, 0.28)
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
    rows = [[count(n), fmt(reasoning.overlong_penalty(n, OVERLONG_MAX, OVERLONG_CACHE), 2)]
            for n in OVERLONG_LENGTHS]
    return (table(["answer length", "added reward"], rows)
            + "\n\nAn answer cut off by the limit has no final answer to check; scoring it "
              "plainly wrong would punish sound reasoning that merely ran long. The penalty "
              f"instead grows linearly through the last {count(OVERLONG_CACHE)} tokens.")


PRM_SOLUTIONS = (("A", [0.95, 0.9, 0.9, 0.3]), ("B", [0.8, 0.8, 0.75, 0.8]),
                 ("C", [0.99, 0.6, 0.95, 0.95]))


@example("reasoning.prm", "Three solutions scored step by step by a process reward model")
def _prm() -> str:
    rows = [[name, ", ".join(fmt(p, 2) for p in steps), fmt(reasoning.prm_score(steps), 3),
             fmt(reasoning.prm_score(steps, "min"), 2)] for name, steps in PRM_SOLUTIONS]
    best = {how: max(PRM_SOLUTIONS, key=lambda s, h=how: reasoning.prm_score(s[1], h))[0]
            for how in ("product", "min")}
    return (table(["solution", "P(step right)", "product", "weakest"], rows)
            + f"\n\nBest-of-3 picks {best['product']} by the product and {best['min']} by "
              "the weakest step. A confident start does not save A, whose last step is "
              "probably wrong; an outcome reward model sees only the end and cannot say where "
              "a solution went wrong.")


# --- the lab job: test-time compute on the shipped model's names ------------------------------

TTC_SHOWN_KS = (1, 4, 16, 64)
# Drawn in this order, so where two curves meet the later mark shows.
TTC_CURVES = (("pass_at_k", "P", "pass@k (checker)"),
              ("majority_vote", "V", "majority vote"),
              ("best_of_k_logprob", "L", "likeliest of k"))
# The table's short name and the chart's title of each verifier.
TTC_VERIFIERS = {"held-out": ("held-out name", "a real name it never trained on"),
                 "rule": ("length rule", "the set length and last letter")}


def test_time_result() -> tuple[dict | None, str]:
    """The learner's own result, else the bundled one; and a sentence saying which it is."""
    from minigpt.errors import RunError
    from minigpt.runs.lab import bundled_dir, is_running, job_dir, read_result

    try:
        own = read_result(job_dir("test-time"))
    except RunError as e:
        own, broken = None, f"Your saved result cannot be read ({e}); press **x** to run the job again. "
    else:
        broken = ""
    if own is not None:
        return own, f"Your run: {own['seconds']:.0f} s at load average {own['load_average']:.1f}."
    running = "Your run is under way; its result replaces this one when it is done. " if is_running(
        job_dir("test-time")) else ""
    try:
        shipped = read_result(bundled_dir("test-time"))
    except RunError:
        shipped = None
    how = ("Press **x** to measure it on your machine (about half a minute on two cores), or run "
           "`minigpt lab run test-time`.")
    if shipped is None:
        return None, broken + running + "Not run yet. " + how
    return shipped, (broken + running + f"Measured when the course was built ({shipped['seconds']:.0f} s "
                     f"on two cores at load average {shipped['load_average']:.1f}); the same seeds give the "
                     "same names on the same PyTorch. " + how)


def _ttc_chart(curves: dict, ks: list[int], verifier: str) -> str:
    from minigpt.text_chart import ChartSeries, scatter_chart

    series = [ChartSeries(label.split(" (")[0], mark, list(zip(ks, curves[key], strict=True)))
              for key, mark, label in TTC_CURVES]
    return scatter_chart(series, width=66, height=13, xlog=True, xlabel="samples k",
                         title=f"success against samples: {TTC_VERIFIERS[verifier][1]}")


@example(JOBS["test-time"].example, "Test-time compute on names: pass@k, best-of-k, majority vote")
def _test_time_lab() -> str:
    result, source = test_time_result()
    if result is None:
        return source
    ks = result["ks"]
    cols = [j for j, k in enumerate(ks) if k in TTC_SHOWN_KS or j == len(ks) - 1]
    rows = []
    for verifier, curves in result["summary"].items():
        for key, _, label in TTC_CURVES + (("best_of_k_mean_logprob", "", "likeliest per letter"),):
            rows.append([TTC_VERIFIERS[verifier][0] if key == "pass_at_k" else "", label]
                        + [fmt(curves[key][j], 3) for j in cols])
    charts = "\n\n".join(f"```\n{_ttc_chart(curves, ks, v)}\n```" for v, curves in result["summary"].items())
    by_verifier = {v: [t for t in result["tasks"] if t["verifier"] == v] for v in result["summary"]}
    rates = "; ".join(f"{TTC_VERIFIERS[v][0]}, {sum(t['right'] for t in ts):,} of {result['n'] * len(ts):,}"
                      for v, ts in by_verifier.items())
    return (table(["verifier", "choice", *(f"k = {ks[j]}" for j in cols)], rows)
            + f"\n\nMeans over {len(by_verifier.get('held-out', []))} prompts per verifier, "
              f"{count(result['n'])} names sampled per prompt at temperature {result['temperature']:g} "
              f"(one seed per prompt, from {result['seed']}); samples that pass: {rates}. The held-out list holds "
              f"{count(result['held_out_names'])} names. pass@k is the unbiased estimate; the most "
              "likely of k is exact over every k-subset; the vote is the mean over 200 seeded "
              f"k-subsets.\n\n{charts}\n\n{source}")
