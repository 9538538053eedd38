"""Worked examples about size and cost: parameter counts, training schedule, sampling, inference.

Registered into ``minigpt.teaching.examples.registry.EXAMPLES``. Parameter counts come from ``minigpt.teaching.params`` so the
lessons and the real model can never disagree.
"""

from __future__ import annotations

import math

import torch

from minigpt.sampling import filter_logits
from minigpt.teaching.examples.registry import count, example, fmt, table
from minigpt.teaching.shipped import shipped_model


def _params():
    # Imported lazily: the registry must load even while the model code is being changed.
    from minigpt.models.config import GPTConfig
    from minigpt.teaching import params

    return params, GPTConfig


# The course's mini GPT: its Q, K, V projections have no bias but W_O and the FFN do; ours puts a
# bias on every linear layer when bias=True, which adds 3·d per block.
COURSE_GPT = dict(vocab_size=27, block_size=32, d_model=64, n_heads=4, n_layers=4)


@example("params.mini_gpt", "Parameters of our MiniGPT, part by part (the shipped checkpoint)")
def _mini_gpt() -> str:
    P, GPTConfig = _params()
    ours = shipped_model()
    cfg = ours.config
    parts = P.gpt_breakdown(cfg)
    total = sum(c.count for c in parts)
    d, L = cfg.d_model, cfg.n_layers
    # The course's model: 32 positions, and no bias on W_Q, W_K, W_V but one on the output head.
    course = GPTConfig(**COURSE_GPT, bias=True, tie_weights=False)
    course_style = P.gpt_total(course) - L * 3 * d + cfg.vocab_size
    rows = [[c.name, c.formula, count(c.count)] for c in parts]
    rows.append(["**total (ours)**", "", f"**{count(total)}**"])
    return (f"Our MiniGPT as shipped: {ours.shape}, V = {cfg.vocab_size}.\n\n"
            + table(["part", "formula", "count"], rows)
            + f"\n\nThe training run counted {count(ours.n_params)} in the real module. The course's "
            f"version has {course.block_size} positions, no bias on W_Q, W_K, W_V but one on the output "
            f"head: {count(course_style)}. Rule of thumb 12·L·d² = {count(P.rule_of_thumb(L, d))}.")


@example("params.block", "One Transformer block, counted by matrix")
def _block() -> str:
    P, _ = _params()
    rows = []
    for d in (64, 512, 768):
        attn, ffn = 4 * d * d, 8 * d * d
        rows.append([d, count(attn), count(ffn), count(P.block_params(d, True)),
                     count(12 * d * d), f"{ffn / (attn + ffn):.0%}"])
    return (table(["d", "attn 4d²", "FFN 8d²", "with biases+LN", "12d²", "FFN share"], rows)
            + "\n\nBiases and LayerNorm add 13·d per block: tiny next to 12·d².")


@example("params.mha", "Projection weights of one attention layer: heads change nothing")
def _mha_params() -> str:
    # Every attention layer ends with W_O, one head or many: the layer is 4·d² for any h.
    rows = []
    for label, d in (("1 head of 512", 512), ("8 heads of 64", 512),
                     ("96 heads of 128 (d = 12288)", 12288)):
        rows.append([label, count(3 * d * d), count(d * d), count(4 * d * d)])
    return (table(["layout", "W_Q, W_K, W_V", "W_O", "total 4·d²"], rows)
            + "\n\nSplitting into heads slices the same matrices; the count stays 4·d².")


@example("params.gpt2_small", "GPT-2 small: exact count vs 12·L·d²")
def _gpt2() -> str:
    P, _ = _params()
    cfg = P.GPT2_SMALL
    parts = P.gpt_breakdown(cfg)
    total = sum(c.count for c in parts)
    rule = P.rule_of_thumb(cfg.n_layers, cfg.d_model)
    rows = [[c.name, c.formula, count(c.count)] for c in parts]
    rows.append(["**total**", "", f"**{count(total)}**"])
    emb = cfg.vocab_size * cfg.d_model
    return (f"L = {cfg.n_layers}, d = {cfg.d_model}, heads = {cfg.n_heads}, "
            f"vocab = {cfg.vocab_size:,}, context = {cfg.block_size}, head tied.\n\n"
            + table(["part", "formula", "count"], rows)
            + f"\n\n12·L·d² = {count(rule)} ({rule / total:.0%} of the total). "
            f"Token embedding V·d = {count(emb)}; rule + embedding = {count(rule + emb)}.")


@example("params.llama2_7b", "LLaMA-2 7B: rule of thumb vs exact count")
def _llama() -> str:
    P, _ = _params()
    m = P.llama2_7b_params()
    d, L, V, ff = m["d_model"], m["n_layers"], m["vocab"], m["ffn_hidden"]
    rows = [
        ["12·L·d²", count(m["rule_of_thumb"])],
        ["attention per layer 4d²", count(4 * d * d)],
        [f"SwiGLU per layer 3·d·{ff}", count(3 * d * ff)],
        ["RMSNorm per layer 2d", count(2 * d)],
        ["all layers", count(L * m["per_layer"])],
        [f"embedding + untied head 2·{V:,}·d", count(2 * V * d)],
        ["final RMSNorm d", count(d)],
        ["**exact total**", f"**{count(m['total'])}**"],
    ]
    # The rows above the total add up to it (a test checks the printed table).
    assert L * m["per_layer"] + 2 * V * d + d == m["total"]
    return (table(["piece", "count"], rows)
            + f"\n\nRule of thumb {m['rule_of_thumb'] / 1e9:.2f}B; exact {m['total'] / 1e9:.2f}B. "
            f"The SwiGLU FFN is 3·d·{ff} = {3 * ff / d:.2f}·d² per layer instead of 8·d².")


# ---------------------------------------------------------------------------------------------
# Training


def lr_at(step: int, lr: float = 3e-4, warmup: int = 500, total: int = 10000,
          floor: float = 0.1) -> float:
    """The trainer's own schedule (minigpt.training.loop.lr_at): warmup to ``lr``, cosine to ``floor·lr``."""
    from minigpt.training.options import TrainConfig
    from minigpt.training.schedule import lr_at as trainer_lr_at

    cfg = TrainConfig(lr=lr, warmup=warmup, steps=total, min_lr_ratio=floor)
    return trainer_lr_at(cfg, step / total, step, total)


@example("training.lr_schedule", "Warmup then cosine decay (peak 3e-4, 500 warmup, 10,000 steps)")
def _lr() -> str:
    rows = [[s, f"{lr_at(s):.2e}"] for s in (0, 249, 499, 500, 2500, 5250, 8000, 9999)]
    return table(["step", "learning rate"], rows) + "\n\nThe floor is 10% of the peak."


@example("training.clipping", "Clipping a gradient whose norm is 5")
def _clip() -> str:
    p = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    p.grad = torch.tensor([3.0, 4.0], dtype=torch.float64)
    before = torch.linalg.vector_norm(p.grad).item()
    torch.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    after = torch.linalg.vector_norm(p.grad).item()
    return table(["", "gradient", "norm"], [
        ["before", f"[{fmt(3.0, 1)}, {fmt(4.0, 1)}]", fmt(before, 2)],
        ["after clip to 1.0", f"[{fmt(p.grad[0].item())}, {fmt(p.grad[1].item())}]", fmt(after, 2)],
    ]) + f"\n\nEvery component was multiplied by 1.0 / {fmt(before, 1)} = {fmt(1 / before, 2)}."


@example("training.weight_average", "Averaging jittery weights (EMA, decay 0.9 and the 0.999 warm-up)")
def _weight_average() -> str:
    from minigpt.training.ema import WeightAverage, ema_rate

    rates = table(["updates so far", "share of the old average kept"],
                  [[f"{n:,}", fmt(ema_rate(0.999, n), 3)] for n in (0, 10, 100, 1000, 10000)])
    live = torch.nn.Linear(1, 1, bias=False).double()
    with torch.no_grad():
        live.weight.fill_(3.5)
    average = WeightAverage(live, 0.9)
    rows = [[0, fmt(3.5, 3), fmt(3.5, 3)]]
    for t in range(1, 41):
        with torch.no_grad():
            live.weight.fill_(3.0 + (0.5 if t % 2 == 0 else -0.5))
        average.update(live, updates=10**6)  # long past the warm-up: the rate is the decay, 0.9
        if t <= 4 or t >= 39:
            rows.append([t, fmt(live.weight.item(), 3), fmt(average.model.weight.item(), 3)])
        elif t == 5:
            rows.append(["…", "…", "…"])
    return (rates + "\n\nA weight that jumps between 2.5 and 3.5 every step, averaged with decay 0.9:\n\n"
            + table(["step", "live weight", "average"], rows)
            + f"\n\nThe live weight stays 0.5 away from the centre, 3.0; after 40 steps the average is "
              f"{fmt(abs(average.model.weight.item() - 3.0), 3)} away.")


@example("training.muon", "Muon's orthogonalized step for the gradient G = [[3, 0], [4, 5]]")
def _muon() -> str:
    from minigpt.training.muon import NS_COEFFICIENTS, orthogonalize, orthogonalize_cubic

    g = torch.tensor([[3.0, 0.0], [4.0, 5.0]], dtype=torch.float64)
    u, s, vh = torch.linalg.svd(g)
    exact = u @ vh  # the nearest orthogonal matrix: every singular value set to 1
    ns = orthogonalize(g.float()).double()
    ns_s = torch.linalg.svdvals(ns)
    cubic = orthogonalize_cubic(g)
    cubic_s = torch.linalg.svdvals(cubic)
    a, b, c = NS_COEFFICIENTS

    def row(m, i: int) -> str:
        return ", ".join(fmt(v, 3) for v in m[i].tolist())

    def values(v) -> str:
        return ", ".join(fmt(x, 3) for x in v.tolist())

    return table(["matrix", "row 1", "row 2", "singular values"], [
        ["gradient G", row(g, 0), row(g, 1), values(s)],
        ["U·Vᵀ (by SVD)", row(exact, 0), row(exact, 1), "1, 1"],
        ["tuned quintic ×5", row(ns, 0), row(ns, 1), values(ns_s)],
        ["textbook cubic ×5", row(cubic, 0), row(cubic, 1), values(cubic_s)],
    ]) + (f"\n\nG stretches one direction {fmt((s[0] / s[1]).item(), 1)}× more than the other; the "
          "orthogonalized step moves both equally. Muon's tuned quintic, "
          f"X ← aX + b(XXᵀ)X + c(XXᵀ)²X with a, b, c = {a}, {b}, {c}, lands the singular values "
          "near 1, not on it, in five steps: close enough for a step direction, and far cheaper "
          "than an SVD. The textbook cubic X ← 1.5X − 0.5(XXᵀ)X converges to U·Vᵀ itself, and "
          "with G only 3× stretched five of its steps suffice; but it lifts a small singular "
          f"value only 1.5× per step, so one of 0.01 needs {_steps_to(orthogonalize_cubic, 0.99)} "
          f"cubic steps to pass 0.99, while the quintic passes 0.7 after "
          f"{_steps_to(orthogonalize, 0.7)}.")


def _steps_to(iterate, level: float, sigma: float = 0.01) -> int:
    """Steps of a Newton–Schulz iteration that lift singular value ``sigma`` (the larger one
    is 1) past ``level``: run on diag(1, sigma), which the iterations keep diagonal."""
    for steps in range(1, 100):
        out = iterate(torch.diag(torch.tensor([1.0, sigma], dtype=torch.float64)), steps=steps)
        if torch.linalg.svdvals(out).min().item() > level:
            return steps
    return 100


@example("training.decay_groups", "Which parameters of our MiniGPT get weight decay")
def _decay_groups() -> str:
    cfg = shipped_model().config
    from minigpt.models.gpt import MiniGPT

    model = MiniGPT(cfg)
    decay = sum(p.numel() for p in model.parameters() if p.dim() >= 2)
    other = sum(p.numel() for p in model.parameters() if p.dim() < 2)
    n_dec = sum(1 for p in model.parameters() if p.dim() >= 2)
    n_oth = sum(1 for p in model.parameters() if p.dim() < 2)
    return table(["group", "tensors", "numbers"], [
        ["matrices, embeddings: decayed", n_dec, count(decay)],
        ["biases, norm scales: not decayed", n_oth, count(other)],
    ])


# ---------------------------------------------------------------------------------------------
# Comparing models

COURSE_LOSSES = {"bigram": 2.45, "mlp": 2.10, "gpt": 1.95}  # the course's quoted validation losses


@example("comparison.course", "Bigram, MLP and mini GPT: sizes, the course's losses and ours")
def _comparison() -> str:
    ours = shipped_model()
    V = ours.config.vocab_size
    bigram = V * V
    ctx, emb, hid = 8, 24, 256  # the course's comparison MLP
    mlp = V * emb + (ctx * emb) * hid + hid + hid * V + V
    c = ours.config
    rows = [
        ["uniform guess", "0", fmt(math.log(V), 2)],
        ["bigram (counts)", count(bigram), f"~{COURSE_LOSSES['bigram']:.2f}"],
        [f"MLP ({ctx} chars, emb {emb}, hidden {hid})", count(mlp), f"~{COURSE_LOSSES['mlp']:.2f}"],
        [f"our MiniGPT (d {c.d_model}, {c.n_layers} layers)", count(ours.n_params),
         f"~{COURSE_LOSSES['gpt']:.2f} (ours {ours.val_loss:.3f})"],
    ]
    return (table(["model", "parameters", "val loss (nats)"], rows)
            + f"\n\nUniform guess is ln {V}. Losses are the course's figures, and for our MiniGPT also "
            f"the shipped checkpoint's own validation loss (test split {ours.test_loss:.3f}); "
            "parameters are computed here. Perplexity e^loss of the course's figures: "
            + ", ".join(f"{k} {math.exp(v):.1f}" for k, v in COURSE_LOSSES.items()) + ".")


# ---------------------------------------------------------------------------------------------
# Sampling

LOGITS = {"a": 2.0, "e": 1.5, "i": 0.5, "o": 0.0, "y": -1.0, ".": -2.0}


def _probs(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    return torch.softmax(logits / temperature, dim=-1)


@example("sampling.temperature", "One set of logits at three temperatures")
def _temperature() -> str:
    z = torch.tensor(list(LOGITS.values()), dtype=torch.float64)
    temps = (0.5, 1.0, 1.5)
    cols = [_probs(z, t) for t in temps]
    rows = [[ch, fmt(z[i].item(), 1)] + [fmt(c[i].item()) for c in cols]
            for i, ch in enumerate(LOGITS)]
    return table(["char", "logit"] + [f"T = {t}" for t in temps], rows)


def top_k_probs(p: torch.Tensor, k: int) -> torch.Tensor:
    """The sampler's own top-k filter (minigpt.sampling), applied to probabilities."""
    return torch.softmax(filter_logits(p.log(), top_k=k), dim=-1)


def top_p_probs(p: torch.Tensor, top_p: float) -> torch.Tensor:
    """The sampler's own top-p filter: the smallest most-likely set whose mass reaches top_p."""
    return torch.softmax(filter_logits(p.log(), top_p=top_p), dim=-1)


TOP_P = 0.8  # chosen so that no running total shown rounds to it (0.9 met 0.89994 → "0.900")


@example("sampling.topk_topp", f"Top-k = 2 and top-p = {TOP_P} on the T = 1 distribution")
def _topk_topp() -> str:
    z = torch.tensor(list(LOGITS.values()), dtype=torch.float64)
    p = _probs(z, 1.0)
    k2, pp = top_k_probs(p, 2), top_p_probs(p, TOP_P)
    cum = p[p.argsort(descending=True)].cumsum(0)
    order = [list(LOGITS)[i] for i in p.argsort(descending=True).tolist()]
    shown = [fmt(c, 3) for c in cum.tolist()]
    assert all(float(t) != TOP_P for t in shown), "a running total would display as top-p itself"
    kept = int((pp > 0).sum())
    rows = [[ch, fmt(p[i].item()), fmt(k2[i].item()), fmt(pp[i].item())]
            for i, ch in enumerate(LOGITS)]
    return (table(["char", "p", "top-k 2", f"top-p {TOP_P}"], rows)
            + "\n\nRunning total in order " + " ".join(order) + ": " + " ".join(shown) + ". "
            + f"After {', '.join(order[:kept - 1])} the total is {shown[kept - 2]}, short of "
            f"{TOP_P}; adding {order[kept - 1]} brings it to {shown[kept - 1]}, so top-p keeps "
            f"{kept} characters.")


# ---------------------------------------------------------------------------------------------
# Inference costs


@example("inference.kv_cache", "Work and memory with and without a KV cache")
def _kv() -> str:
    rows = [[T, count(T * (T + 1) // 2), count(T)] for T in (16, 256, 1024)]
    mem = []
    for name, L, d, T in (("GPT-2 small", 12, 768, 1024), ("LLaMA-2 7B", 32, 4096, 4096)):
        nbytes = 2 * L * T * d * 2  # K and V, every layer, fp16
        mem.append([name, f"{L} × {d}", T, f"{nbytes / 2**20:,.0f} MiB"])
    return ("Key/value rows computed to generate T tokens one at a time:\n\n"
            + table(["T", "recompute all", "with cache"], rows)
            + "\n\nCache size for one sequence (K and V, all layers, 2 bytes each):\n\n"
            + table(["model", "L × d", "tokens", "cache"], mem))


@example("inference.attention_memory", "Size of one n × n attention matrix (one head, fp16)")
def _attn_mem() -> str:
    rows = []
    for n in (1024, 8192, 32768, 131072):
        b = n * n * 2
        size = f"{b / 2**30:,.1f} GiB" if b >= 2**30 else f"{b / 2**20:,.0f} MiB"
        rows.append([f"{n:,}", f"{n * n:,}", size])
    return table(["n tokens", "scores", "memory"], rows)


# ---------------------------------------------------------------------------------------------
# Scaling laws (published fits; the arithmetic is ours)

KAPLAN_NC, KAPLAN_ALPHA = 8.8e13, 0.076  # L(N) = (N_c / N)^α, N = non-embedding parameters


@example("scaling.kaplan", "Kaplan et al. (2020) fit: loss vs non-embedding parameters")
def _kaplan() -> str:
    rows = []
    prev = None
    for n in (1e6, 1e7, 1e8, 1e9, 1e10):
        loss = (KAPLAN_NC / n) ** KAPLAN_ALPHA
        rows.append([f"{n:.0e}", fmt(loss, 2), "" if prev is None else f"{loss / prev:.3f}"])
        prev = loss
    return (table(["N", "predicted loss", "× per 10× N"], rows)
            + f"\n\nEach tenfold increase multiplies the loss by 10^−{KAPLAN_ALPHA} = "
            f"{10 ** -KAPLAN_ALPHA:.3f}: a straight line on log–log axes.")


@example("scaling.chinchilla", "Compute-optimal training: ~20 tokens per parameter, C ≈ 6·N·D")
def _chinchilla() -> str:
    rows = []
    for name, n in (("GPT-2 small", 124e6), ("LLaMA-2 7B", 6.74e9), ("Chinchilla", 70e9)):
        d = 20 * n
        rows.append([name, f"{n:.3g}", f"{d:.3g}", f"{6 * n * d:.2e}"])
    return table(["model", "params N", "tokens D = 20N", "FLOPs 6ND"], rows)
