"""Worked examples for "KV cache memory, MQA and GQA"."""

from __future__ import annotations

from minigpt.teaching import kv_memory
from minigpt.teaching.examples.registry import count, example, table


@example("kvmem.per_token", "Bytes per token = 2 · L · n_kv_heads · head_dim · bytes")
def _per_token() -> str:
    rows = []
    for s in (kv_memory.our_model(), *kv_memory.MODELS):
        per = kv_memory.shape_bytes_per_token(s)
        rows.append([s.name, f"2·{s.n_layers}·{s.n_kv_heads}·{s.head_dim}·{s.bytes_per_value}",
                     count(per), f"{s.context:,}", kv_memory.human_bytes(kv_memory.cache_bytes(s, s.context))])
    return (table(["model", "2·L·kv·hd·B", "bytes/token", "context", "cache"], rows)
            + "\n\nkv: key/value heads (LLaMA-2 70B has 64 query heads but 8 kv heads); hd: "
              "head_dim; B: bytes per number (4 for our float32 model, 2 for float16). The "
              "cache is for one sequence filling the context.")


@example("kvmem.gqa_saving", "What grouping saves on a 70B model (4,096 tokens, 16 sequences)")
def _saving() -> str:
    grouped = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 70B")
    mha = kv_memory.LLAMA2_70B_IF_MHA
    mqa = kv_memory.CacheShape("70B if MQA", 80, 64, 1, 128, 2, 4096)
    rows = []
    for s in (mha, grouped, mqa):
        rows.append([f"{s.name} ({s.attention}, {s.n_kv_heads} kv)",
                     kv_memory.human_bytes(kv_memory.shape_bytes_per_token(s)),
                     kv_memory.human_bytes(kv_memory.cache_bytes(s, 4096, 16))])
    factor = kv_memory.shape_bytes_per_token(mha) / kv_memory.shape_bytes_per_token(grouped)
    return (table(["layout", "per token", "16 × 4,096 tokens"], rows)
            + f"\n\nEight key/value heads instead of 64 cut the cache {factor:g}×. The "
              f"weights of 70 billion parameters in float16 take "
              f"{kv_memory.human_bytes(70e9 * 2)}: with MHA the cache of this modest batch would "
              f"outweigh them.")


@example("kvmem.measured", "Our MiniGPT's cache, measured, with 4, 2 and 1 key/value heads")
def _measured() -> str:
    from dataclasses import replace

    import torch

    from minigpt.models.gpt import MiniGPT
    from minigpt.teaching.shipped import shipped_model
    from minigpt.training.cpu_policy import one_thread

    ours = shipped_model().config
    rows = []
    for kv in (4, 2, 1):
        torch.manual_seed(0)
        cfg = replace(ours, n_kv_heads=kv)
        with one_thread():
            model = MiniGPT(cfg).eval()
            measured = kv_memory.measured_cache_bytes(model, cfg.block_size)
        formula = kv_memory.bytes_per_token(cfg.n_layers, kv, cfg.head_dim, 4) * cfg.block_size
        name = {4: "MHA", 2: "GQA", 1: "MQA"}[kv]
        rows.append([f"{name}, n_kv_heads = {kv}", count(measured), count(formula),
                     count(sum(p.numel() for p in model.parameters()))])
    return (table(["layout", "cache bytes", "formula", "parameters"], rows)
            + f"\n\n{ours.block_size} tokens (a full context), float32: the bytes the model really stored equal the formula. "
              "Fewer key/value heads also make W_K and W_V narrower.")


# --- windows, sinks and latent attention -------------------------------------------------------


@example("kvmem.window", "A window of 4 with 1 sink, after 10 tokens, against a full cache")
def _window() -> str:
    from minigpt.teaching import attention_variants

    rows = []
    for t in (3, 5, 8, 10):
        rows.append([t, ", ".join(map(str, range(t))),
                     ", ".join(map(str, attention_variants.window_positions(t, 4))),
                     ", ".join(map(str, attention_variants.window_positions(t, 4, sinks=1)))])
    slots = attention_variants.rolling_slots(10, 4)
    return (table(["t", "full cache", "window 4", "window 4 + 1 sink"], rows)
            + "\n\nThe window's rolling buffer after 10 tokens, slot by slot: "
            + ", ".join(f"slot {i} → token {p}" for i, p in enumerate(slots))
            + ": token t goes to slot t mod 4, over the token four places before it.")


@example("kvmem.window_bytes", "Mistral-7B's cache: full against a 4,096-token window")
def _window_bytes() -> str:
    from minigpt.teaching import attention_variants

    mistral = kv_memory.CacheShape("Mistral 7B", 32, 32, 8, 128, 2, 32768)
    per = kv_memory.shape_bytes_per_token(mistral)
    rows = []
    for t in (4096, 16384, 32768):
        rows.append([f"{t:,}", kv_memory.human_bytes(per * attention_variants.cached_tokens(t)),
                     kv_memory.human_bytes(per * attention_variants.cached_tokens(t, 4096)),
                     kv_memory.human_bytes(per * attention_variants.cached_tokens(t, 4092, sinks=4))])
    return (table(["tokens", "full cache", "window 4,096", "4 sinks + 4,092"], rows)
            + f"\n\n32 layers, 8 key/value heads of 128, float16: {kv_memory.human_bytes(per)} per "
              "token. Past the window the cache stops growing; the sinks cost 4 of its slots.")


@example("kvmem.mla", "Numbers cached per token: MHA, GQA, MQA and MLA on DeepSeek-V2's shape")
def _mla() -> str:
    from minigpt.teaching import attention_variants

    shape = attention_variants.DEEPSEEK_V2
    mha = None
    rows = []
    for lay in attention_variants.layouts(shape["n_heads"], shape["head_dim"], 8, shape["latent"],
                          shape["rope_dim"]):
        per = lay.bytes_per_token(shape["n_layers"])
        mha = mha or per
        rows.append([lay.name, count(lay.numbers_per_layer), kv_memory.human_bytes(per),
                     f"{mha / per:,.1f}×"])
    return (table(["layout", "numbers/layer", "bytes/token (bf16)", "smaller than MHA"], rows)
            + "\n\n60 layers, 128 heads of 128. MHA caches 2·128·128 numbers a layer; MLA "
              "caches a 512-number latent plus a 64-number rotary key shared by the heads, "
              "and rebuilds each head's keys and values from the latent.")
