"""Worked examples for FlashAttention's IO count (in "Attention's cost and FlashAttention")."""

from __future__ import annotations

from minigpt.teaching import flash_io
from minigpt.teaching.examples.registry import count, example, table

SRAM = flash_io.A100_SRAM_NUMBERS


def _millions(n: int) -> str:
    return f"{n / 1e6:,.1f}"


@example("flash.hbm_traffic", "HBM accesses of one head, in millions of numbers (A100 SRAM)")
def _hbm_traffic() -> str:
    rows = []
    for d in (64, 128):
        for n in (1024, 4096, 16384):
            std, flash = flash_io.standard_hbm_accesses(n, d), flash_io.flash_hbm_accesses(n, d, SRAM)
            blocks = flash_io.flash_blocks(n, d, SRAM)
            rows.append([d, count(n), f"{blocks.key_block}×{blocks.key_blocks}",
                         _millions(std), _millions(flash), f"{std / flash:.1f}×"])
    return (table(["d", "N", "B_c × T_c", "standard", "flash", "fewer"], rows)
            + f"\n\nM = {count(SRAM)} 16-bit numbers (192 KB). Standard: 4·N·d + 4·N², "
              "the N² terms being S and P written and read back. Flash: 2·N·d + "
              "T_c·(3·N·d + 4·N), with T_c = ⌈N / B_c⌉ and B_c = ⌈M / 4d⌉. The gain is "
              "about M / 3d²: large at d = 64, modest at d = 128, where the paper's "
              "speed-up also comes from fusing the steps into one kernel.")


@example("flash.sram_size", "More SRAM, fewer passes: N = 4,096, d = 64")
def _sram_size() -> str:
    rows = []
    for kib in (48, 96, 192, 384):
        m = kib * 1024 // 2
        blocks = flash_io.flash_blocks(4096, 64, m)
        rows.append([f"{kib} KB", count(m), blocks.key_block, blocks.key_blocks,
                     _millions(flash_io.flash_hbm_accesses(4096, 64, m))])
    return (table(["SRAM", "M numbers", "B_c", "T_c", "flash (millions)"], rows)
            + "\n\nEach doubling of M halves the number of key blocks, and with it the "
              "passes over Q and O: the traffic falls as 1/M until K and V's single "
              "read dominates.")


@example("flash.backward", "What the backward pass keeps and recomputes (one head, d = 64)")
def _backward() -> str:
    rows = []
    for n in (4096, 16384):
        t = flash_io.backward_trade(n, 64)
        rows.append([count(n), count(t.stored_standard),
                     f"{count(t.stored_flash)} / {count(t.stored_flash2)}",
                     f"{t.recompute_flops / 1e9:,.2f}",
                     f"{t.recompute_flops / t.forward_flops:.0%}"])
    return (table(["N", "P kept (std)", "kept (FA / FA-2)", "recompute GFLOP", "of fwd"], rows)
            + "\n\nStandard attention keeps P, N² numbers per head, for the backward pass. "
              "FlashAttention keeps O and two numbers per row, the maximum m and the sum ℓ "
              "(FlashAttention-2 keeps one, their log-sum-exp), and rebuilds S = Q·Kᵀ "
              "and P block by block in SRAM: 2·N²·d extra FLOPs, half the forward's "
              "4·N²·d, to avoid reading an N × N matrix back from HBM.")


# --- a fixed-size state: linear attention and state-space layers --------------------------------


@example("flash.state_cost", "One generated token, per layer: d = 4,096, 32 heads of 128")
def _state_cost() -> str:
    from minigpt.teaching import state_space

    d, head_dim = 4096, 128
    rows = []
    for t in (128, 4096, 32768):
        c = state_space.attention_cost(t, d)
        rows.append([f"attention at t = {t:,}", f"{c.flops / 1e6:,.1f}", f"{c.state:,}"])
    for c in (state_space.linear_attention_cost(d, head_dim), state_space.ssm_cost(d)):
        rows.append([f"{c.name}, any t", f"{c.flops / 1e6:,.1f}", f"{c.state:,}"])
    return (table(["", "MFLOP", "numbers kept"], rows)
            + f"\n\nAttention's cost and cache grow with the position t; the other two stay "
              f"the same at every position. Linear attention costs as much as attention at "
              f"t = {state_space.break_even_position(head_dim)} and less after. The state-space row "
              f"uses Mamba's expansion 2 and 16 state numbers per channel.")
