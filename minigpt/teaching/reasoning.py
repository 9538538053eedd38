"""The maths of reasoning models on small numbers: pass@k and its unbiased estimator, majority
voting (self-consistency), how GRPO, DAPO and Dr. GRPO weigh each sampled token, DAPO's
asymmetric clip and length penalty, and a process reward model's score of a whole solution.

- pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): draw n answers,
  c of them right; the chance that k drawn without replacement hold at least one right one is
  1 − C(n−c, k) / C(n, k). Plugging p = c/n into 1 − (1 − p)^k is biased low.
- GRPO (Shao et al. 2024, DeepSeekMath): advantage (r − mean) / std within a group of G answers;
  each answer's clipped token terms are averaged over its length, then over the group.
- DAPO (Yu et al. 2025): no KL term, a wider upper clip (ε_low 0.2, ε_high 0.28), token terms
  averaged over all the group's tokens, groups whose answers all score the same dropped, and a
  soft penalty on answers that run into the length limit.
- Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training"): advantage r − mean with no
  division by std, and a constant in place of each answer's length.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import product


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from n samples of which c are right (Chen et al. 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 ≤ c ≤ n and 1 ≤ k ≤ n, got n={n}, c={c}, k={k}")
    if n - c < k:  # every k-subset holds a right answer
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_plugin(n: int, c: int, k: int) -> float:
    """The biased estimate 1 − (1 − c/n)^k: as if the k draws were with replacement."""
    return 1.0 - (1.0 - c / n) ** k


def majority_vote_accuracy(answer_probs: dict[str, float], right: str, votes: int) -> float:
    """The chance that the most frequent of ``votes`` independent answers is the right one
    (self-consistency, Wang et al. 2022); a tie is settled by a fair draw among the tied answers.
    Exact: every sequence of answers is enumerated, so keep ``votes`` and the answers few."""
    names = list(answer_probs)
    total = 0.0
    for draw in product(names, repeat=votes):
        chance = math.prod(answer_probs[a] for a in draw)
        counts = Counter(draw)
        top = max(counts.values())
        leaders = [a for a, n in counts.items() if n == top]
        if right in leaders:
            total += chance / len(leaders)
    return total


def best_of_n_with_verifier(p_right: float, n: int) -> float:
    """Best-of-n with a perfect verifier succeeds if any of n independent answers is right."""
    return 1.0 - (1.0 - p_right) ** n


# --- how the policy-gradient objectives weigh tokens ------------------------------------------


def grpo_advantages(rewards: list[float]) -> list[float]:
    """GRPO: (r − mean) / std over the group (divisor n); all equal → zeros."""
    n = len(rewards)
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / n)
    return [0.0 if std == 0 else (r - mean) / std for r in rewards]


def dr_grpo_advantages(rewards: list[float]) -> list[float]:
    """Dr. GRPO: r − mean, with no division by the group's std."""
    mean = sum(rewards) / len(rewards)
    return [r - mean for r in rewards]


def token_weights(rewards: list[float], lengths: list[int], method: str,
                  constant: int | None = None) -> list[float]:
    """The factor that multiplies each token's log-probability gradient in the first update of a
    group (ratio 1, so no clipping), per answer. GRPO: A_i / (G·|o_i|); DAPO: A_i / Σ|o_j| with
    GRPO's advantage; Dr. GRPO: (r_i − mean) / (G·constant), constant the generation limit."""
    g = len(rewards)
    if method == "GRPO":
        return [a / (g * n) for a, n in zip(grpo_advantages(rewards), lengths, strict=True)]
    if method == "DAPO":
        return [a / sum(lengths) for a in grpo_advantages(rewards)]
    if method == "Dr. GRPO":
        if constant is None:
            raise ValueError("Dr. GRPO divides by a constant: pass the generation limit")
        return [a / (g * constant) for a in dr_grpo_advantages(rewards)]
    raise ValueError(f"unknown method {method!r}: GRPO, DAPO or Dr. GRPO")


def clip_range(p_old: float, eps_low: float, eps_high: float) -> tuple[float, float]:
    """The probabilities a token may move to in one update before its term is clipped."""
    return p_old * (1 - eps_low), p_old * (1 + eps_high)


def overlong_penalty(length: int, max_length: int, cache: int) -> float:
    """DAPO's soft length penalty: 0 up to max_length − cache, then falling linearly to −1 at
    max_length, and −1 beyond (an answer cut off by the limit)."""
    start = max_length - cache
    if length <= start:
        return 0.0
    if length <= max_length:
        return (start - length) / cache
    return -1.0


def informative(rewards: list[float]) -> bool:
    """DAPO's dynamic sampling keeps a group only if its rewards differ (else every advantage is
    zero and the group adds no gradient)."""
    return len(set(rewards)) > 1


def prm_score(step_probs: list[float], how: str = "product") -> float:
    """A whole solution's score from a process reward model's per-step chances of being right:
    the product (all steps right, as Lightman et al. 2023 rank solutions) or the weakest step."""
    if how == "product":
        return math.prod(step_probs)
    if how == "min":
        return min(step_probs)
    raise ValueError(f"unknown aggregation {how!r}: product or min")
