"""Worked examples for "Serving systems: latency targets, prefix trees, preemption"."""

from __future__ import annotations

from functools import cache

from minigpt.teaching import inference_cost, kv_memory, params, serving_sim
from minigpt.teaching.examples.registry import count, example, table

LLAMA2_7B = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 7B")
CACHE_BUDGET = 40 * 2**30        # bytes of GPU memory left for the cache (as in serving.py's)
HOST_BYTES_PER_S = 25e9          # PCIe to host memory
TTFT_SLO, TPOT_SLO = 2.0, 0.012  # seconds: the latency targets a request must meet
RATE, N_JOBS = 10.0, 300         # requests a second, and how many
BATCHES = (8, 16, 24, 32, 48, 64)
SMALL_BUDGET = 16_384            # tokens: a cache small enough to force preemptions


def llama_gpu(host_bytes_per_s: float = HOST_BYTES_PER_S) -> serving_sim.Gpu:
    llama = params.llama2_7b_params()
    n = llama["total"] - llama["vocab"] * llama["d_model"]  # the lookup table does no multiply
    gpu = inference_cost.ILLUSTRATIVE_GPU
    return serving_sim.Gpu(n, 2 * n, kv_memory.shape_bytes_per_token(LLAMA2_7B), gpu.flops_per_s,
                  gpu.bytes_per_s, host_bytes_per_s)


def budget_tokens() -> int:
    return CACHE_BUDGET // kv_memory.shape_bytes_per_token(LLAMA2_7B)


@cache
def batch_sweep() -> dict[int, serving_sim.Report]:
    jobs = serving_sim.workload(N_JOBS, RATE)
    return {b: serving_sim.simulate(jobs, llama_gpu(), b, budget_tokens()) for b in BATCHES}


def _ms(s: float) -> str:
    return f"{s * 1e3:.1f}"


@example("serving_sys.goodput", "Goodput against batch size: 300 requests at 10 a second")
def _goodput() -> str:
    rows = []
    for b, r in batch_sweep().items():
        median_ttft = sorted(r.ttft)[len(r.ttft) // 2]
        rows.append([b, f"{r.throughput:,.0f}", f"{median_ttft:.2f}", _ms(max(r.tpot)),
                     r.met(TTFT_SLO, TPOT_SLO), f"{r.goodput(TTFT_SLO, TPOT_SLO):.2f}"])
    best = max(batch_sweep().items(), key=lambda kv: kv[1].goodput(TTFT_SLO, TPOT_SLO))[0]
    return (table(["batch", "tok/s", "median TTFT s", "worst TPOT ms", "met SLO",
                   "goodput/s"], rows)
            + f"\n\nLLaMA-2 7B on the illustrative GPU, {count(budget_tokens())} cache slots. "
              f"Targets: TTFT at most {TTFT_SLO:.0f} s and TPOT at most "
              f"{TPOT_SLO * 1e3:.0f} ms. Throughput rises with the batch all the way; goodput "
              f"peaks at a batch of {best}: below it requests queue too long, above it every "
              "step reads so many caches that TPOT misses its target.")


@example("serving_sys.preemption", "Recompute or swap: a 16,384-token cache, batch up to 64")
def _preemption() -> str:
    jobs = serving_sim.workload(N_JOBS, RATE)
    rows = []
    for host in (HOST_BYTES_PER_S, 200e9):
        for mode in ("recompute", "swap"):
            r = serving_sim.simulate(jobs, llama_gpu(host), 64, SMALL_BUDGET, mode)
            rows.append([f"{host / 1e9:.0f} GB/s", mode, r.preemptions,
                         count(r.recomputed_tokens), f"{r.swap_seconds:.2f}", f"{r.makespan:.2f}"])
    gpu = llama_gpu()
    per_token_prefill = serving_sim.step_seconds(gpu, 10_000, 0, 0) / 10_000
    per_token_swap = 2 * gpu.kv_bytes_per_token / gpu.host_bytes_per_s
    return (table(["link", "preempt by", "preempted", "tokens redone", "copying s",
                   "done at s"], rows)
            + f"\n\nPer token of cache: prefilling again costs "
              f"{per_token_prefill * 1e6:.1f} µs of compute; copying out and back over "
              f"{HOST_BYTES_PER_S / 1e9:.0f} GB/s costs {per_token_swap * 1e6:.1f} µs. "
              "Recompute wins on a slow link, swap once the link is fast enough.")


@example("serving_sys.radix", "A prefix tree: 10 chats of 4 turns on a 1,000-token system prompt")
def _radix() -> str:
    prompts = serving_sim.chat_prompts(system=1000, turns=4, turn_tokens=100, chats=10)
    without, with_tree = serving_sim.prefill_with_tree(prompts)
    flat = without - (len(prompts) - 1) * 1000   # the system prompt computed once
    return (table(["", "prompt tokens prefilled"],
                   [["no cache", count(without)], ["system prompt only", count(flat)],
                    ["prefix tree (every turn)", count(with_tree)]])
            + f"\n\nEach turn resends the whole chat. Sharing only the system prompt still "
              f"prefills every earlier turn again; the tree matches the previous turn too, "
              f"so only each turn's new {100} tokens are computed: "
              f"{1 - with_tree / without:.1%} saved.")


@example("serving_sys.offload", "A 1,000-token prefix evicted to host memory: reload or redo")
def _offload() -> str:
    rows = []
    for host in (HOST_BYTES_PER_S, 64e9, 200e9):
        reload, redo = serving_sim.reload_or_recompute_s(llama_gpu(host), 1000)
        rows.append([f"{host / 1e9:.0f} GB/s", _ms(reload), _ms(redo),
                     "reload" if reload < redo else "recompute"])
    gpu = llama_gpu()
    crossover = gpu.kv_bytes_per_token * gpu.flops_per_s / (2 * gpu.n_params)
    return (table(["host link", "reload ms", "prefill ms", "cheaper"], rows)
            + f"\n\nReloading beats prefilling once the link moves more than "
              f"{crossover / 1e9:.0f} GB/s (a token's cache, "
              f"{kv_memory.human_bytes(gpu.kv_bytes_per_token)}, in the time prefill spends on "
              "one token). A model with a smaller cache per token (GQA, MLA) moves the line "
              "down, a faster GPU moves it up.")


@example("serving_sys.interference", "Why disaggregate: a prompt's prefill inside a decode step")
def _interference() -> str:
    gpu, batch, context = llama_gpu(), 32, 1500
    alone = serving_sim.step_seconds(gpu, 0, batch, batch * context)
    rows = [["decode only", _ms(alone)]]
    for prompt in (512, 2048, 8192):
        rows.append([f"+ a {count(prompt)}-token prefill",
                     _ms(serving_sim.step_seconds(gpu, prompt, batch, batch * context))])
    return (table([f"step ({batch} sequences of {count(context)})", "ms"], rows)
            + "\n\nOn one GPU every decoding user waits for a newcomer's prefill. Split "
              "prefill onto its own GPUs and decode steps keep their pace; the price is the "
              "cache sent across (see *Serving many users*) and two pools to size.")

