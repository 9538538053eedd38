"""Worked examples for "Serving many users: paged KV memory, continuous batching, prefix caching"."""

from __future__ import annotations

from minigpt.teaching import kv_memory, serving
from minigpt.teaching.examples.registry import count, example, table

LLAMA2_7B = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 7B")
CACHE_BUDGET = 40 * 2**30  # GPU memory left for the KV cache once the weights are loaded


@example("serving.paged", "Ten requests: KV slots reserved whole or in 16-token pages")
def _paged() -> str:
    mix = serving.REQUEST_MIX
    whole, pages = serving.contiguous(mix), serving.paged(mix)
    rows = [["contiguous (2,048 each)", count(whole.used), count(whole.reserved),
             f"{whole.waste:.1%}"],
            [f"paged ({serving.BLOCK_TOKENS} tokens a block)", count(pages.used),
             count(pages.reserved), f"{pages.waste:.1%}"]]
    per_token = kv_memory.shape_bytes_per_token(LLAMA2_7B)
    budget = CACHE_BUDGET // per_token
    fit_whole = serving.requests_that_fit(budget, serving.MAX_CONTEXT)
    fit_pages = serving.requests_that_fit(budget, pages.reserved / len(mix))
    return ("Lengths (prompt + answer): " + ", ".join(count(n) for n in mix) + ".\n\n"
            + table(["allocation", "used slots", "reserved", "wasted"], rows)
            + f"\n\nWith a LLaMA-2 7B-shaped cache ({kv_memory.human_bytes(per_token)} per token) "
              f"and {kv_memory.human_bytes(CACHE_BUDGET)} for the cache, {count(budget)} token slots: "
              f"{fit_whole} requests fit if each reserves 2,048, {fit_pages} of this mix "
              f"if they take pages as they grow.")


@example("serving.batching", "Static against continuous batching: 8 requests, 4 slots")
def _batching() -> str:
    reqs, slots = serving.TOY_ARRIVALS, 4
    runs = {p: serving.simulate(reqs, slots, p) for p in ("static", "continuous")}
    lat = {p: o.latency(reqs) for p, o in runs.items()}
    rows = [[r.name, r.arrives, r.tokens, runs["static"].finish[r.name], lat["static"][r.name],
             runs["continuous"].finish[r.name], lat["continuous"][r.name]] for r in reqs]
    summary = [[p, o.steps, f"{o.mean_latency(reqs):.3f}", f"{o.utilisation(slots):.1%}"]
               for p, o in runs.items()]
    return (table(["req", "arrives", "tokens", "static done", "latency",
                   "contin. done", "latency"], rows)
            + "\n\n" + table(["policy", "steps", "mean latency", "slots busy"], summary)
            + "\n\nTimes are decode steps; a request's latency is the step after its last "
              "token minus its arrival. Both policies make the same tokens: continuous "
              "batching only stops slots from idling behind a long request.")


@example("serving.prefix", "A 1,000-token system prompt shared by 50 requests of 200 tokens")
def _prefix() -> str:
    saving = serving.prefix_saving(shared=1000, own=200, requests=50)
    per_token = kv_memory.shape_bytes_per_token(LLAMA2_7B)
    rows = [["no sharing", count(saving.prefill_without),
             kv_memory.human_bytes(saving.cached_without * per_token)],
            ["prefix cached", count(saving.prefill_with),
             kv_memory.human_bytes(saving.cached_with * per_token)]]
    return (table(["", "prompt tokens computed", "KV cache (7B shape)"], rows)
            + f"\n\nThe shared prefix is computed and stored once: "
              f"{saving.prefill_saved:.1%} of the prefill work is saved, and the prompts' cache "
              f"shrinks by the same share.")


PROMPT, ANSWER, CONTEXT = 1000, 500, 1500  # tokens: a chat request's prompt, answer, mean cache


def _llama_timing(batch: int) -> serving.Timing:
    from minigpt.teaching import inference_cost, params

    llama = params.llama2_7b_params()
    n = llama["total"] - llama["vocab"] * llama["d_model"]  # the lookup table does no multiply
    gpu = inference_cost.ILLUSTRATIVE_GPU
    return serving.timing(n, batch, PROMPT, CONTEXT, kv_memory.shape_bytes_per_token(LLAMA2_7B),
                    gpu.flops_per_s, gpu.bytes_per_s)


@example("serving.latency", "TTFT, TPOT and throughput: LLaMA-2 7B on one GPU, by batch size")
def _latency() -> str:
    rows = []
    for batch in (1, 8, 32, 64):
        t = _llama_timing(batch)
        rows.append([batch, f"{t.ttft_s * 1e3:.1f}", f"{t.tpot_s * 1e3:.1f}",
                     f"{1 / t.tpot_s:,.0f}", f"{t.tokens_per_s:,.0f}",
                     f"{t.latency_s(ANSWER):.2f}"])
    return (table(["batch", "TTFT ms", "TPOT ms", "tok/s a user", "tok/s total",
                   f"{ANSWER} tokens, s"], rows)
            + f"\n\nA {PROMPT:,}-token prompt; every sequence's cache holds {CONTEXT:,} tokens "
              f"({kv_memory.human_bytes(kv_memory.shape_bytes_per_token(LLAMA2_7B))} each), read at every "
              "decode step. TTFT here is the prefill alone; a busy server adds the time a "
              "request waits in the queue. A request takes TTFT + (n − 1)·TPOT. A bigger batch raises the "
              "server's throughput but, once the caches' reads dominate, slows every user: "
              "the operator picks a point on that curve.")


LINK_BYTES_PER_S = 50e9   # a fast network between servers (400 Gb/s)
HOST_BYTES_PER_S = 25e9   # PCIe to host memory


@example("serving.disaggregation", "Moving a prefilled cache: disaggregation and preemption")
def _disaggregation() -> str:
    cache = PROMPT * kv_memory.shape_bytes_per_token(LLAMA2_7B)
    prefill = _llama_timing(1).ttft_s
    send = serving.transfer_s(cache, LINK_BYTES_PER_S)
    swap = 2 * serving.transfer_s(cache, HOST_BYTES_PER_S)
    return (f"The cache of a {PROMPT:,}-token prompt is {kv_memory.human_bytes(cache)}. Sent from a "
            f"prefill server to a decode server at {LINK_BYTES_PER_S / 1e9:.0f} GB/s it takes "
            f"{send * 1e3:.1f} ms, against {prefill * 1e3:.1f} ms to prefill it. Swapped out "
            f"to host memory and back at {HOST_BYTES_PER_S / 1e9:.0f} GB/s when the request is "
            f"preempted: {swap * 1e3:.1f} ms; recomputing it instead costs one prefill, "
            f"{prefill * 1e3:.1f} ms of a GPU that had no spare room.")
