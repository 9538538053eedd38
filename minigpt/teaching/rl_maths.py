"""The maths of tuning with rewards, on small numbers: a Bradley-Terry reward-model loss, PPO's
clipped objective, and GRPO's group-relative advantage.

- A reward model gives each answer a score r. The Bradley-Terry model (Bradley and Terry 1952),
  as InstructGPT uses it (Ouyang et al. 2022), says people prefer the chosen answer with
  probability σ(r_chosen − r_rejected); the reward model is trained on −log of that.
- PPO (Schulman et al. 2017) scores a token by ratio · advantage, where ratio = π_new / π_old,
  but takes the smaller of that and the same with the ratio clipped to [1 − ε, 1 + ε], so one
  update cannot move a token's probability far for the sake of a large advantage.
- GRPO (Shao et al. 2024, DeepSeekMath) drops PPO's learned value function: it samples a group of
  answers to one prompt and uses each answer's reward standardised within the group as its
  advantage. With a checkable reward (1 if the final answer is right, else 0) no reward model
  is needed at all.
"""

from __future__ import annotations

import math

import torch


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def preference_probability(reward_chosen: float, reward_rejected: float) -> float:
    """Bradley-Terry: the chance the chosen answer is preferred, σ(r_w − r_l)."""
    return sigmoid(reward_chosen - reward_rejected)


def reward_model_loss(reward_chosen: float, reward_rejected: float) -> float:
    """−log σ(r_w − r_l): small when the chosen answer already scores well above the other."""
    return -math.log(preference_probability(reward_chosen, reward_rejected))


def ppo_clipped(ratio: float, advantage: float, eps: float = 0.2) -> tuple[float, float]:
    """PPO's per-token objective min(r·A, clip(r, 1−ε, 1+ε)·A) and its gradient with respect to
    the ratio (0 where the clipped term is the smaller one and the ratio is outside the range)."""
    r = torch.tensor(ratio, dtype=torch.float64, requires_grad=True)
    objective = torch.minimum(r * advantage, r.clamp(1 - eps, 1 + eps) * advantage)
    objective.backward()
    return objective.item(), r.grad.item()


def group_advantages(rewards: list[float], unbiased: bool = False) -> list[float]:
    """GRPO's advantage: (r_i − mean) / std over the group. A group whose rewards are all equal
    gives zeros: it says nothing about which answer was better. (Implementations differ on the
    standard deviation's divisor; ``unbiased`` chooses n − 1 instead of n.)"""
    n = len(rewards)
    mean = sum(rewards) / n
    var = sum((r - mean) ** 2 for r in rewards) / (n - 1 if unbiased else n)
    if var == 0:
        return [0.0] * n
    return [(r - mean) / math.sqrt(var) for r in rewards]
