"""Worked examples for "Decoding at the frontier": a chain's tokens per call and wall-time speed-up
with the draft's cost, a tree of candidates, Medusa's typical acceptance on the shipped MiniGPT,
what DeepSeek-V3's reported figures imply, and the self-speculation lab job's result."""

from __future__ import annotations

import functools

from minigpt import paths
from minigpt.errors import RunError
from minigpt.runs.lab import JOBS, bundled_dir, is_running, job_dir, read_result
from minigpt.teaching import self_drafting
from minigpt.teaching.examples.registry import count, example, fmt, table

ALPHAS = (0.6, 0.8, 0.9)
GAMMAS = (1, 2, 3, 5, 8)
DRAFT_COST = 0.05  # a draft step at 5% of a target step: a small head or one extra layer


@example("frontier_decoding.chain", f"A chain of γ drafts: tokens per call and speed-up at c = {DRAFT_COST}")
def _chain() -> str:
    rows = []
    for a in ALPHAS:
        rows.append([f"α = {a}", "tokens"] + [fmt(self_drafting.chain_tokens_per_call(a, g), 2) for g in GAMMAS])
        rows.append(["", "speed-up"] + [fmt(self_drafting.chain_speedup(a, g, DRAFT_COST), 2) for g in GAMMAS])
    best = "; ".join(f"α = {a}: γ = {self_drafting.best_gamma(a, DRAFT_COST)}, "
                     f"{fmt(self_drafting.chain_speedup(a, self_drafting.best_gamma(a, DRAFT_COST), DRAFT_COST), 2)}×"
                     for a in ALPHAS)
    return (table(["", ""] + [f"γ = {g}" for g in GAMMAS], rows)
            + "\n\ntokens = (1 − α^(γ+1)) / (1 − α), the target's own token after the last kept "
              "draft included; speed-up = tokens / (c·γ + 1). The best draft length and its "
              f"speed-up (γ from 1 to 32): {best}. A better draft earns longer chains; past "
              "the best γ each extra draft costs more than the tokens it adds.")


# Chances that head d's rank-r guess is the target's token: assumed, shaped like the per-head
# accuracies Medusa reports (each head further ahead is right less often).
RANK_HITS = ((0.60, 0.12, 0.06), (0.45, 0.12, 0.06), (0.35, 0.10, 0.05), (0.28, 0.08, 0.04))
TREE_SIZES = (1, 2, 4, 8, 16, 32)


def _label(node: tuple[int, ...]) -> str:
    return "-".join(str(r + 1) for r in node)


@example("frontier_decoding.tree", "A tree of candidates against a chain, four heads")
def _tree() -> str:
    heads = len(RANK_HITS)
    rows = []
    for size in TREE_SIZES:
        tree = self_drafting.best_tree(RANK_HITS, size)
        line = self_drafting.chain(min(size, heads))
        rows.append([size, fmt(1 + self_drafting.expected_accepted(tree, RANK_HITS), 3),
                     fmt(1 + self_drafting.expected_accepted(line, RANK_HITS), 3) if size <= heads else "—",
                     max(len(n) for n in tree)])
    eight = self_drafting.best_tree(RANK_HITS, 8)
    hits = "; ".join(f"head {d + 1}: " + ", ".join(fmt(p, 2) for p in row) for d, row in enumerate(RANK_HITS))
    return (table(["nodes checked", "tree: tokens/call", "chain: tokens/call", "depth"], rows)
            + f"\n\nAssumed chances that a head's first, second and third guesses are the target's "
              f"token ({hits}). A node's chance is the product along its path; the expected "
              "drafts kept are the sum over the nodes, plus the target's own token. The best "
              f"tree of 8 nodes (ranks along each path): {', '.join(_label(n) for n in eight)}. "
              "With the same number of checked positions the tree beats the chain, because a "
              "second guess at depth one is worth more than a fourth head's best guess.")


TYPICAL_EPSILON, TYPICAL_DELTA = 0.09, 0.3
TYPICAL_CONTEXTS = (".", ".emm", ".chr")


@functools.lru_cache(maxsize=1)
def _shipped():
    from minigpt.checkpoint import load_checkpoint

    return load_checkpoint(paths.default_checkpoint())


@example("frontier_decoding.typical", "Medusa's typical acceptance on the shipped MiniGPT")
def _typical() -> str:
    import math

    from minigpt.sampling import next_distribution

    ck = _shipped()
    rows = []
    for ctx in TYPICAL_CONTEXTS:
        dist = next_distribution(ck.model, ck.vocab, ctx[1:])
        probs = [float(p) for p in dist.probs]
        entropy = -sum(p * math.log(p) for p in probs if p > 0)
        bar = self_drafting.typical_threshold(probs, TYPICAL_EPSILON, TYPICAL_DELTA)
        kept = [ck.vocab.chars[i] for i in range(len(probs)) if self_drafting.typical_accepts(probs, i, TYPICAL_EPSILON, TYPICAL_DELTA)]
        rows.append([ctx, fmt(entropy, 2), fmt(bar, 3), len(kept), " ".join(kept[:8]) + (" …" if len(kept) > 8 else "")])
    return (table(["context", "H (nats)", "bar", "kept", "letters kept"], rows)
            + f"\n\nε = {TYPICAL_EPSILON} and δ = {TYPICAL_DELTA}; a drafted letter x is kept "
              "when the MiniGPT gives it more than min(ε, δ·exp(−H)). Where the next letter is "
              "nearly certain the bar is high and only it passes; where the model is unsure "
              "(the first letter) the bar falls and many letters pass. Unlike the exact check, "
              "this changes the output distribution: it trades exactness for longer accepted runs.")


# DeepSeek-AI (2024), "DeepSeek-V3 Technical Report", §5.4.3: the second token's acceptance rate
# between 85% and 90%, and 1.8 times the tokens per second of decoding without it.
DEEPSEEK_ACCEPTANCE = (0.85, 0.90)
DEEPSEEK_SPEEDUP = 1.8


@example("frontier_decoding.mtp", "What DeepSeek-V3's reported figures imply (one MTP module)")
def _mtp() -> str:
    rows = [[f"{a:.0%}", fmt(self_drafting.chain_tokens_per_call(a, 1), 2), f"{DEEPSEEK_SPEEDUP}×",
             fmt(self_drafting.implied_draft_cost(a, 1, DEEPSEEK_SPEEDUP), 3)] for a in DEEPSEEK_ACCEPTANCE]
    return (table(["2nd token kept", "tokens/call", "reported", "implied c"], rows)
            + "\n\nWith one extra module a round drafts one token (γ = 1), so a call yields 1 + α "
              "tokens. The reported speed-up is lower than that; solving speed-up = (1 + α) / "
              "(1 + c) for c gives what each round spends beyond one plain step: the module's "
              "own layer, the longer verification pass and the bookkeeping, a few percent of a "
              "step.")


SELF_NOT_RUN = ("Your own run: not yet. Press **x** in this lesson to start it in the background "
                "(about 3 minutes on two cores), or run `minigpt lab run self-speculation` in a "
                "terminal; it then replaces the bundled figures here.")


def bundled_result() -> dict | None:
    """The figures of one run of the job, shipped for learners who do not run it."""
    try:
        return read_result(bundled_dir("self-speculation"))
    except RunError:
        return None


def describe_result(result: dict) -> str:
    plain, mine, mlp = result["plain"], result["self"], result["mlp"]
    rows = [["plain sampling", count(plain["target_calls"]), "1.00", "—", f"{plain['seconds']:.2f} s", "1.00"]]
    for label, r in (("own MTP head", mine), ("MLP draft", mlp)):
        rows.append([label, count(r["target_calls"]), fmt(r["tokens"] / r["target_calls"], 2),
                     fmt(r["accepted"] / r["drafted"], 2), f"{r['seconds']:.2f} s",
                     fmt(plain["seconds"] / r["seconds"], 2)])
    alpha = mine["accepted"] / mine["drafted"]
    predicted = (mine["tokens"] / mine["target_calls"]) / (1 + result["head_cost"])
    hits = result["rank_hits"]
    tree = ", ".join(fmt(1 + self_drafting.expected_accepted([(r,) for r in range(w)], [hits]), 2)
                     for w in range(1, len(hits) + 1))
    t = result["training"]
    same = "identical" if result["greedy"]["plain"] == result["greedy"]["self"] else "DIFFERENT"
    return (table(["way", "target calls", "tokens/call", "kept", "time", "speed-up"], rows)
            + f"\n\n{result['names']} names sampled from one seed each way, one at a time, the "
              f"fastest of {result['repeats']} timings. The model: {t['n_layers']} layers of width "
              f"{t['d_model']}, {t['steps']} steps of {t['batch_size']} names with mtp_weight "
              f"{t['mtp_weight']} (test loss {fmt(result['test_loss'], 3)}). The second head "
              f"costs c = {fmt(result['head_cost'], 4)} of a forward pass, so tokens per call "
              f"over 1 + c predicts {fmt(predicted, 2)}×. The MTP head's draft is kept "
              f"{fmt(alpha, 2)} of the time: it guesses the character after next without "
              "knowing the next one, while the MLP draft sees it. Greedy decoding gives the "
              f"{same} name both ways (“{result['greedy']['self']}”). On test names the "
              "character after next is the head's first, second or third guess "
              + ", ".join(fmt(h, 2) for h in hits) + " of the time; a greedy check of its "
              f"top 1, 2 or 3 guesses as a tree of depth one, against a target that always "
              f"agreed with the data, would give {tree} tokens per call.")


@example(JOBS["self-speculation"].example, "Self-speculation on names: the MTP head as the draft")
def _lab() -> str:
    folder = job_dir("self-speculation")
    try:
        mine = read_result(folder)
    except RunError as e:
        mine, note = None, f"Your saved result cannot be read ({e}); press **x** to run the job again."
    else:
        note = "Running in the background now; your figures replace these when it is done." \
            if is_running(folder) else SELF_NOT_RUN
    if mine is not None:
        return ("Your run, " + f"{mine['seconds']:.0f} s at load average {mine['load_average']:.1f}:\n\n"
                + describe_result(mine))
    shipped = bundled_result()
    if shipped is None:
        return note
    return (f"The bundled run ({shipped['seconds']:.0f} s at load average "
            f"{shipped['load_average']:.1f}):\n\n" + describe_result(shipped) + "\n\n" + note)
