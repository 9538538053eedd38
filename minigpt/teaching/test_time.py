"""Test-time compute on names: a verifier turns sampling names into a task, and more samples buy
success in three ways (lesson "Reasoning models", lab job ``test_time``).

Two verifiers, each given a prompt (the first letters of the name):

- **held-out**: the finished name is one of the real names the model never trained on (the test
  split of the shipped model's own split, minus any name also in its train or val split); a name
  the model copies from its training set does not count;
- **rule**: the name has exactly a given number of letters and ends in a given letter (the model
  sees only the prompt; the rule is the verifier's).

From ``n`` seeded samples per prompt, three curves against the number of samples k:

- pass@k, the unbiased estimate 1 − C(n−c, k)/C(n, k) of ``minigpt.teaching.reasoning`` (a perfect
  verifier picking from k samples);
- best-of-k by the model's log-probability: the expected verdict on the most likely of k samples
  drawn from the n without replacement, computed exactly over every k-subset (no verifier at the
  choice; the verifier only scores it). Both the whole name's log-probability and its mean per
  token, which does not favour short names, are measured;
- self-consistency: the most frequent name among k samples (ties to the more likely), averaged
  over seeded draws of k-subsets.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minigpt.teaching.reasoning import pass_at_k

KS = (1, 2, 4, 8, 16, 32, 64)  # samples the curves are read at
N_SAMPLES = 512  # per prompt: n ≥ the largest k, and enough that c/n is not mostly noise
VOTE_DRAWS = 200  # k-subsets drawn per prompt and k for the majority vote
HELD_OUT_PROMPTS = ("a", "ma", "ka", "jo", "el", "br", "sh", "da")
RULE_TASKS = (("ma", 6, "a"), ("ka", 5, "n"), ("jo", 6, "n"), ("el", 5, "a"), ("br", 6, "n"),
              ("sh", 5, "a"), ("da", 6, "l"), ("a", 5, "y"))


@dataclass(frozen=True)
class Task:
    prompt: str
    verifier: str  # "held-out" or "rule"
    length: int = 0  # the rule's: letters in the whole name
    last: str = ""  # the rule's: its last letter

    def describe(self) -> str:
        if self.verifier == "rule":
            return f"{self.prompt}…, {self.length} letters, ends in {self.last}"
        return f"{self.prompt}…, a held-out name"


def tasks() -> list[Task]:
    return ([Task(p, "held-out") for p in HELD_OUT_PROMPTS]
            + [Task(p, "rule", length, last) for p, length, last in RULE_TASKS])


def held_out_names(words: Sequence[str], split_seed: int) -> frozenset[str]:
    """The test split's names that are in neither the train nor the val split."""
    from minigpt.splits import split_words

    splits = split_words(list(words), split_seed)
    return frozenset(splits.test) - frozenset(splits.train) - frozenset(splits.val)


def verifier_for(task: Task, held_out: frozenset[str]) -> Callable[[str], bool]:
    if task.verifier == "rule":
        return lambda name: len(name) == task.length and name.endswith(task.last)
    return lambda name: name in held_out


# --- the three curves, from one prompt's samples ---------------------------------------------


def pass_curve(verdicts: Sequence[bool], ks: Sequence[int]) -> list[float]:
    """pass@k for each k from n samples' verdicts (the unbiased estimator)."""
    return [pass_at_k(len(verdicts), sum(verdicts), k) for k in ks]


def best_of_k(scores: Sequence[float], verdicts: Sequence[bool], k: int) -> float:
    """The expected verdict on the highest-scoring of k samples drawn without replacement from n:
    the sample ranked r-th (from 0) is the best of a k-subset in C(n−1−r, k−1) of the C(n, k)
    subsets (equal scores ranked by position)."""
    n = len(scores)
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    total = math.comb(n, k)
    return sum(math.comb(n - 1 - r, k - 1) for r, i in enumerate(order) if verdicts[i]) / total


def majority(names: Sequence[str], scores: Sequence[float]) -> int:
    """The index of the most frequent name (ties: the more likely name, then the first)."""
    counts = Counter(names)
    return min(range(len(names)), key=lambda i: (-counts[names[i]], -scores[i], i))


def vote_curve(names: Sequence[str], scores: Sequence[float], verdicts: Sequence[bool],
               ks: Sequence[int], seed: int, draws: int = VOTE_DRAWS) -> list[float]:
    """Self-consistency: the mean verdict on the majority name of ``draws`` seeded k-subsets."""
    rng = random.Random(seed)
    out = []
    for k in ks:
        hits = 0
        for _ in range(draws):
            pick = rng.sample(range(len(names)), k)
            hits += verdicts[pick[majority([names[i] for i in pick], [scores[i] for i in pick])]]
        out.append(hits / draws)
    return out


@dataclass
class TaskResult:
    task: Task
    n: int
    right: int  # samples the verifier accepts
    pass_at: list[float]
    best_total: list[float]  # best-of-k by the whole name's log-probability
    best_mean: list[float]  # best-of-k by log-probability per token
    vote: list[float]

    def to_dict(self) -> dict:
        t = self.task
        return {"prompt": t.prompt, "verifier": t.verifier, "length": t.length, "last": t.last,
                "describe": t.describe(), "n": self.n, "right": self.right, "pass_at_k": self.pass_at,
                "best_of_k_logprob": self.best_total, "best_of_k_mean_logprob": self.best_mean,
                "majority_vote": self.vote}


def score_task(task: Task, samples, verify: Callable[[str], bool], ks: Sequence[int], seed: int) -> TaskResult:
    """The curves of one prompt from its samples (``minigpt.sampling.Sample``: text, logprob)."""
    names = [s.text for s in samples]  # the prompt included
    verdicts = [s.finished and verify(name) for s, name in zip(samples, names, strict=True)]
    total = [s.logprob for s in samples]
    mean = [s.mean_logprob for s in samples]
    return TaskResult(task, len(samples), sum(verdicts), pass_curve(verdicts, ks),
                      [best_of_k(total, verdicts, k) for k in ks], [best_of_k(mean, verdicts, k) for k in ks],
                      vote_curve(names, total, verdicts, ks, seed))


def measure(model, vocab, words: Sequence[str], split_seed: int, *, n: int = N_SAMPLES, ks: Sequence[int] = KS,
            seed: int = 0, task_list: Sequence[Task] | None = None, progress=lambda text: None) -> dict:
    """Every task's curves and, per verifier, their means over the prompts (the job's result)."""
    from minigpt.sampling import generate

    held_out = held_out_names(words, split_seed)
    rows = []
    for i, task in enumerate(task_list if task_list is not None else tasks()):
        samples = generate(model, vocab, n, prefix=task.prompt, seed=seed + i)
        rows.append(score_task(task, samples, verifier_for(task, held_out), ks, seed + i))
        progress(f"{task.describe()}: {rows[-1].right} of {n} samples pass")
    summary = {}
    for verifier in sorted({r.task.verifier for r in rows}):
        mine = [r for r in rows if r.task.verifier == verifier]
        summary[verifier] = {key: [sum(getattr(r, attr)[j] for r in mine) / len(mine) for j in range(len(ks))]
                             for key, attr in (("pass_at_k", "pass_at"), ("best_of_k_logprob", "best_total"),
                                               ("best_of_k_mean_logprob", "best_mean"), ("majority_vote", "vote"))}
    return {"ks": list(ks), "n": n, "seed": seed, "held_out_names": len(held_out), "temperature": 1.0,
            "tasks": [r.to_dict() for r in rows], "summary": summary}
