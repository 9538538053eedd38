"""Serving many requests at once: KV memory reserved contiguously or in pages, static against
continuous batching on a toy arrival schedule, what a shared prompt prefix saves, a roofline
estimate of TTFT and TPOT, and the time to move a cache (disaggregation, preemption).

PagedAttention (Kwon et al. 2023, the vLLM paper) stores a sequence's keys and values in fixed
blocks of a few tokens, allocated as the sequence grows, instead of one slab reserved for the
longest possible sequence; only the last, partly filled block is wasted. Continuous batching
(Orca: Yu et al. 2022, "iteration-level scheduling") lets a finished request leave the batch
and a waiting one join it after every decode step, where static batching keeps a batch together
until its longest member is done. ``simulate`` runs both policies on the same arrivals, one
decode step at a time, counting what each request waits and how many batch slots do work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# --- KV memory: contiguous reservation against pages -----------------------------------------

# An illustrative request mix: prompt + generated tokens of ten chat requests, served by a model
# whose context is 2,048 tokens. Most are short and a few are long, as chat traffic is.
REQUEST_MIX = (180, 95, 610, 240, 1320, 75, 410, 150, 1900, 330)
MAX_CONTEXT = 2048
BLOCK_TOKENS = 16  # vLLM's default block size


@dataclass(frozen=True)
class Reservation:
    used: int       # token slots holding real keys and values
    reserved: int   # token slots set aside

    @property
    def waste(self) -> float:
        return 1 - self.used / self.reserved


def contiguous(lengths: tuple[int, ...], max_context: int = MAX_CONTEXT) -> Reservation:
    """Each request reserves room for the longest sequence it might become."""
    return Reservation(sum(lengths), len(lengths) * max_context)


def paged(lengths: tuple[int, ...], block: int = BLOCK_TOKENS) -> Reservation:
    """Each request holds whole blocks, just enough for the tokens it has."""
    return Reservation(sum(lengths), sum(math.ceil(n / block) * block for n in lengths))


def requests_that_fit(budget_tokens: int, per_request_tokens: float) -> int:
    return int(budget_tokens // per_request_tokens)


# --- static against continuous batching ------------------------------------------------------


@dataclass(frozen=True)
class Request:
    name: str
    arrives: int  # the decode step at which it is waiting
    tokens: int   # tokens it will generate


# A toy schedule: eight requests over the first steps, short and long mixed.
TOY_ARRIVALS = (
    Request("A", 0, 8), Request("B", 0, 2), Request("C", 0, 3), Request("D", 1, 2),
    Request("E", 2, 6), Request("F", 3, 1), Request("G", 4, 4), Request("H", 5, 2),
)


@dataclass(frozen=True)
class Outcome:
    finish: dict[str, int]   # step after a request's last token
    steps: int               # decode steps until every request is done
    busy_slots: int          # slot-steps that produced a token

    def latency(self, requests: tuple[Request, ...]) -> dict[str, int]:
        return {r.name: self.finish[r.name] - r.arrives for r in requests}

    def mean_latency(self, requests: tuple[Request, ...]) -> float:
        lat = self.latency(requests)
        return sum(lat.values()) / len(lat)

    def utilisation(self, slots: int) -> float:
        return self.busy_slots / (self.steps * slots)


def simulate(requests: tuple[Request, ...], slots: int, policy: str) -> Outcome:
    """Run decode steps until every request is done. ``policy`` is "static" (a batch is formed
    only when the previous one has entirely finished) or "continuous" (free slots are refilled
    from the queue before every step). Each active request makes one token per step."""
    if policy not in ("static", "continuous"):
        raise ValueError(f"unknown policy {policy!r}")
    waiting = sorted(requests, key=lambda r: r.arrives)
    left: dict[str, int] = {}   # active request → tokens still to make
    finish: dict[str, int] = {}
    step = busy = 0
    while waiting or left:
        arrived = [r for r in waiting if r.arrives <= step]
        if policy == "continuous" or not left:
            for r in arrived[: slots - len(left)]:
                left[r.name] = r.tokens
                waiting.remove(r)
        for name in list(left):
            left[name] -= 1
            busy += 1
            if left[name] == 0:
                del left[name]
                finish[name] = step + 1
        step += 1
    return Outcome(finish, step, busy)


# --- prefix caching --------------------------------------------------------------------------


@dataclass(frozen=True)
class PrefixSaving:
    prefill_without: int   # prompt tokens run through the model with no sharing
    prefill_with: int      # the shared prefix once, then each request's own part
    cached_without: int    # token slots of KV cache with no sharing
    cached_with: int

    @property
    def prefill_saved(self) -> float:
        return 1 - self.prefill_with / self.prefill_without


def prefix_saving(shared: int, own: int, requests: int) -> PrefixSaving:
    """``requests`` prompts that all start with the same ``shared`` tokens (a system prompt)
    followed by ``own`` tokens each; the shared part's keys and values are computed and stored
    once when the cache is reused."""
    without = requests * (shared + own)
    with_cache = shared + requests * own
    return PrefixSaving(without, with_cache, without, with_cache)


# --- latency: time to first token, time per output token ---------------------------------------


@dataclass(frozen=True)
class Timing:
    batch: int
    ttft_s: float   # time to first token: the prompt's prefill
    tpot_s: float   # time per output token: one decode step of the whole batch

    def latency_s(self, output_tokens: int) -> float:
        """End-to-end time of a request: the first token, then one step per further token."""
        return self.ttft_s + (output_tokens - 1) * self.tpot_s

    @property
    def tokens_per_s(self) -> float:
        """Tokens the server produces per second over the whole batch (throughput)."""
        return self.batch / self.tpot_s


def timing(n_params: float, batch: int, prompt: int, context: int, kv_bytes_per_token: float,
           flops_per_s: float, bytes_per_s: float, bytes_per_weight: int = 2) -> Timing:
    """A roofline estimate. Prefill does 2·N FLOPs per prompt token (attention left out) and reads
    the weights once; decode does 2·N per sequence and reads the weights once plus every
    sequence's KV cache of ``context`` tokens. Each phase takes the longer of its arithmetic and
    its reads."""
    weights = n_params * bytes_per_weight
    ttft = max(2 * n_params * prompt / flops_per_s, weights / bytes_per_s)
    tpot = max(2 * n_params * batch / flops_per_s,
               (weights + batch * context * kv_bytes_per_token) / bytes_per_s)
    return Timing(batch, ttft, tpot)


def transfer_s(n_bytes: float, bytes_per_s: float) -> float:
    """Seconds to move ``n_bytes`` over a link: a prefilled KV cache sent to a decode server
    (disaggregation), or a preempted request's cache swapped to host memory and back."""
    return n_bytes / bytes_per_s
