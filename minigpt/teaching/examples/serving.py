"""Worked examples for "Serving many users: paged KV memory, continuous batching, prefix caching"."""

from __future__ import annotations

from minigpt.teaching import kv_memory as KV
from minigpt.teaching import serving as S
from minigpt.teaching.examples.registry import count, example, table

LLAMA2_7B = next(s for s in KV.MODELS if s.name == "LLaMA-2 7B")
CACHE_BUDGET = 40 * 2**30  # GPU memory left for the KV cache once the weights are loaded


@example("serving.paged", "Ten requests: KV slots reserved whole or in 16-token pages")
def _paged() -> str:
    mix = S.REQUEST_MIX
    whole, pages = S.contiguous(mix), S.paged(mix)
    rows = [["contiguous (2,048 each)", count(whole.used), count(whole.reserved),
             f"{whole.waste:.1%}"],
            [f"paged ({S.BLOCK_TOKENS} tokens a block)", count(pages.used),
             count(pages.reserved), f"{pages.waste:.1%}"]]
    per_token = KV.shape_bytes_per_token(LLAMA2_7B)
    budget = CACHE_BUDGET // per_token
    fit_whole = S.requests_that_fit(budget, S.MAX_CONTEXT)
    fit_pages = S.requests_that_fit(budget, pages.reserved / len(mix))
    return ("Lengths (prompt + answer): " + ", ".join(count(n) for n in mix) + ".\n\n"
            + table(["allocation", "used slots", "reserved", "wasted"], rows)
            + f"\n\nWith a LLaMA-2 7B-shaped cache ({KV.human_bytes(per_token)} per token) "
              f"and {KV.human_bytes(CACHE_BUDGET)} for the cache, {count(budget)} token slots: "
              f"{fit_whole} requests fit if each reserves 2,048, {fit_pages} of this mix "
              f"if they take pages as they grow.")


@example("serving.batching", "Static against continuous batching: 8 requests, 4 slots")
def _batching() -> str:
    reqs, slots = S.TOY_ARRIVALS, 4
    runs = {p: S.simulate(reqs, slots, p) for p in ("static", "continuous")}
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
    saving = S.prefix_saving(shared=1000, own=200, requests=50)
    per_token = KV.shape_bytes_per_token(LLAMA2_7B)
    rows = [["no sharing", count(saving.prefill_without),
             KV.human_bytes(saving.cached_without * per_token)],
            ["prefix cached", count(saving.prefill_with),
             KV.human_bytes(saving.cached_with * per_token)]]
    return (table(["", "prompt tokens computed", "KV cache (7B shape)"], rows)
            + f"\n\nThe shared prefix is computed and stored once: "
              f"{saving.prefill_saved:.1%} of the prefill work is saved, and the prompts' cache "
              f"shrinks by the same share.")
