"""Generating and scoring words with any of the three models.

``generate`` samples a batch of words at once. MiniGPT keeps a KV cache so each new character
costs one position of work instead of re-running the whole prefix; the MLP and bigram only ever
look at their short window. Every next-character distribution goes through one pipeline, which
step mode shows stage by stage: logits → ÷ temperature → top-k → top-p → softmax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from minigpt.data import Vocab
from minigpt.errors import SamplingError
from minigpt.tokenizer import Tokenizer

MIN_TEMPERATURE = 1e-3  # below this the scaled float32 logits overflow (and the choice is greedy anyway)
MAX_SAMPLES = 10_000  # one batch; more would only exhaust memory


def validate_options(temperature: float, top_k: int | None, top_p: float | None) -> None:
    if not (temperature > 0 and math.isfinite(temperature)):
        raise SamplingError(f"temperature must be > 0, got {temperature}")
    if temperature < MIN_TEMPERATURE:
        raise SamplingError(f"temperature must be at least {MIN_TEMPERATURE:g} (smaller is the same as "
                            f"always taking the most likely character), got {temperature:g}")
    if top_k is not None and top_k < 1:
        raise SamplingError(f"top-k must be at least 1, got {top_k}")
    if top_p is not None and not (0 < top_p <= 1):
        raise SamplingError(f"top-p must be in (0, 1], got {top_p}")


def filter_logits(logits: torch.Tensor, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """Set to −∞ the logits that top-k and then top-p rule out (last axis).

    Top-k keeps the k largest (ties at the k-th value are kept too). Top-p sorts the remaining
    probabilities in descending order and keeps the smallest prefix whose total reaches p; the
    most likely token always stays.
    """
    out = logits.clone()
    if top_k is not None and top_k < out.shape[-1]:
        kth = torch.topk(out, top_k, dim=-1).values[..., -1:]
        out = out.masked_fill(out < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        probs = torch.softmax(out, dim=-1)
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(dim=-1) - sorted_p  # mass of the tokens ranked above each one
        drop_sorted = before >= top_p  # already reached p without this token
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        out = out.masked_fill(drop, float("-inf"))
    return out


@dataclass
class Distribution:
    """One next-character distribution, every stage kept (for step mode)."""

    context: str
    logits: torch.Tensor  # raw (V,)
    scaled: torch.Tensor  # ÷ temperature
    filtered: torch.Tensor  # after top-k / top-p (−∞ where removed)
    probs_raw: torch.Tensor  # softmax of raw logits (T = 1, no filtering)
    probs: torch.Tensor  # final renormalised probabilities
    vocab: Vocab

    def top(self, n: int = 10) -> list[tuple[str, float, float]]:
        """(char, final prob, unfiltered prob at this temperature) for the n most likely."""
        base = torch.softmax(self.scaled, dim=-1)
        order = torch.argsort(base, descending=True)[:n]
        return [(self.vocab.chars[i], self.probs[i].item(), base[i].item()) for i in order.tolist()]

    @property
    def entropy(self) -> float:
        p = self.probs[self.probs > 0]
        return float(-(p * p.log()).sum())


def _shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message, its start only when it is long (a pasted megabyte)."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text):,} characters)"


def _encode_prefix(vocab: Vocab, prefix: str) -> list[int]:
    if "." in prefix:
        raise SamplingError(f"prefix {_shown(prefix)}: '.' is the start/end token, not a character of a name")
    missing = vocab.unknown(prefix)
    if missing:
        raise SamplingError(
            f"prefix {_shown(prefix)}: {', '.join([repr(c) for c in missing[:20]] + ['…'] * (len(missing) > 20))} not in the model's vocabulary "
            f"({''.join(vocab.chars[1:])})"
        )
    return [0] + vocab.encode(prefix)


def _encode_prompt(vocab: Tokenizer, prompt: str) -> list[int]:
    """A text model's prompt as ids: no start token, and ``.`` is an ordinary character (any
    tokenizer: a character vocabulary names what it lacks, a byte-level BPE lacks nothing)."""
    if not prompt:
        raise SamplingError("a text model continues a prompt: type at least one character")
    missing = vocab.unknown(prompt) if isinstance(vocab, Vocab) else []
    if missing:
        raise SamplingError(f"prompt: {', '.join(repr(c) for c in missing)} not in the model's vocabulary")
    return vocab.encode(prompt)


@torch.no_grad()
def next_distribution(model, vocab: Vocab, context: str, temperature: float = 1.0,
                      top_k: int | None = None, top_p: float | None = None, *,
                      start_token: bool = True) -> Distribution:
    """The next character's distribution after ``context``: a name's prefix after the start token,
    or (``start_token=False``, text models) a prompt as it is, its last ``block_size`` characters."""
    validate_options(temperature, top_k, top_p)
    block = model.config.block_size
    ids = _encode_prefix(vocab, context) if start_token else _encode_prompt(vocab, context)[-block:]
    if len(ids) > block:
        raise SamplingError(f"context of {len(ids) - 1} characters exceeds the model's limit of {block - 1}")
    device = next(iter(model.buffers()), next(model.parameters(), torch.empty(0))).device
    logits, _ = model(torch.tensor([ids], device=device), last_only=True)
    logits = logits[0, -1].float().cpu()
    scaled = logits / temperature
    filtered = filter_logits(scaled, top_k, top_p)
    return Distribution(context, logits, scaled, filtered, torch.softmax(logits, -1),
                        torch.softmax(filtered, -1), vocab)


@dataclass
class Sample:
    text: str
    logprob: float  # sum of log p of each chosen character, end token included
    n_tokens: int  # characters + the end token (0 when cut at max length without it)
    finished: bool  # emitted the end token before max length
    membership: str = "new"  # train / val / test / new, filled in when a dataset is given

    @property
    def mean_logprob(self) -> float:
        return self.logprob / max(self.n_tokens, 1)


def _model_device(model) -> torch.device:
    for t in list(model.parameters()) + list(model.buffers()):
        return t.device
    return torch.device("cpu")


@torch.no_grad()
def generate(model, vocab: Vocab, n: int = 20, *, temperature: float = 1.0, top_k: int | None = None,
             top_p: float | None = None, prefix: str = "", max_len: int | None = None,
             seed: int | None = None, use_cache: bool = True, dataset=None) -> list[Sample]:
    """Sample ``n`` words in one batch. Same seed and options → same words."""
    validate_options(temperature, top_k, top_p)
    if not 1 <= n <= MAX_SAMPLES:
        raise SamplingError(f"number of samples must be at least 1 and at most {MAX_SAMPLES:,}, got {n}")
    if seed is not None and not -(2**63) <= seed < 2**64:
        raise SamplingError(f"seed must fit in 64 bits, got {seed}")
    model.eval()
    block = model.config.block_size
    ids = _encode_prefix(vocab, prefix)
    max_chars = block - 1 if max_len is None else min(block - 1, max_len)
    if len(ids) - 1 > max_chars:
        raise SamplingError(f"prefix {prefix!r} is longer than the limit of {max_chars} characters")
    device = _model_device(model)
    gen = torch.Generator(device="cpu")
    if seed is not None:
        gen.manual_seed(seed)
    else:
        gen.seed()
    seq = torch.tensor([ids], device=device).repeat(n, 1)
    logprob = torch.zeros(n)
    n_tokens = torch.zeros(n, dtype=torch.long)
    alive = torch.ones(n, dtype=torch.bool)
    finished = torch.zeros(n, dtype=torch.bool)
    cached = use_cache and hasattr(model, "new_cache")
    cache = model.new_cache() if cached else None
    step_input, start = seq, 0
    while alive.any():
        if cached:
            logits, _ = model(step_input, cache=cache, start=start, last_only=True)
        else:
            logits, _ = model(seq, last_only=True)
        logits = filter_logits(logits[:, -1].float().cpu() / temperature, top_k, top_p)
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1)
        at_limit = seq.shape[1] - 1 == max_chars
        ended = alive & (nxt == 0)
        if at_limit:  # no room for another character: a row that did not end is cut here
            counted = ended
        else:
            counted = alive
        chosen_lp = torch.log(probs.gather(1, nxt[:, None]).squeeze(1))
        logprob += torch.where(counted, chosen_lp, torch.zeros_like(chosen_lp))
        n_tokens += counted.long()
        finished |= ended
        nxt = torch.where(alive, nxt, torch.zeros_like(nxt))  # finished rows keep emitting '.'
        alive &= nxt != 0
        if at_limit:
            break
        start = seq.shape[1]
        step_input = nxt[:, None].to(device)
        seq = torch.cat((seq, step_input), dim=1)
    samples = []
    for row, lp, nt, done in zip(seq.tolist(), logprob.tolist(), n_tokens.tolist(), finished.tolist()):
        body = row[1:]
        text = vocab.decode(body[: body.index(0)] if 0 in body else body)
        s = Sample(text, lp, nt, done)
        if dataset is not None:
            s.membership = dataset.membership(text)
        samples.append(s)
    return samples


@dataclass
class ScoredChar:
    char: str  # the character predicted ('.' for the end)
    prob: float
    best: str  # the most likely character after the same prefix
    best_prob: float


@torch.no_grad()
def score_word(model, vocab: Vocab, word: str) -> tuple[list[ScoredChar], float]:
    """Probability of each character of ``word`` (and the end token) given what precedes it."""
    if len(word) + 1 > model.config.block_size:  # before encoding: a pasted megabyte is refused at once
        raise SamplingError(f"{_shown(word)} is longer than the model's limit of {model.config.block_size - 1} characters")
    ids = _encode_prefix(vocab, word) + [0]
    model.eval()
    x = torch.tensor([ids[:-1]], device=_model_device(model))
    logits, _ = model(x)
    probs = torch.softmax(logits[0].float().cpu(), dim=-1)
    out, total = [], 0.0
    for t, target in enumerate(ids[1:]):
        p = probs[t, target].item()
        b = int(probs[t].argmax())
        out.append(ScoredChar(vocab.chars[target], p, vocab.chars[b], probs[t, b].item()))
        total += math.log(p)
    return out, total


@torch.no_grad()
def greedy_continuation(model, vocab: Vocab, prefix: str) -> str:
    """The most likely completion of ``prefix`` (top-k = 1)."""
    return generate(model, vocab, 1, top_k=1, prefix=prefix, seed=0)[0].text


@dataclass
class Continuation:
    prompt: str
    text: str  # the generated characters after the prompt
    logprob: float


def is_text_model(train_config: dict | None) -> bool:
    """A model trained on one long text (``--format text``) continues prompts; names end at ``.``."""
    return (train_config or {}).get("data_format") == "text"


@torch.no_grad()
def continue_text(model, vocab: Tokenizer, prompt: str, n_chars: int = 200, *, n: int = 1,
                  temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                  seed: int | None = None) -> list[Continuation]:
    """Extend ``prompt`` by ``n_chars`` tokens (characters for a character model), ``n`` times in
    one batch (text models and GPT-2, through ``minigpt.tokenizer``'s interface).

    Text has no end token: generation stops at the length asked for. Past the model's block size
    the context slides: the model sees the last ``block_size`` characters (and its key/value cache,
    which only fills up to the block, is dropped).
    """
    validate_options(temperature, top_k, top_p)
    if n < 1 or n_chars < 1:
        raise SamplingError("ask for at least one sample of at least one character")
    prompt_ids = _encode_prompt(vocab, prompt)
    model.eval()
    block = model.config.block_size
    device = _model_device(model)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed) if seed is not None else gen.seed()
    seq = torch.tensor([prompt_ids], device=device).repeat(n, 1)
    logprob = torch.zeros(n)
    cache = model.new_cache() if hasattr(model, "new_cache") else None
    step_input, start = seq[:, -block:], 0
    for _ in range(n_chars):
        if cache is not None and seq.shape[1] <= block:
            logits, _ = model(step_input, cache=cache, start=start, last_only=True)
        else:
            cache = None
            logits, _ = model(seq[:, -block:], last_only=True)
        logits = filter_logits(logits[:, -1].float().cpu() / temperature, top_k, top_p)
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1)
        logprob += torch.log(probs.gather(1, nxt[:, None]).squeeze(1))
        start = seq.shape[1]
        step_input = nxt[:, None].to(device)
        seq = torch.cat((seq, step_input), dim=1)
    cut = len(prompt_ids)
    return [Continuation(prompt, vocab.decode(row[cut:]), lp) for row, lp in zip(seq.tolist(), logprob.tolist())]
