"""Worked examples for "Long context": learned tables, RoPE interpolation and NTK, ALiBi."""

from __future__ import annotations

import torch

from minigpt.teaching import long_context
from minigpt.teaching.examples.registry import example, fmt, matrix, table

HEAD_DIM, TRAINED, TARGET = 8, 16, 64  # our block size, stretched four times


@example("longctx.learned_limit", "A learned position table has no row past the block size")
def _learned_limit() -> str:
    from minigpt.models.gpt import MiniGPT
    from minigpt.teaching.shipped import shipped_config

    cfg = shipped_config()
    model = MiniGPT(cfg).eval()
    rows = model.pos_emb.weight.shape[0]
    try:
        with torch.no_grad():
            model(torch.zeros(1, cfg.block_size + 1, dtype=torch.long))
        outcome = "it ran"
    except ValueError as e:
        outcome = f"“{e}”"
    return (f"Our MiniGPT's position table has {rows} rows (positions 0…{rows - 1}), "
            f"{cfg.d_model} numbers each. Asking it for {cfg.block_size + 1} positions: {outcome}")


def _angle_rows():
    s = TARGET / TRAINED
    ntk = long_context.ntk_base(10000.0, s, HEAD_DIM)
    out = []
    for pos in (TRAINED - 1, TRAINED, TARGET - 1):
        plain = long_context.rope_angles(pos, HEAD_DIM)
        pi = long_context.rope_angles(pos, HEAD_DIM, interpolation=s)
        nt = long_context.rope_angles(pos, HEAD_DIM, base=ntk)
        out.append((pos, plain, pi, nt))
    return s, ntk, out


@example("longctx.rope_angles", "RoPE angles past the trained length (head_dim 8, trained on 16)")
def _rope_angles() -> str:
    s, ntk, out = _angle_rows()
    rows = []
    for pos, plain, pi, nt in out:
        rows.append([pos, fmt(plain[0].item(), 2), fmt(pi[0].item(), 2), fmt(nt[0].item(), 2),
                     fmt(plain[-1].item(), 4), fmt(pi[-1].item(), 4), fmt(nt[-1].item(), 4)])
    limit = long_context.rope_angles(TRAINED, HEAD_DIM)[-1].item()
    return (table(["pos", "fast", "fast PI", "fast NTK", "slow", "slow PI", "slow NTK"], rows)
            + f"\n\nAngles in radians, fastest pair (i = 0) and slowest (i = 3). Stretching "
              f"{TRAINED} → {TARGET} is s = {s:g}. PI divides each position by {s:g}; NTK "
              f"raises the base from 10,000 to {ntk:,.0f} = 10,000·{s:g}^(8/6). Training reached "
              f"positions 0…{TRAINED - 1}, so the slow pair stayed below {fmt(limit, 4)} (its "
              f"angle at {TRAINED}). At {TARGET - 1}, PI and NTK keep it below that; plain RoPE "
              f"does not. NTK leaves the fast pair as trained.")


@example("longctx.alibi", "ALiBi: slopes per head and the bias one head adds (5 tokens)")
def _alibi() -> str:
    slopes4 = long_context.alibi_slopes(4)
    slopes8 = long_context.alibi_slopes(8)
    bias = long_context.alibi_bias(5, slopes4[0])
    labels = [f"k{j}" for j in range(5)]
    return ("Slopes for 4 heads: " + ", ".join(f"{v:g}" for v in slopes4)
            + "; for 8 heads: " + ", ".join(f"1/{round(1 / v)}" for v in slopes8)
            + f".\n\nHead 1 of 4 (slope {slopes4[0]:g}) adds to the scores:\n\n"
            + matrix(bias, [f"q{i}" for i in range(5)], labels, 2)
            + "\n\nA key 8 tokens back loses " + fmt(8 * slopes4[0], 1) + " in head 1 but only "
            + fmt(8 * slopes4[-1], 3) + " in head 4: some heads look near, some far, and the "
              "same rule holds at any length.")
