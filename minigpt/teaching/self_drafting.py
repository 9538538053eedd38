"""Drafting from the target itself: the sums behind Medusa heads, EAGLE's trees and DeepSeek-V3's
multi-token prediction, as the lesson "Decoding at the frontier" uses them.

- A chain of γ drafts, each kept with the same chance α, yields (1 − α^(γ+1)) / (1 − α) tokens per
  target call, and with a draft step costing c target steps a wall-time speed-up of that over
  c·γ + 1 (Leviathan et al. 2023): ``minigpt.teaching.speculative`` has both; here they are
  inverted for the draft cost a reported speed-up implies.
- A tree of candidates: ``rank_hits[d][r]`` is the chance that the target's own token at depth
  d + 1 is the head's rank-r guess there. A node is a path of ranks; it is accepted when every
  guess on its path is the target's token, so (depths taken as independent, as Medusa does when
  it builds its tree) its chance is the product along the path. At most one child of a node can
  be right, so the accepted nodes form one path, and the expected number of accepted drafts is
  the sum of every node's chance. ``best_tree`` adds nodes by that chance, Medusa's and EAGLE-2's
  way of spending a fixed budget of verified positions; ``simulate_tree`` checks the sum by
  drawing the right ranks.
- Medusa's typical acceptance keeps a candidate the target finds plausible enough, with a bar that
  drops as the target's distribution flattens.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from minigpt.teaching.speculative import expected_tokens_per_call, walltime_speedup

Node = tuple[int, ...]  # ranks along the path from the root: (0, 1) = head 1's best, then head 2's second


def check_rank_hits(rank_hits: Sequence[Sequence[float]]) -> None:
    for depth, row in enumerate(rank_hits):
        if any(p < 0 for p in row) or sum(row) > 1 + 1e-9:
            raise ValueError(f"depth {depth + 1}: rank chances must be ≥ 0 and add up to at most 1")


def node_chance(node: Node, rank_hits: Sequence[Sequence[float]]) -> float:
    """The chance that every guess on ``node``'s path is the target's token."""
    return math.prod(rank_hits[d][r] for d, r in enumerate(node))


def check_tree(tree: Iterable[Node], rank_hits: Sequence[Sequence[float]]) -> list[Node]:
    """The nodes as a list; ValueError when a node's parent is missing or it goes past the heads."""
    nodes = list(tree)
    present = set(nodes)
    for node in nodes:
        if not node or len(node) > len(rank_hits) or any(r >= len(rank_hits[d]) for d, r in enumerate(node)):
            raise ValueError(f"node {node}: no head guesses at that depth and rank")
        if len(node) > 1 and node[:-1] not in present:
            raise ValueError(f"node {node}: its parent {node[:-1]} is not in the tree")
    return nodes


def expected_accepted(tree: Iterable[Node], rank_hits: Sequence[Sequence[float]]) -> float:
    """Expected drafts accepted per target call: the sum of the nodes' chances. The call's tokens
    are one more (the target's own token after the last accepted draft)."""
    check_rank_hits(rank_hits)
    return sum(node_chance(node, rank_hits) for node in check_tree(tree, rank_hits))


def chain(depth: int) -> list[Node]:
    """Each head's best guess only: the plain line of γ = depth drafts."""
    return [(0,) * d for d in range(1, depth + 1)]


def best_tree(rank_hits: Sequence[Sequence[float]], size: int) -> list[Node]:
    """The ``size`` nodes with the largest chances, added one at a time from the children of the
    nodes already chosen (a child never beats its parent, so this is the best tree of that size)."""
    check_rank_hits(rank_hits)
    chosen: list[Node] = []
    frontier = [(r,) for r in range(len(rank_hits[0]))] if rank_hits else []
    while frontier and len(chosen) < size:
        node = max(frontier, key=lambda n: (node_chance(n, rank_hits), [-r for r in n]))
        frontier.remove(node)
        chosen.append(node)
        if len(node) < len(rank_hits):
            frontier += [node + (r,) for r in range(len(rank_hits[len(node)]))]
    return chosen


def simulate_tree(tree: Iterable[Node], rank_hits: Sequence[Sequence[float]], trials: int,
                  seed: int = 0) -> float:
    """The mean accepted length over ``trials`` draws of the right rank at each depth (rank
    'none of them' with the chance left over): an independent check of ``expected_accepted``."""
    nodes = set(check_tree(tree, rank_hits))
    rng = random.Random(seed)
    total = 0
    for _ in range(trials):
        path: Node = ()
        for row in rank_hits:
            u, rank = rng.random(), None
            for r, p in enumerate(row):
                u -= p
                if u < 0:
                    rank = r
                    break
            if rank is None or path + (rank,) not in nodes:
                break
            path += (rank,)
        total += len(path)
    return total / trials


def chain_tokens_per_call(alpha: float, gamma: int) -> float:
    """(1 − α^(γ+1)) / (1 − α): the chain's tokens per target call (bonus token included)."""
    return expected_tokens_per_call(alpha, gamma)


def chain_speedup(alpha: float, gamma: int, draft_cost: float) -> float:
    """Leviathan et al.'s wall-time speed-up with a draft step costing ``draft_cost`` target steps."""
    return walltime_speedup(alpha, gamma, draft_cost)


def best_gamma(alpha: float, draft_cost: float, longest: int = 32) -> int:
    """The draft length (1 … longest) with the largest wall-time speed-up."""
    return max(range(1, longest + 1), key=lambda g: chain_speedup(alpha, g, draft_cost))


def implied_draft_cost(alpha: float, gamma: int, speedup: float) -> float:
    """The cost c of one draft step, in target steps, that turns the chain's tokens per call into
    a reported ``speedup``: solves speed-up = tokens / (c·γ + 1) for c (everything else a round
    spends, verification's extra positions included, is counted in c)."""
    return (chain_tokens_per_call(alpha, gamma) / speedup - 1) / gamma


def typical_threshold(probs: Sequence[float], epsilon: float, delta: float) -> float:
    """Medusa's typical acceptance: a candidate is kept when the target gives it more than
    min(ε, δ·exp(−H)), H the entropy (nats) of the target's distribution at that place."""
    entropy = -sum(p * math.log(p) for p in probs if p > 0)
    return min(epsilon, delta * math.exp(-entropy))


def typical_accepts(probs: Sequence[float], token: int, epsilon: float, delta: float) -> bool:
    return probs[token] > typical_threshold(probs, epsilon, delta)
