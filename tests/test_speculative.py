"""Speculative decoding: the output is the target's distribution, whatever the draft.

The exact part checks the one-step identity min(p, q) + (1 − α)·norm(max(0, p − q)) = p. The
statistical part samples whole names speculatively from a tiny target (3 characters and the end
token, names of at most 2 characters: 1 + 3 + 9 + 27 outcomes) with a deliberately poor draft,
and compares the counts with the target's exact probabilities by a chi-square test. The
generator is seeded, so the test is deterministic; the threshold is the 0.999 quantile.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from minigpt.errors import SamplingError
from minigpt.models.bigram import Bigram
from minigpt.models.config import BigramConfig, GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.teaching import speculative

V, BLOCK = 4, 3  # the end token and 3 characters; at most 2 characters a name


@pytest.fixture(autouse=True)
def _one_thread():
    """Thousands of tiny forward passes: on a busy machine extra threads only wait on each other."""
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        yield


class PrefixTable(torch.nn.Module):
    """A target whose next-character logits depend on the whole prefix (a random row per
    prefix): what a Transformer can do, at the cost of a dictionary look-up, so that thousands
    of names sample in a second."""

    def __init__(self, seed: int = 0):
        super().__init__()
        self.config = GPTConfig(vocab_size=V, block_size=BLOCK, d_model=8, n_heads=2, n_layers=1)
        self.gen = torch.Generator().manual_seed(seed)
        self.rows: dict[tuple[int, ...], torch.Tensor] = {}

    def row(self, prefix: tuple[int, ...]) -> torch.Tensor:
        if prefix not in self.rows:
            self.rows[prefix] = torch.randn(V, generator=self.gen) * 1.5
        return self.rows[prefix]

    def forward(self, idx, targets=None, *, last_only: bool = False, **_):
        seq = tuple(idx[0].tolist())
        logits = torch.stack([self.row(seq[: t + 1]) for t in range(len(seq))])[None]
        return (logits[:, -1:] if last_only else logits), None


def tiny_target(seed: int = 0) -> PrefixTable:
    return PrefixTable(seed)


def test_the_check_also_runs_on_a_real_minigpt():
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=V, block_size=BLOCK, d_model=8, n_heads=2, n_layers=1)).eval()
    ids, _, stats = speculative.speculative_sample(model, poor_draft(), 2, torch.Generator().manual_seed(0))
    assert stats.target_calls >= 1 and len(ids) <= BLOCK - 1


def poor_draft() -> Bigram:
    draft = Bigram(BigramConfig(vocab_size=V, block_size=BLOCK, smoothing=0.5))
    draft.counts.copy_(torch.tensor([[0., 9, 1, 1], [5, 0, 0, 6], [1, 1, 1, 1], [0, 0, 8, 1]]))
    return draft


def exact_outcomes(model) -> dict[tuple[tuple[int, ...], bool], float]:
    """Every (characters, ended) a name can be, with the target's probability."""
    out = {}

    @torch.no_grad()
    def p_next(seq):
        logits, _ = model(torch.tensor([seq]))
        return torch.softmax(logits[0, -1].double(), -1)

    def walk(seq, prob):
        p = p_next(seq)
        out[(tuple(seq[1:]), True)] = prob * float(p[0])
        if len(seq) == BLOCK:  # full: any character cuts the name here
            out[(tuple(seq[1:]), False)] = prob * float(1 - p[0])
            return
        for c in range(1, V):
            walk(seq + [c], prob * float(p[c]))

    walk([0], 1.0)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_one_check_emits_exactly_the_target_distribution(seed):
    gen = torch.Generator().manual_seed(seed)
    p = torch.softmax(torch.randn(7, generator=gen, dtype=torch.float64) * 2, -1)
    q = torch.softmax(torch.randn(7, generator=gen, dtype=torch.float64) * 2, -1)
    assert torch.allclose(speculative.one_step_distribution(p, q), p, atol=1e-12)
    assert speculative.one_step_distribution(p, p).allclose(p)  # nothing left over: the draft is always kept


def test_residual_and_acceptance_by_hand():
    p, q = torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.2, 0.3, 0.5])
    assert speculative.acceptance(p, q) == pytest.approx(0.2 + 0.3 + 0.2)
    assert speculative.residual(p, q).tolist() == pytest.approx([1.0, 0.0, 0.0])
    assert speculative.expected_tokens_per_call(0.5, 2) == pytest.approx(1.75)  # 1 + 0.5 + 0.25
    assert speculative.expected_tokens_per_call(1.0, 4) == 5


def test_speculative_names_follow_the_target_distribution_chi_square():
    target, draft = tiny_target(), poor_draft()
    exact = exact_outcomes(target)
    assert sum(exact.values()) == pytest.approx(1.0)
    gen = torch.Generator().manual_seed(1234)
    n, counts, total = 2000, dict.fromkeys(exact, 0), speculative.SpeculativeStats()
    for k in itertools.islice(itertools.cycle((1, 2, 3)), n):  # every draft length, mixed
        ids, ended, stats = speculative.speculative_sample(target, draft, k, gen)
        counts[(tuple(ids), ended)] += 1
        total.add(stats)
    # pool outcomes expected fewer than 5 times, as the chi-square approximation asks
    cells, small_obs, small_exp = [], 0, 0.0
    for key, prob in exact.items():
        if n * prob >= 5:
            cells.append((counts[key], n * prob))
        else:
            small_obs, small_exp = small_obs + counts[key], small_exp + n * prob
    if small_exp > 0:
        cells.append((small_obs, small_exp))
    chi2 = sum((o - e) ** 2 / e for o, e in cells)
    df = len(cells) - 1
    # Wilson–Hilferty: the 0.999 quantile of chi-square with df degrees of freedom (z = 3.090)
    limit = df * (1 - 2 / (9 * df) + 3.090 * math.sqrt(2 / (9 * df))) ** 3
    assert df >= 10 and chi2 < limit, (chi2, limit, df)
    assert 0.2 < total.acceptance_rate < 0.95  # the draft is poor, but not useless: both paths ran
    assert total.wasted > 0 and total.tokens_per_call > 1


def test_a_perfect_draft_is_always_kept_and_gives_k_plus_one_per_call():
    target = tiny_target()
    gen = torch.Generator().manual_seed(0)
    total = speculative.SpeculativeStats()
    for _ in range(50):
        _, _, stats = speculative.speculative_sample(target, target, 2, gen)
        assert stats.tokens_per_call >= 1
        total.add(stats)
    assert total.acceptance_rate == 1.0 and total.wasted == 0


def test_measured_rates_agree_with_alpha_on_the_shipped_models():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import checkpoints_dir

    gpt = load_checkpoint(checkpoints_dir() / "default").model
    mlp = load_checkpoint(checkpoints_dir() / "mlp").model
    (one, four) = speculative.measure_draft_lengths(gpt, mlp, (1, 4), n=8)
    assert abs(one.stats.acceptance_rate - one.mean_alpha) < 0.12
    assert 1 < one.stats.tokens_per_call < four.stats.tokens_per_call < 5
    assert four.stats.target_calls < one.stats.target_calls


def test_draft_length_must_be_positive():
    with pytest.raises(SamplingError):
        speculative.speculative_sample(tiny_target(), poor_draft(), 0, torch.Generator())


def test_the_lesson_example_pins_the_hand_worked_check():
    from minigpt.teaching.examples.catalog import render_example

    text = render_example("speculative.one_check")
    # p = (0.5, 0.3, 0.2), q = (0.2, 0.3, 0.5): α = 0.2 + 0.3 + 0.2, c kept with 0.2 / 0.5
    assert "= 0.70" in text and "| c | 0.20 | 0.50 | 0.40 | 0.20 | 0.00 | 0.20 |" in text
    assert "| a | 0.50 | 0.20 | 1.00 | 0.20 | 1.00 | 0.50 |" in text
    alpha = render_example("speculative.alpha")
    assert "| . | e |" in alpha and "| MLP |" in alpha
