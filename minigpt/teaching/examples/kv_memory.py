"""Worked examples for "KV cache memory, MQA and GQA"."""

from __future__ import annotations

from minigpt.teaching import kv_memory as KV
from minigpt.teaching.examples.registry import count, example, table


@example("kvmem.per_token", "Bytes per token = 2 · L · n_kv_heads · head_dim · bytes")
def _per_token() -> str:
    rows = []
    for s in KV.MODELS:
        per = KV.shape_bytes_per_token(s)
        rows.append([s.name, f"2·{s.n_layers}·{s.n_kv_heads}·{s.head_dim}·{s.bytes_per_value}",
                     count(per), f"{s.context:,}", KV.human_bytes(KV.cache_bytes(s, s.context))])
    return (table(["model", "2·L·kv·hd·B", "bytes/token", "context", "cache"], rows)
            + "\n\nkv: key/value heads (LLaMA-2 70B has 64 query heads but 8 kv heads); hd: "
              "head_dim; B: bytes per number (4 for our float32 model, 2 for float16). The "
              "cache is for one sequence filling the context.")


@example("kvmem.gqa_saving", "What grouping saves on a 70B model (4,096 tokens, 16 sequences)")
def _saving() -> str:
    grouped = next(s for s in KV.MODELS if s.name == "LLaMA-2 70B")
    mha = KV.LLAMA2_70B_IF_MHA
    mqa = KV.CacheShape("70B if MQA", 80, 64, 1, 128, 2, 4096)
    rows = []
    for s in (mha, grouped, mqa):
        rows.append([f"{s.name} ({s.attention}, {s.n_kv_heads} kv)",
                     KV.human_bytes(KV.shape_bytes_per_token(s)),
                     KV.human_bytes(KV.cache_bytes(s, 4096, 16))])
    factor = KV.shape_bytes_per_token(mha) / KV.shape_bytes_per_token(grouped)
    return (table(["layout", "per token", "16 × 4,096 tokens"], rows)
            + f"\n\nEight key/value heads instead of 64 cut the cache {factor:g}×. The "
              f"weights of 70 billion parameters in float16 take "
              f"{KV.human_bytes(70e9 * 2)}: with MHA the cache of this modest batch would "
              f"outweigh them.")


@example("kvmem.measured", "Our MiniGPT's cache, measured, with 4, 2 and 1 key/value heads")
def _measured() -> str:
    import torch

    from minigpt.models.config import GPTConfig
    from minigpt.models.gpt import MiniGPT
    from minigpt.teaching.init_stats import one_thread

    rows = []
    for kv in (4, 2, 1):
        torch.manual_seed(0)
        cfg = GPTConfig(n_kv_heads=kv)
        with one_thread():
            model = MiniGPT(cfg).eval()
            measured = KV.measured_cache_bytes(model, cfg.block_size)
        formula = KV.bytes_per_token(cfg.n_layers, kv, cfg.head_dim, 4) * cfg.block_size
        name = {4: "MHA", 2: "GQA", 1: "MQA"}[kv]
        rows.append([f"{name}, n_kv_heads = {kv}", count(measured), count(formula),
                     count(sum(p.numel() for p in model.parameters()))])
    return (table(["layout", "cache bytes", "formula", "parameters"], rows)
            + "\n\n16 tokens, float32: the bytes the model really stored equal the formula. "
              "Fewer key/value heads also make W_K and W_V narrower.")
