"""The maths of tuning with rewards, on small numbers: a Bradley-Terry reward-model loss, PPO's
clipped objective, GRPO's group-relative advantage, the KL estimators k1/k2/k3, DPO's implicit
reward, and the memory of the models each method holds.

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


def kl_estimates(policy: list[float], reference: list[float]) -> list[tuple[float, float, float]]:
    """The three per-token estimators of KL(π ‖ π_ref) (Schulman 2020, "Approximating KL
    divergence") for each token x, sampled from the policy π: with r = π_ref(x)/π(x),
    k1 = −log r, k2 = (log r)²/2, k3 = (r − 1) − log r. Under π, k1 and k3 average to the true KL
    (k3 because E[r] = 1) and k3 is never negative; k2 is biased but has low variance. GRPO puts
    k3 in its loss."""
    out = []
    for p, ref in zip(policy, reference, strict=True):
        log_r = math.log(ref / p)
        out.append((-log_r, log_r * log_r / 2, math.exp(log_r) - 1 - log_r))
    return out


def kl_divergence(policy: list[float], reference: list[float]) -> float:
    """KL(π ‖ π_ref) = Σ π log(π / π_ref), exactly."""
    return sum(p * math.log(p / ref) for p, ref in zip(policy, reference, strict=True))


def implicit_reward(policy_logprob: float, reference_logprob: float, beta: float) -> float:
    """DPO's implicit reward of an answer: β · (log π(y) − log π_ref(y)); the DPO loss is the
    Bradley-Terry loss on the difference of two of these."""
    return beta * (policy_logprob - reference_logprob)


TRAINED_BYTES = 16  # per parameter: mixed-precision Adam (weights, gradients, master copy, m, v)
FROZEN_BYTES = 2    # per parameter: 16-bit weights that only run forward

# the models each method holds, all the policy's size (each starts from the SFT model)
RL_MODELS = {
    "PPO (RLHF)": {"policy": TRAINED_BYTES, "value model": TRAINED_BYTES,
                   "reference": FROZEN_BYTES, "reward model": FROZEN_BYTES},
    "GRPO, verifiable reward": {"policy": TRAINED_BYTES, "reference": FROZEN_BYTES},
    "DPO": {"policy": TRAINED_BYTES, "reference": FROZEN_BYTES},
}


def rl_memory_bytes(n_params: float, method: str) -> float:
    """Weights and training state of every model ``method`` holds (activations left out)."""
    return n_params * sum(RL_MODELS[method].values())
