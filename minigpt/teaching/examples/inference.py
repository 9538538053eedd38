"""Worked examples for "What inference costs" (arithmetic only: timings come from a snippet)."""

from __future__ import annotations

from minigpt.teaching import inference_cost
from minigpt.teaching.examples.registry import count, example, table
from minigpt.training.flops import attention_forward_flops


def multiplied_weights(cfg) -> int:
    """The weights that take part in a multiply for each token: all but the lookup tables. The
    position table is only looked up; the token table too, unless it is tied to the output head,
    where the same weights multiply every position's final vector (GPT-2 small: 38.6M of them)."""
    from minigpt.teaching import params

    lookups = cfg.block_size * cfg.d_model
    if not cfg.tie_weights:
        lookups += cfg.vocab_size * cfg.d_model
    return params.gpt_total(cfg) - lookups


def _models():
    from minigpt.teaching import params
    from minigpt.teaching.shipped import shipped_model

    ours = shipped_model().config
    llama = params.llama2_7b_params()
    gpt2 = params.GPT2_SMALL
    return [
        ("our MiniGPT", multiplied_weights(ours), ours.n_layers, ours.block_size, ours.d_model),
        ("GPT-2 small", multiplied_weights(gpt2), gpt2.n_layers, gpt2.block_size, gpt2.d_model),
        ("LLaMA-2 7B", llama["total"] - llama["vocab"] * llama["d_model"], llama["n_layers"], 4096,
         llama["d_model"]),
    ]


@example("inference.flops_per_token", "FLOPs for one token at the end of a full context")
def _flops() -> str:
    rows = []
    for name, n, L, T, d in _models():
        attn = attention_forward_flops(L, T, d)
        total = inference_cost.flops_per_token(n, L, T, d)
        rows.append([name, count(n), f"{2 * n:.3g}", f"{attn:.3g}", f"{attn / total:.0%}"])
    from minigpt.teaching import params

    gpt2 = params.GPT2_SMALL
    head = 2 * gpt2.d_model * gpt2.vocab_size
    name, n, L, _, d = _models()[2]
    long = 32768
    share = attention_forward_flops(L, long, d) / inference_cost.flops_per_token(n, L, long, d)
    return (table(["model", "N", "2N", "4·L·T·d", "attention share"], rows)
            + "\n\nT is the full context. N counts every weight that multiplies: it leaves out the "
              "position table and an untied token table, since looking a row up is not a "
              "multiply, but keeps GPT-2's token table, which is tied to its output head and "
              f"so multiplies every final vector: 2 · {gpt2.d_model} · {gpt2.vocab_size:,} = "
              f"{head / 1e6:.1f} MFLOP a token. At these context lengths 2N dominates. The "
              f"attention term grows with the context: for {name} at {long:,} tokens it would "
              f"be {share:.0%} of the total.")


@example("inference.decode_bound", "One decode step of a 7B model in float16: memory or compute?")
def _decode() -> str:
    gpu = inference_cost.ILLUSTRATIVE_GPU
    llama_n = _models()[2][1]  # every weight but the embedding table (a lookup reads one row)
    rows = []
    for batch in (1, 8, 64, 512):
        step = inference_cost.decode_step(llama_n, batch, gpu)
        rows.append([batch, f"{step.intensity:g}", f"{step.compute_s * 1e3:.3f} ms",
                     f"{step.memory_s * 1e3:.2f} ms", step.bound])
    return (f"Assumed: {gpu.name}, which can do {gpu.balance:.0f} FLOPs per byte it reads.\n\n"
            + table(["batch", "FLOPs/byte", "compute time", "weight reads", "bound by"], rows)
            + "\n\nAt batch 1 the step waits on memory about "
            + f"{inference_cost.decode_step(llama_n, 1, gpu).memory_s / inference_cost.decode_step(llama_n, 1, gpu).compute_s:.0f}"
            + "× longer than on arithmetic: serving batches many users into each step.")
