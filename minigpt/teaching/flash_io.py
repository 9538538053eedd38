"""FlashAttention's IO argument: how many numbers attention moves between the GPU's main memory
(HBM) and its on-chip SRAM, with and without tiling, and what the backward pass recomputes.

Dao et al. 2022 (theorem 2) count Θ(N·d + N²) HBM accesses for standard attention and
Θ(N²·d²/M) for FlashAttention, for N tokens, head size d and an SRAM of M numbers. The functions
below count the accesses of the paper's two algorithms exactly, one head at a time, so the lesson
shows real figures rather than orders of growth:

- standard attention (the paper's algorithm 0) reads Q and K, writes the scores S, reads S back,
  writes the probabilities P, reads P and V, and writes O: 4·N·d + 4·N²;
- FlashAttention (algorithm 1) takes key/value blocks of B_c = ⌈M/(4d)⌉ rows in an outer loop
  and query blocks of B_r = min(B_c, d) rows in the inner loop. K and V are read once (2·N·d);
  for each of the T_c = ⌈N/B_c⌉ key blocks every query block reads Q_i and O_i, writes O_i and
  reads and writes its row statistics m_i and ℓ_i: T_c·(3·N·d + 4·N).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# On-chip SRAM of one A100 streaming multiprocessor: 192 KB (Dao et al. 2022, section 2.1),
# counted here as 16-bit numbers.
A100_SRAM_BYTES = 192 * 1024
A100_SRAM_NUMBERS = A100_SRAM_BYTES // 2


def standard_hbm_accesses(n: int, d: int) -> int:
    """Numbers read from or written to HBM by attention that stores S and P (one head)."""
    return 4 * n * d + 4 * n * n


@dataclass(frozen=True)
class FlashBlocks:
    key_block: int     # B_c
    query_block: int   # B_r
    key_blocks: int    # T_c, the outer loop's length


def flash_blocks(n: int, d: int, sram: int) -> FlashBlocks:
    b_c = math.ceil(sram / (4 * d))
    return FlashBlocks(b_c, min(b_c, d), math.ceil(n / b_c))


def flash_hbm_accesses(n: int, d: int, sram: int) -> int:
    """Numbers read from or written to HBM by FlashAttention's forward pass (one head)."""
    t_c = flash_blocks(n, d, sram).key_blocks
    return 2 * n * d + t_c * (3 * n * d + 4 * n)


# --- the backward pass -----------------------------------------------------------------------


@dataclass(frozen=True)
class BackwardTrade:
    stored_standard: int   # numbers kept from the forward pass for the backward: P (N²)
    stored_flash: int      # what FlashAttention keeps instead: each row's max m and sum ℓ (2N)
    stored_flash2: int     # FlashAttention-2: their log-sum-exp m + log ℓ, one per row (N)
    recompute_flops: int   # S = Q·Kᵀ again, block by block: 2·N²·d
    forward_flops: int     # the attention forward's two products: 4·N²·d


def backward_trade(n: int, d: int) -> BackwardTrade:
    """FlashAttention saves only O and each row's softmax statistics (m and ℓ; one log-sum-exp
    in FlashAttention-2); the backward pass rebuilds S and P in SRAM from Q and K, paying 2·N²·d
    FLOPs to avoid reading an N × N matrix."""
    return BackwardTrade(n * n, 2 * n, n, 2 * n * n * d, 4 * n * n * d)
