"""Self-speculation with the MiniGPT's second (multi-token prediction) head: the calls and kept
drafts counted by hand on a table model, greedy names identical to greedy decoding on real
MiniGPTs, sampled names following plain sampling's distribution (chi-square), and the drafting
head being the one the auxiliary loss trained."""

from __future__ import annotations

import math

import pytest
import torch

from minigpt.data import Vocab
from minigpt.errors import SamplingError
from minigpt.models.bigram import Bigram
from minigpt.models.config import BigramConfig, GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.models.speedrun import after_next_loss
from minigpt.sampling import greedy_continuation
from minigpt.teaching import self_speculation


@pytest.fixture(autouse=True)
def _one_thread():
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        yield


PATH = [1, 2, 3, 1, 2, 0]  # the target's greedy name "abcab", then the end token


def path_heads(wrong_at: int | None = None, V: int = 4):
    """A target whose main head at position t is sure of PATH[t] and whose second head guesses
    PATH[t + 1] (the character after next), except at ``wrong_at``, where it guesses 3."""
    def one_hot(i):
        row = torch.full((V,), -20.0)
        row[i] = 20.0
        return row

    def heads(seq):
        main = torch.stack([one_hot(PATH[min(t, len(PATH) - 1)]) for t in range(len(seq))])
        second = torch.stack([one_hot(3 if t == wrong_at else PATH[min(t + 1, len(PATH) - 1)])
                              for t in range(len(seq))])
        return main, second

    return heads


def test_every_draft_kept_counted_by_hand():
    # calls: [.] → a, draft b | [. a b] keep b, then c, draft a | [. a b c a] keep a, then b, draft .
    #        | [. a b c a b .] keep the end: 4 calls, 3 drafts, all kept, 6 tokens (plain: 6 calls)
    ids, ended, stats = self_speculation.self_speculative_sample(path_heads(), block=8, gen=None)
    assert (ids, ended) == (PATH[:-1], True)
    assert (stats.target_calls, stats.drafted, stats.accepted, stats.tokens) == (4, 3, 3, 6)
    assert self_speculation.plain_sample(path_heads(), 8, None) == (PATH[:-1], True, 6)


def test_a_refused_draft_counted_by_hand():
    # the draft made at position 2 is wrong (c instead of a): [. a b c c] refuses it and puts a;
    # the second head at position 3 already guessed b for the place after: [. a b c a b] keeps
    # b, then ends. 4 calls, 3 drafts, 2 kept, 6 tokens.
    ids, ended, stats = self_speculation.self_speculative_sample(path_heads(wrong_at=2), block=8, gen=None)
    assert (ids, ended) == (PATH[:-1], True)
    assert (stats.target_calls, stats.drafted, stats.accepted, stats.tokens) == (4, 3, 2, 6)


def test_a_name_reaching_the_block_is_cut_as_plain_sampling_cuts_it():
    ids, ended, stats = self_speculation.self_speculative_sample(path_heads(), block=3, gen=None)
    assert (ids, ended) == (PATH[:2], False) == self_speculation.plain_sample(path_heads(), 3, None)[:2]
    assert stats.target_calls == 2  # [.] → a (draft b); [. a b] keeps b and reads c: past the block


def tiny_mtp_model(seed: int, V: int = 6) -> MiniGPT:
    torch.manual_seed(seed)
    model = MiniGPT(GPTConfig(vocab_size=V, block_size=8, d_model=16, n_heads=2, n_layers=2, mtp_weight=0.5))
    with torch.no_grad():  # sharper heads than at initialisation: names of several letters, no ties
        model.head.weight.mul_(60)
        model.mtp_head.weight.mul_(60)
    return model.eval()


@pytest.mark.parametrize("seed", range(4))
def test_greedy_self_speculation_is_greedy_decoding_on_a_real_minigpt(seed):
    model = tiny_mtp_model(seed)
    vocab = Vocab.from_list(list(".abcde"))
    ids, _, stats = self_speculation.self_speculative_sample(self_speculation.minigpt_heads(model), 8, None)
    plain, _, calls = self_speculation.plain_sample(self_speculation.main_only(model), 8, None)
    assert ids == plain
    assert vocab.decode(ids) == greedy_continuation(model, vocab, "")  # the cached, batched path
    # a call gives one token, or two when its draft is kept (one if that draft was the end token)
    assert stats.tokens == calls and 0 <= stats.target_calls - (calls - stats.accepted) <= 1


def test_the_draft_is_the_head_the_auxiliary_loss_trains():
    model = tiny_mtp_model(0)
    seq = [0, 1, 2, 3, 4, 0]
    x, y = torch.tensor([seq[:-1]]), torch.tensor([seq[1:]])
    main, second = self_speculation.minigpt_heads(model)(seq[:-1])
    model.train()  # the auxiliary loss is added only while training (dropout is 0)
    _, with_aux = model(x, y)
    model.eval()
    _, plain = model(x, y)
    assert float((with_aux - plain).detach()) == pytest.approx(0.5 * float(after_next_loss(second[None], y, None)), rel=1e-5)
    assert torch.allclose(main, model(x)[0][0])


def test_a_model_without_a_second_head_is_refused():
    model = MiniGPT(GPTConfig(vocab_size=6, block_size=8, d_model=16, n_heads=2, n_layers=1))
    with pytest.raises(SamplingError, match="mtp_weight"):
        self_speculation.minigpt_heads(model)


V, BLOCK = 4, 4  # the end token and 3 characters; at most 3 characters a name


def table_heads(seed: int = 0):
    """Random main and second-head logits per prefix: a target that depends on the whole prefix
    and a draft that is poor but not useless, at the cost of a look-up."""
    gen = torch.Generator().manual_seed(seed)
    rows: dict = {}

    def row(key):
        if key not in rows:
            rows[key] = torch.randn(V, generator=gen) * 1.5
        return rows[key]

    def heads(seq):
        main = torch.stack([row(("main", *seq[: t + 1])) for t in range(len(seq))])
        second = torch.stack([row(("second", *seq[: t + 1])) for t in range(len(seq))])
        return main, second

    return heads


def exact_outcomes(heads) -> dict:
    out = {}

    def walk(seq, prob):
        p = torch.softmax(heads(seq)[0][-1].double(), -1)
        out[(tuple(seq[1:]), True)] = prob * float(p[0])
        if len(seq) == BLOCK:
            out[(tuple(seq[1:]), False)] = prob * float(1 - p[0])
            return
        for c in range(1, V):
            walk(seq + [c], prob * float(p[c]))

    walk([0], 1.0)
    return out


def test_sampled_names_follow_plain_sampling_chi_square():
    heads = table_heads()
    exact = exact_outcomes(heads)
    assert sum(exact.values()) == pytest.approx(1.0)
    gen = torch.Generator().manual_seed(99)
    n, counts = 3000, dict.fromkeys(exact, 0)
    kept = drafted = 0
    for _ in range(n):
        ids, ended, stats = self_speculation.self_speculative_sample(heads, BLOCK, gen)
        counts[(tuple(ids), ended)] += 1
        kept, drafted = kept + stats.accepted, drafted + stats.drafted
    cells, small_obs, small_exp = [], 0, 0.0
    for key, prob in exact.items():
        if n * prob >= 5:
            cells.append((counts[key], n * prob))
        else:
            small_obs, small_exp = small_obs + counts[key], small_exp + n * prob
    cells.append((small_obs, small_exp))
    chi2 = sum((o - e) ** 2 / e for o, e in cells if e > 0)
    df = len(cells) - 1
    limit = df * (1 - 2 / (9 * df) + 3.090 * math.sqrt(2 / (9 * df))) ** 3  # the 0.999 quantile
    assert df >= 15 and chi2 < limit, (chi2, limit, df)
    assert 0.1 < kept / drafted < 0.9  # both the kept and the refused path ran


def test_compare_times_the_three_ways_on_the_same_names():
    model = tiny_mtp_model(1)
    vocab = Vocab.from_list(list(".abcde"))
    draft = Bigram(BigramConfig(vocab_size=6, block_size=8))
    result = self_speculation.compare(model, vocab, draft, n=4, repeats=1)
    assert result["greedy"]["plain"] == result["greedy"]["self"]
    mine = result["self"]
    # one call per token not drafted, plus one for each name that ended on a kept draft
    assert 0 <= mine["target_calls"] - (mine["tokens"] - mine["accepted"]) <= 4
    assert result["plain"]["target_calls"] == 4 * result["plain"]["mean_length"] + 4  # names + ends
    assert result["head_cost"] == pytest.approx(16 * 6 / (16 * 6 + 2 * (16 * 48 + 16 * 16 + 2 * 16 * 64)))
