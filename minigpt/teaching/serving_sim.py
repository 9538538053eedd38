"""A small discrete-event simulator of one serving GPU, and the prefix tree a server keeps.

``simulate`` runs continuous batching (``serving.simulate`` shows the idea on unit steps) in
seconds: every iteration admits waiting requests while a slot and room in the KV budget remain,
prefills the newcomers and decodes one token for everyone in the same step. A step lasts the
longer of its arithmetic and its memory reads (the roofline of ``serving.timing``). When the
cache is full a running request is preempted, the newest first as vLLM does (Kwon et al. 2023),
and either its cache is swapped to host memory (copied out now, back when it resumes) or it is
dropped and recomputed by one prefill of prompt plus tokens so far.

Goodput counts only the requests that met both latency targets: time to first token (TTFT) and
time per output token (TPOT) below their limits. DistServe (Zhong et al. 2024) defines it as the
highest arrival rate at which a chosen share of requests meets both; here it is the simpler
requests a second that met both, for one stream of arrivals.

``RadixCache`` keeps the prompts already prefilled as a tree of token runs, as SGLang's
RadixAttention does (Zheng et al. 2024); a new prompt only prefills the part past its longest
match.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minigpt.teaching import serving


@dataclass(frozen=True)
class Gpu:
    """What a step costs: the model's 2·N FLOPs a token, its weights and each cached token's
    keys and values read once a step."""
    n_params: float
    weight_bytes: float
    kv_bytes_per_token: float
    flops_per_s: float
    bytes_per_s: float
    host_bytes_per_s: float   # to and from CPU memory, for swapping and offloading


def step_seconds(gpu: Gpu, prefill_tokens: int, decode_seqs: int, cached_tokens: int) -> float:
    """One iteration: newcomers' prompt tokens and one token per running sequence, computed
    together; the weights and every cached token read once."""
    compute = 2 * gpu.n_params * (prefill_tokens + decode_seqs) / gpu.flops_per_s
    memory = (gpu.weight_bytes + cached_tokens * gpu.kv_bytes_per_token) / gpu.bytes_per_s
    return max(compute, memory)


@dataclass(frozen=True)
class Job:
    arrives: float   # seconds
    prompt: int      # tokens
    output: int      # tokens to generate


def workload(n: int, rate_per_s: float, seed: int = 0) -> tuple[Job, ...]:
    """Poisson arrivals at ``rate_per_s``; prompts of 200 to 2,000 tokens, answers of 50 to 500,
    drawn uniformly with a fixed seed so every run of a lesson shows the same numbers."""
    rng, t, jobs = random.Random(seed), 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate_per_s)
        jobs.append(Job(t, rng.randint(200, 2000), rng.randint(50, 500)))
    return tuple(jobs)


@dataclass
class _Live:
    job: Job
    index: int
    made: int = 0                 # tokens generated so far
    first: float | None = None    # when the first token came out
    swapped: bool = False         # its cache waits in host memory

    @property
    def cached(self) -> int:
        return self.job.prompt + self.made


@dataclass
class Report:
    ttft: list[float] = field(default_factory=list)
    tpot: list[float] = field(default_factory=list)
    makespan: float = 0.0
    tokens: int = 0
    preemptions: int = 0
    recomputed_tokens: int = 0     # prompt and answer tokens prefilled a second time
    swap_seconds: float = 0.0      # time the GPU spent copying caches out and in

    def met(self, ttft_slo: float, tpot_slo: float) -> int:
        return sum(a <= ttft_slo and b <= tpot_slo for a, b in zip(self.ttft, self.tpot))

    def goodput(self, ttft_slo: float, tpot_slo: float) -> float:
        """Requests a second that met both targets."""
        return self.met(ttft_slo, tpot_slo) / self.makespan

    @property
    def throughput(self) -> float:
        return self.tokens / self.makespan


def simulate(jobs: tuple[Job, ...], gpu: Gpu, max_batch: int, kv_budget_tokens: int,
             preempt: str = "recompute") -> Report:
    """Serve ``jobs`` to the end; ``preempt`` is "recompute" or "swap"."""
    if preempt not in ("recompute", "swap"):
        raise ValueError(f"unknown preemption {preempt!r}: 'recompute' or 'swap'")
    if any(j.prompt + j.output > kv_budget_tokens for j in jobs):
        raise ValueError("a request's whole sequence is larger than the KV budget")
    pending = [_Live(j, i) for i, j in enumerate(sorted(jobs, key=lambda j: j.arrives))]
    waiting: list[_Live] = []      # arrived, not running; preempted ones go back to the front
    running: list[_Live] = []
    ttft, tpot = [0.0] * len(jobs), [0.0] * len(jobs)
    rep, now = Report(), 0.0
    while pending or waiting or running:
        while pending and pending[0].job.arrives <= now:
            waiting.append(pending.pop(0))
        if not waiting and not running:
            now = pending[0].job.arrives
            continue
        used = sum(r.cached for r in running)
        swap_out = 0
        while used + len(running) > kv_budget_tokens:   # each needs one more slot this step
            victim = running.pop()                       # the newest admitted
            used -= victim.cached
            rep.preemptions += 1
            if preempt == "swap":
                victim.swapped = True
                swap_out += victim.cached
            waiting.insert(0, victim)
        prefill = swap_in = admitted = 0
        while (waiting and len(running) < max_batch
               and used + len(running) + waiting[0].cached + 1 <= kv_budget_tokens):
            r = waiting.pop(0)
            if r.swapped:
                swap_in += r.cached
                r.swapped = False
            else:
                prefill += r.cached
                if r.made:   # it ran before: its prompt and answer so far are done again
                    rep.recomputed_tokens += r.cached
            used += r.cached
            running.append(r)
            admitted += 1
        moved = (swap_in + swap_out) * gpu.kv_bytes_per_token / gpu.host_bytes_per_s
        rep.swap_seconds += moved
        # a newcomer's first token comes out of its prefill; the others decode one token each
        now += step_seconds(gpu, prefill, len(running) - admitted, used) + moved
        for r in list(running):
            r.made += 1
            rep.tokens += 1
            if r.first is None:
                r.first = now
                ttft[r.index] = now - r.job.arrives
            if r.made == r.job.output:
                running.remove(r)
                tpot[r.index] = (now - r.first) / max(r.job.output - 1, 1)
    rep.ttft, rep.tpot, rep.makespan = ttft, tpot, now
    return rep


# --- a prefix tree of cached prompts ------------------------------------------------------------


class RadixCache:
    """Prompts already prefilled, as a tree whose edges hold runs of tokens. ``insert`` returns
    how many leading tokens were found cached, so only the rest is prefilled."""

    def __init__(self) -> None:
        self.root: dict[int, tuple[tuple[int, ...], dict]] = {}
        self.stored = 0   # tokens whose keys and values the tree holds

    def insert(self, tokens: tuple[int, ...]) -> int:
        node, i = self.root, 0
        while i < len(tokens):
            edge = node.get(tokens[i])
            if edge is None:
                node[tokens[i]] = (tokens[i:], {})
                self.stored += len(tokens) - i
                return i
            run, child = edge
            k = 0
            while k < len(run) and i + k < len(tokens) and run[k] == tokens[i + k]:
                k += 1
            if k < len(run):   # split the edge where the new prompt leaves it
                node[tokens[i]] = (run[:k], {run[k]: (run[k:], child)})
                child = node[tokens[i]][1]
            i += k
            node = child
        return i


def prefill_with_tree(prompts: list[tuple[int, ...]]) -> tuple[int, int]:
    """Prompt tokens prefilled with no sharing, and with a prefix tree that keeps everything."""
    tree = RadixCache()
    without = sum(len(p) for p in prompts)
    with_tree = sum(len(p) - tree.insert(p) for p in prompts)
    return without, with_tree


def chat_prompts(system: int, turns: int, turn_tokens: int, chats: int) -> list[tuple[int, ...]]:
    """``chats`` conversations sharing one system prompt; each turn's prompt is the whole
    conversation so far, so it extends the previous turn's prompt."""
    base = tuple(range(system))
    prompts, fresh = [], system
    for _ in range(chats):
        convo = base
        for _ in range(turns):
            convo = convo + tuple(range(fresh, fresh + turn_tokens))
            fresh += turn_tokens
            prompts.append(convo)
    return prompts


def reload_or_recompute_s(gpu: Gpu, tokens: int) -> tuple[float, float]:
    """A prefix evicted to host memory: seconds to copy its cache back (``serving.transfer_s``)
    against seconds to prefill it again (compute-bound)."""
    reload = serving.transfer_s(tokens * gpu.kv_bytes_per_token, gpu.host_bytes_per_s)
    return reload, step_seconds(gpu, tokens, 0, 0)
