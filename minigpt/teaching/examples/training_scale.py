"""Worked examples for "Training at scale: schedules, degrees, stability, μP, balancing"."""

from __future__ import annotations

from minigpt.teaching import parallelism as PA
from minigpt.teaching import training_scale as TS
from minigpt.teaching.examples.registry import example, fmt, table

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2")
JOB = TS.Job(n_params=70e9, layers=80, d_model=8192, heads=64, seq=4096, global_batch=1024)
# 512 GPUs of 80 GB at a realistic 40% of 1 PFLOP/s, NVLink inside a node, 400 Gb/s between
CLUSTER = TS.Cluster(512, 8, 80e9, 0.4e15, 450e9, 50e9)


@example("train_scale.schedules", "Pipeline schedules: 8 stages, 32 micro-batches")
def _schedules() -> str:
    p, m = 8, 32
    rows = [[s, f"{TS.schedule_bubble(p, m, s, v=2):.1%}", TS.activations_held(p, m, s)]
            for s in SCHEDULES]
    return (table(["schedule", "bubble", "micro-batches held"], rows)
            + "\n\nForward, input-gradient and weight-gradient passes take equal time; the "
              "interleaved schedule gives each GPU 2 chunks. Splitting the backward pass "
              "lets ZB-H1 fill two thirds of 1F1B's idle time at the same memory.")


@example("train_scale.degrees", "Choosing t, p and d: a 70B model on 512 GPUs")
def _degrees() -> str:
    plans = TS.search(JOB, CLUSTER)
    rows = [[pl.t, pl.p, pl.d, f"{pl.memory / 1e9:.1f}", f"{pl.step_s:.2f}",
             "yes" if pl.fits else "no"] for pl in plans[:4] + plans[-2:]]
    fits = sum(pl.fits for pl in plans)
    best = plans[0]
    return (table(["t", "p", "d", "GB a GPU", "step s", "fits"], rows)
            + f"\n\n{len(plans)} layouts divide the cluster, {fits} fit in 80 GB. Best: "
              f"tensor {best.t} inside a node, pipeline {best.p}, data {best.d}. Smaller t "
              "would be faster but holds too much; the fastest rows that fit keep t on "
              "NVLink and use the pipeline to cut the weights further.")


@example("train_scale.stability", "z-loss, soft-capping and QK-norm in numbers")
def _stability() -> str:
    rows = [[f"{x:g}", fmt(TS.soft_cap(x, 30.0), 2), fmt(TS.soft_cap(x, 50.0), 2)]
            for x in (5.0, 20.0, 50.0, 200.0)]
    calm, drifted = [2.0, 1.0, 0.0, -1.0], [52.0, 51.0, 50.0, 49.0]
    return (table(["logit", "cap 30", "cap 50"], rows)
            + f"\n\nz-loss (10⁻⁴·log²Z): {TS.z_loss(calm):.6f} on logits near zero, "
              f"{TS.z_loss(drifted):.4f} on the same logits shifted up by 50, which the "
              "softmax alone cannot tell apart. With QK-norm a head of 128 dimensions can "
              f"score at most {TS.max_qk_logit(128):.1f} (gain 1).")


@example("train_scale.mup", "μP: a base of width 256 grown to 4,096 (Adam)")
def _mup() -> str:
    m = 4096 / 256
    rows = [[kind, fmt(TS.mup_multipliers(kind, m)[0], 4), fmt(TS.mup_multipliers(kind, m)[1], 4)]
            for kind in TS.MUP_RULES]
    return (table(["parameter", "init std ×", "Adam lr ×"], rows)
            + "\n\nMultipliers against the tuned base model (width multiplier 16). Tune the "
              "small model's learning rate once; the large one inherits it through these "
              "rules instead of a new sweep.")


@example("train_scale.balance", "Balancing experts with a bias: 8 experts, top-2")
def _balance() -> str:
    h = TS.bias_balancing()
    rows = [[step + 1, f"{h[step]:.2f}"] for step in (0, 9, 19, 39, 79)]
    tail = sum(h[-10:]) / 10
    sent = PA.expert_all_to_all_bytes(tokens=4096, d_model=7168, top_k=8, devices=64)
    return (table(["step", "busiest / mean load"], rows)
            + f"\n\nMean over the last 10 steps: {tail:.2f}. No balancing term enters the "
              "loss: only which experts are chosen moves, not how their outputs are weighed. "
              "With one expert a GPU, the busiest sets the layer's time: at the first step's "
              f"{h[0]:.2f} the layer runs {h[0]:.2f}× as long as a balanced one. The traffic "
              "itself for DeepSeek-V3's width and top-8 (d = 7,168; its cap of four nodes a "
              f"token left out) over 64 GPUs with 4,096 tokens each: {sent / 2**20:,.0f} MiB sent per GPU per MoE layer, forward.")
