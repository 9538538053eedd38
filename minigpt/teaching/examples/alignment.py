"""Worked examples for "After pre-training": the DPO loss on toy log-probabilities, a reward
model's loss, PPO's clipped objective and GRPO's group advantages."""

from __future__ import annotations

import math

from minigpt.teaching import rl_maths
from minigpt.teaching.examples.registry import example, fmt, table
from minigpt.teaching.loss_maths import dpo_loss

BETA = 0.1
# (label, policy chosen, policy rejected, reference chosen, reference rejected): log-probs of
# whole answers, made up but of a realistic size (a 20-token answer has log-prob around −20 to −40)
CASES = (
    ("before tuning (policy = reference)", -25.0, -30.0, -25.0, -30.0),
    ("chosen up 5, rejected unchanged", -20.0, -30.0, -25.0, -30.0),
    ("chosen up 10, rejected down 10", -15.0, -40.0, -25.0, -30.0),
    ("wrong way: rejected up 5", -25.0, -25.0, -25.0, -30.0),
)


@example("dpo.toy", "The DPO loss on toy log-probabilities (β = 0.1)")
def _dpo() -> str:
    rows = []
    for label, pc, pr, rc, rr in CASES:
        margin = (pc - rc) - (pr - rr)
        rows.append([label, fmt(margin, 0), fmt(dpo_loss(pc, pr, rc, rr, BETA), 3)])
    return (table(["policy", "margin", "loss"], rows)
            + "\n\nmargin = (log π(chosen) − log π_ref(chosen)) − (log π(rejected) − "
              f"log π_ref(rejected)); loss = −log σ(β·margin). At the start the margin is 0 and "
              f"the loss is ln 2 = {fmt(math.log(2), 3)}; it falls as the model moves probability "
              "towards the preferred answer relative to the reference, and rises if it moves "
              "the wrong way.")


# --- rewards: a reward model, PPO's clip, GRPO's groups -----------------------------------------

REWARD_PAIRS = ((1.5, 0.5), (0.8, 0.6), (0.2, 0.9), (3.0, -1.0))


@example("rl.reward_model", "A Bradley-Terry reward model's loss on four preference pairs")
def _reward_model() -> str:
    rows = []
    for chosen, rejected in REWARD_PAIRS:
        rows.append([fmt(chosen, 1), fmt(rejected, 1), fmt(chosen - rejected, 1),
                     fmt(rl_maths.preference_probability(chosen, rejected), 3),
                     fmt(rl_maths.reward_model_loss(chosen, rejected), 3)])
    return (table(["r chosen", "r rejected", "gap", "σ(gap)", "loss"], rows)
            + "\n\nOnly the gap between the two rewards matters: the loss −log σ(gap) is "
              "ln 2 at a gap of 0, small when the chosen answer leads clearly, and large "
              "when the reward model prefers the rejected one.")


PPO_CASES = ((1.0, 0.5), (1.0, 1.1), (1.0, 1.5), (-1.0, 0.5), (-1.0, 0.9), (-1.0, 1.5))


@example("rl.ppo_clip", "PPO's clipped objective per token (ε = 0.2)")
def _ppo_clip() -> str:
    rows = []
    for advantage, ratio in PPO_CASES:
        value, grad = rl_maths.ppo_clipped(ratio, advantage)
        rows.append([fmt(advantage, 0), fmt(ratio, 1), fmt(ratio * advantage, 2),
                     fmt(value, 2), "yes" if grad != 0 else "no (clipped)"])
    return (table(["advantage", "ratio", "r·A", "objective", "gradient?"], rows)
            + "\n\nratio = π_new(token) / π_old(token). A good token (A > 0) stops being "
              "pushed once its ratio passes 1.2; a bad one (A < 0) once it falls below 0.8. "
              "The minimum keeps the unclipped value when it is worse, so a mistake made "
              "larger (a bad token whose ratio rose to 1.5) is still corrected.")


GRPO_GROUPS = (("2 right of 6", [1, 0, 0, 0, 1, 0]), ("5 right of 6", [1, 1, 1, 0, 1, 1]),
               ("all right", [1, 1, 1, 1, 1, 1]))


@example("rl.grpo", "GRPO's advantages: six answers per prompt, reward 1 if right")
def _grpo() -> str:
    rows = []
    for label, rewards in GRPO_GROUPS:
        adv = rl_maths.group_advantages(rewards)
        right = fmt(adv[rewards.index(1)], 3)
        wrong = fmt(adv[rewards.index(0)], 3) if 0 in rewards else "–"
        rows.append([label, fmt(sum(rewards) / len(rewards), 3), right, wrong])
    first = GRPO_GROUPS[0][1]
    other = rl_maths.group_advantages(first, unbiased=True)
    return (table(["group", "mean reward", "A of a right one", "A of a wrong one"], rows)
            + "\n\nA = (r − mean) / std within the group, here with divisor n. The divisor is "
              "a convention: with n − 1 (torch.std's default) the first group gives "
              f"{fmt(other[first.index(1)], 3)} and {fmt(other[first.index(0)], 3)}, the same "
              "signs and order. A rare success earns a large push; when most answers are right, "
              "the few wrong ones are pushed down hard; a group all right (or all wrong) "
              "teaches nothing.")


KL_POLICY = (0.6, 0.3, 0.1)     # the policy's next-token distribution over three tokens
KL_REFERENCE = (0.5, 0.3, 0.2)  # the reference model's


@example("rl.kl_estimators", "Three estimates of KL(π ‖ π_ref), one sampled token at a time")
def _kl_estimators() -> str:
    est = rl_maths.kl_estimates(list(KL_POLICY), list(KL_REFERENCE))
    rows = [[f"token {i + 1}", fmt(p, 1), fmt(ref, 1)] + [fmt(v, 4) for v in ks]
            for i, (p, ref, ks) in enumerate(zip(KL_POLICY, KL_REFERENCE, est, strict=True))]
    means = [sum(p * ks[j] for p, ks in zip(KL_POLICY, est, strict=True)) for j in range(3)]
    rows.append(["mean under π", "", ""] + [fmt(m, 4) for m in means])
    exact = rl_maths.kl_divergence(list(KL_POLICY), list(KL_REFERENCE))
    return (table(["sampled", "π", "π_ref", "k1", "k2", "k3"], rows)
            + f"\n\nThe exact KL is {fmt(exact, 4)}. k1 = −log r and k3 = (r − 1) − log r, "
              "with r = π_ref/π, both average to it; k1 goes negative on a token the policy "
              "likes less than the reference does, k3 never does. k2 = (log r)²/2 is biased "
              "(its mean differs) but varies less. The estimate needs only the sampled "
              "token's two log-probabilities, which is why the reference model must run "
              "on every sampled answer.")


@example("rl.memory", "Models held in memory while tuning a 7B policy")
def _rl_memory() -> str:
    n = 7e9
    rows = [[method, ", ".join(rl_maths.RL_MODELS[method]), f"{rl_maths.rl_memory_bytes(n, method) / 1e9:,.0f}"]
            for method in rl_maths.RL_MODELS]
    return (table(["method", "models", "GB (weights + training state)"], rows)
            + f"\n\nA trained model keeps {rl_maths.TRAINED_BYTES} bytes per parameter (mixed-precision "
              f"Adam), a frozen one {rl_maths.FROZEN_BYTES}; activations come on top. PPO trains a value "
              "model beside the policy and runs a reward model and the reference; GRPO with a "
              "checkable reward keeps only the policy and the reference. DPO may even drop its "
              "reference: its log-probabilities on the fixed pairs can be computed once, "
              "before training.")


@example("dpo.implicit_reward", "DPO's implicit rewards, β = 0.1")
def _implicit_reward() -> str:
    rows = []
    for label, pc, pr, rc, rr in CASES:
        chosen, rejected = rl_maths.implicit_reward(pc, rc, BETA), rl_maths.implicit_reward(pr, rr, BETA)
        rows.append([label, fmt(chosen, 2), fmt(rejected, 2),
                     fmt(rl_maths.preference_probability(chosen, rejected), 3)])
    return (table(["policy", "reward chosen", "reward rejected", "σ(gap)"], rows)
            + "\n\nr(y) = β · (log π(y) − log π_ref(y)): the policy itself defines the reward, "
              "and the DPO loss is the Bradley-Terry loss −log σ(r_chosen − r_rejected) on it. "
              "DPO learns offline from a fixed set of pairs; it never samples new answers "
              "during training.")
