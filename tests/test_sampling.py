import math

import pytest
import torch

from minigpt.data import Vocab, load_dataset
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.sampling import SamplingError, filter_logits, generate, next_distribution
from tests.helpers.floats import LOGPROB_ATOL

VOCAB = Vocab.from_words(["abcdefghijklmnopqrstuvwxyz"])


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = MiniGPT(GPTConfig(vocab_size=VOCAB.size, block_size=12, d_model=32, n_heads=4, n_layers=2))
    with torch.no_grad():  # sharper than the tiny init so names have varied lengths
        m.head.weight.normal_(0, 0.5)
    return m.eval()


def texts(samples):
    return [s.text for s in samples]


def test_same_seed_same_names(model):
    a = generate(model, VOCAB, 30, seed=7)
    b = generate(model, VOCAB, 30, seed=7)
    assert texts(a) == texts(b)
    assert texts(generate(model, VOCAB, 30, seed=8)) != texts(a)


def test_cache_and_no_cache_agree(model):
    a = generate(model, VOCAB, 40, seed=3, use_cache=True)
    b = generate(model, VOCAB, 40, seed=3, use_cache=False)
    assert texts(a) == texts(b)
    assert all(math.isclose(x.logprob, y.logprob, abs_tol=LOGPROB_ATOL) for x, y in zip(a, b))  # cached vs not


def greedy(model, prefix=""):
    ids = [0] + VOCAB.encode(prefix)
    while len(ids) < model.config.block_size:
        logits, _ = model(torch.tensor([ids]))
        nxt = int(logits[0, -1].argmax())
        if nxt == 0:
            break
        ids.append(nxt)
    return VOCAB.decode(ids[1:])


@pytest.mark.parametrize("prefix", ["", "ma", "z"])
def test_top_k_one_is_greedy(model, prefix):
    s = generate(model, VOCAB, 3, top_k=1, prefix=prefix, seed=1)
    assert texts(s) == [greedy(model, prefix)] * 3
    assert all(t.startswith(prefix) for t in texts(s))


def test_filter_logits_top_k():
    logits = torch.tensor([1.0, 3.0, 2.0, 0.0])
    out = filter_logits(logits, top_k=2)
    assert torch.isinf(out[[0, 3]]).all() and out[1] == 3.0 and out[2] == 2.0


def test_filter_logits_top_p_hand_computed():
    probs = torch.tensor([0.5, 0.2, 0.2, 0.1])
    logits = probs.log()
    # p = 0.6: 0.5 alone is short of 0.6, so the next (0.2) is kept; the rest are dropped.
    kept = torch.softmax(filter_logits(logits, top_p=0.6), -1)
    assert torch.allclose(kept, torch.tensor([0.5, 0.2, 0.0, 0.0]) / 0.7, atol=1e-6)
    # p = 0.5 keeps exactly the first; a tiny p still keeps the most likely token.
    assert torch.allclose(torch.softmax(filter_logits(logits, top_p=0.5), -1), torch.tensor([1.0, 0, 0, 0]))
    assert torch.allclose(torch.softmax(filter_logits(logits, top_p=1e-6), -1), torch.tensor([1.0, 0, 0, 0]))
    assert torch.equal(filter_logits(logits, top_p=1.0), logits)
    # top-k then top-p on the renormalised rest: k=3 → (.5,.2,.2)/.9; p=0.75 keeps .556+.222
    both = torch.softmax(filter_logits(logits, top_k=3, top_p=0.75), -1)
    assert torch.allclose(both, torch.tensor([0.5, 0.2, 0.0, 0.0]) / 0.7, atol=1e-6)


def test_batched_filtering_rows_independent():
    logits = torch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    out = filter_logits(logits, top_k=1)
    assert torch.isinf(out[0, :2]).all() and torch.isinf(out[1, 1:]).all()


def test_prefix_outside_vocab(model):
    with pytest.raises(SamplingError, match=r"prefix 'Ab1'.*'A', '1' not in the model's vocabulary"):
        generate(model, VOCAB, 2, prefix="Ab1")
    with pytest.raises(SamplingError):
        next_distribution(model, VOCAB, "é")


@pytest.mark.parametrize("kw", [dict(temperature=0), dict(top_k=0), dict(top_p=0), dict(top_p=1.5), dict(n=0)])
def test_bad_options(model, kw):
    with pytest.raises(SamplingError):
        generate(model, VOCAB, **{"n": 2, **kw})


def test_max_len(model):
    for s in generate(model, VOCAB, 20, seed=0, max_len=3):
        assert len(s.text) <= 3


def test_membership_labels(model, tmp_path):
    p = tmp_path / "n.txt"
    words = [f"{a}{b}" for a in "abcdefghij" for b in "abcdefghij"]
    p.write_text("\n".join(words))
    ds = load_dataset(p, vocab=VOCAB, block_size=12)
    samples = generate(model, VOCAB, 50, seed=0, max_len=2, dataset=ds)
    for s in samples:
        expected = next((n for n in ("train", "val", "test") if s.text in getattr(ds.splits, n)), "new")
        assert s.membership == expected
    assert ds.membership(ds.splits.test[0]) == "test"


def test_next_distribution_stages(model):
    d = next_distribution(model, VOCAB, "ma", temperature=0.5, top_k=3)
    assert math.isclose(float(d.probs.sum()), 1.0, rel_tol=1e-5)
    assert int((d.probs > 0).sum()) == 3
    assert torch.allclose(d.scaled, d.logits / 0.5)
