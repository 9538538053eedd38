"""Worked examples for "Mixture of experts"."""

from __future__ import annotations

import torch

from minigpt.models.moe import MoE, load_balancing_loss
from minigpt.teaching import params
from minigpt.teaching.examples.registry import count, example, fmt, table


def tiny_moe(seed: int = 0, top_k: int = 2) -> MoE:
    torch.manual_seed(seed)
    return MoE(d_model=4, n_experts=4, top_k=top_k, hidden=8).double()


def tokens(seed: int = 1) -> torch.Tensor:
    return torch.randn(5, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@example("moe.routing", "A router choosing 2 of 4 experts for 5 tokens")
def _routing() -> str:
    moe = tiny_moe()
    with torch.no_grad():
        _, r = moe(tokens())
    rows = []
    for t in range(5):
        probs = " ".join(fmt(p, 2) for p in r.probs[t].tolist())
        picks = ", ".join(f"e{e} × {fmt(w, 2)}" for e, w in zip(r.experts[t].tolist(), r.weights[t].tolist()))
        rows.append([f"t{t}", probs, picks])
    used = torch.bincount(r.experts.flatten(), minlength=4).tolist()
    first = torch.bincount(r.experts[:, 0], minlength=4).tolist()
    return (table(["token", "router softmax: e0 e1 e2 e3", "used (weight)"], rows)
            + f"\n\nThe two picked scores are re-normalised so their weights sum to 1. Slots "
              f"per expert: {used}. The balancing loss counts each token's first choice only, "
              f"as the Switch Transformer (top-1) does: first choices per expert {first}, so "
              f"f = ({', '.join(fmt(n / 5, 2) for n in first)}); P is each expert's mean router "
              f"probability. E·Σ f·P = {fmt(load_balancing_loss(r).item(), 3)} (1.0 would be "
              "perfectly even).")


@example("moe.average", "Top-k = E with a silent router: the layer averages its experts")
def _average() -> str:
    moe = tiny_moe(top_k=4)
    with torch.no_grad():
        moe.router.weight.zero_()
        x = tokens()
        out, r = moe(x)
        mean = torch.stack([e(x) for e in moe.experts]).mean(dim=0)
    return (f"Every router score is 0, so all four weights are {fmt(r.weights[0, 0].item(), 2)}. "
            f"Largest difference between the layer's output and the plain mean of the four "
            f"experts: {(out - mean).abs().max().item():.1e}.")


@example("moe.params", "Total against active parameters: a Mixtral-like shape")
def _params() -> str:
    s = params.MIXTRAL_LIKE
    m = params.moe_params(s)
    rows = [
        ["attention per layer (GQA, 8 kv heads)", count(m["attention per layer"])],
        [f"one SwiGLU expert 3·d·{s.ffn_hidden:,}", count(m["one expert"])],
        ["router per layer d·E", count(m["router per layer"])],
        [f"total ({s.n_experts} experts per layer)", f"{m['total'] / 1e9:.2f}B"],
        [f"active per token (top-{s.top_k})", f"{m['active'] / 1e9:.2f}B"],
    ]
    return (f"d = {s.d_model}, L = {s.n_layers}, {s.n_heads} heads, vocab {s.vocab:,}.\n\n"
            + table(["piece", "count"], rows)
            + f"\n\nEvery token pays for {m['active'] / m['total']:.0%} of the weights, but all "
              "of them must sit in memory.")
