"""Worked examples for "Speculative decoding and beam search": one verification step by hand,
the shipped drafts' acceptance along a name, and beams against greedy and sampling."""

from __future__ import annotations

import functools

import torch

from minigpt.teaching import beam_search, speculative
from minigpt.teaching.examples.registry import example, fmt, table

HAND_P = (0.5, 0.3, 0.2)  # the target's next-letter distribution over a, b, c
HAND_Q = (0.2, 0.3, 0.5)  # the draft's
NAME = "emma"
DRAFT_LENGTHS = (1, 2, 4, 8)
BEAM_WIDTHS = (1, 3, 10, 30)


@example("speculative.one_check", "One check of a drafted letter, by hand")
def _one_check() -> str:
    p, q = torch.tensor(HAND_P, dtype=torch.float64), torch.tensor(HAND_Q, dtype=torch.float64)
    keep = torch.clamp(p / q, max=1.0)
    res, out = speculative.residual(p, q), speculative.one_step_distribution(p, q)
    rows = [[c, fmt(p[i].item(), 2), fmt(q[i].item(), 2), fmt(keep[i].item(), 2),
             fmt(torch.minimum(p, q)[i].item(), 2), fmt(res[i].item(), 2), fmt(out[i].item(), 2)]
            for i, c in enumerate("abc")]
    alpha = speculative.acceptance(p, q)
    return (table(["x", "p(x)", "q(x)", "keep", "q·keep", "residual", "emitted"], rows)
            + f"\n\nA drafted letter survives with α = Σ min(p, q) = {fmt(alpha, 2)}. A refusal "
              f"(chance {fmt(1 - alpha, 2)}) draws from the residual, which here is all on "
              f"“a”: the one letter the draft offers too rarely. Adding "
              f"q·keep and {fmt(1 - alpha, 2)} × residual gives back p exactly.")


@functools.lru_cache(maxsize=1)
def _shipped_models():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import checkpoints_dir

    return tuple(load_checkpoint(checkpoints_dir() / name) for name in ("default", "bigram", "mlp"))


@example("speculative.alpha", f"How often each draft would be kept along “{NAME}”")
def _alpha() -> str:
    from minigpt.training.cpu_policy import one_thread

    gpt, bigram, mlp = _shipped_models()
    ids = gpt.vocab.encode(NAME)
    with one_thread():
        a_bigram = speculative.position_alphas(gpt.model, bigram.model, ids)
        a_mlp = speculative.position_alphas(gpt.model, mlp.model, ids)
    contexts = ["." + NAME[:t] for t in range(len(NAME) + 1)]
    nexts = list(NAME) + ["."]
    rows = [[ctx, nxt, fmt(b, 2), fmt(m, 2)] for ctx, nxt, b, m in zip(contexts, nexts, a_bigram, a_mlp)]
    mean_b, mean_m = sum(a_bigram) / len(a_bigram), sum(a_mlp) / len(a_mlp)
    rows.append(["mean", "", fmt(mean_b, 2), fmt(mean_m, 2)])
    per_k = table(["k"] + [str(k) for k in DRAFT_LENGTHS],
                  [[draft] + [fmt(speculative.expected_tokens_per_call(a, k), 2) for k in DRAFT_LENGTHS]
                   for draft, a in (("bigram", mean_b), ("MLP", mean_m))])
    return (table(["context", "next", "α bigram", "α MLP"], rows)
            + "\n\nα = Σ min(p, q) compares the MiniGPT's whole next-letter distribution with "
              "the draft's. The MLP sees three letters, the bigram one, so the MLP agrees more "
              "often. If every draft were kept with the mean α, one target call would give "
              "(1 − α^(k+1)) / (1 − α) letters:\n\n" + per_k)


@functools.lru_cache(maxsize=1)
def _beams():
    from minigpt.data import load_words
    from minigpt.paths import default_dataset
    from minigpt.sampling import generate
    from minigpt.training.cpu_policy import one_thread

    ck = _shipped_models()[0]
    with one_thread():
        by_width = [(w, beam_search.beam_search(ck.model, ck.vocab, w)) for w in BEAM_WIDTHS]
        at_least_one = beam_search.beam_search(ck.model, ck.vocab, BEAM_WIDTHS[-1], min_chars=1)
        penalised = beam_search.beam_search(ck.model, ck.vocab, 10, alpha=1.0)
        sampled = generate(ck.model, ck.vocab, 200, seed=0)
    words = list(load_words(default_dataset()))
    return ck.vocab, by_width + [("min1", at_least_one)], penalised, sampled, words


@example("beam.widths", "Greedy and beams of growing width on the shipped MiniGPT")
def _widths() -> str:
    vocab, by_width, _, sampled, words = _beams()
    rows = []
    for width, beams in by_width:
        best = beams[0]
        top = [b.text(vocab) for b in beams[:10]]
        label = {1: "1 (greedy)", "min1": f"{BEAM_WIDTHS[-1]}, ≥ 1 letter"}.get(width, str(width))
        rows.append([label, best.text(vocab) or "(empty)", fmt(best.logprob, 2),
                     fmt(torch.tensor(best.logprob).exp().item() * 1000, 3), fmt(beam_search.mean_length(top), 1)])
    return (table(["width", "best name", "log p", "p × 1000", "mean length"], rows)
            + "\n\nA wider beam finds a more likely whole name (end token included). The "
              "widest finds the likeliest of all: the empty name, ending at once, which no "
              "sampler would pick often but which beats every real name on total probability. "
              "Barred from it, the search returns a short common name. Mean length is over the "
              "best ten names found (fewer at small widths). For comparison, 200 sampled names "
              f"average {fmt(beam_search.mean_length([s.text for s in sampled]), 1)} letters and the "
              f"training names {fmt(beam_search.mean_length(words), 1)}.")


@example("beam.length_penalty", "The length penalty: ranking by log p / n^β (width 10)")
def _length_penalty() -> str:
    vocab, by_width, penalised, _, _ = _beams()
    raw = dict(by_width)[10]
    rows = []
    for i in range(5):
        a, b = raw[i], penalised[i]
        rows.append([i + 1, a.text(vocab), fmt(a.logprob, 2), b.text(vocab), fmt(b.logprob, 2),
                     fmt(b.score, 3)])
    return (table(["rank", "β = 0", "log p", "β = 1", "log p", "log p / n"], rows)
            + "\n\nn counts the letters and the end token. With β = 1 the ranking is the mean "
              "log-probability per letter, so a long name whose letters are each very likely "
              "can beat a short one. The search itself still keeps the likeliest partial names "
              "(the penalty only ranks the finished ones).")


WALLTIME_ALPHA = 0.8
DRAFT_COSTS = (0.02, 0.1, 0.3)  # a draft step's cost in target steps: a head, a small model, a big one


@example("speculative.walltime", f"Wall-time speed-up with the draft's cost (α = {WALLTIME_ALPHA})")
def _walltime() -> str:
    ks = (1, 2, 4, 8)
    rows = [[f"c = {c}"] + [fmt(speculative.walltime_speedup(WALLTIME_ALPHA, k, c), 2) for k in ks]
            for c in DRAFT_COSTS]
    best = {c: max(range(1, 17), key=lambda k, c=c: speculative.walltime_speedup(WALLTIME_ALPHA, k, c))
            for c in DRAFT_COSTS}
    return (table(["draft cost"] + [f"k = {k}" for k in ks], rows)
            + "\n\nspeed-up = (1 − α^(k+1)) / ((1 − α)(c·k + 1)): the tokens a round yields over "
              "what the round costs, k draft steps at c each plus one target pass. The best k "
              "(of 1 to 16): " + ", ".join(f"{best[c]} for c = {c}" for c in DRAFT_COSTS)
            + ". A cheap draft, such as extra heads on the target itself, can afford long drafts; "
              "a costly one wants short ones.")
