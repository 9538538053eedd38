"""The tiny mixture-of-experts layer and the MoE parameter counter."""

from __future__ import annotations

import pytest
import torch

from minigpt.models.moe import MoE, Routing, load_balancing_loss
from minigpt.teaching import params


def test_top_k_equal_to_e_with_equal_weights_averages_the_experts():
    torch.manual_seed(0)
    moe = MoE(d_model=6, n_experts=4, top_k=4).double()
    with torch.no_grad():
        moe.router.weight.zero_()  # every score equal → every weight 1/4
        x = torch.randn(3, 5, 6, dtype=torch.float64)
        out, routing = moe(x)
        mean = torch.stack([e(x) for e in moe.experts]).mean(dim=0)
    assert torch.allclose(routing.weights, torch.full((15, 4), 0.25, dtype=torch.float64))
    torch.testing.assert_close(out, mean)


def test_routing_picks_the_top_k_scores_and_mixes_them():
    torch.manual_seed(1)
    moe = MoE(d_model=4, n_experts=5, top_k=2).double()
    x = torch.randn(7, 4, dtype=torch.float64)
    with torch.no_grad():
        out, r = moe(x)
        scores = moe.router(x)
        best = scores.topk(2).indices
        assert torch.equal(r.experts, best)
        assert torch.allclose(r.weights.sum(-1), torch.ones(7, dtype=torch.float64))
        # token 0 by hand: softmax of its two best scores, times those experts' outputs
        s = scores[0, best[0]]
        w = torch.exp(s) / torch.exp(s).sum()
        by_hand = w[0] * moe.experts[best[0, 0]](x[0]) + w[1] * moe.experts[best[0, 1]](x[0])
    torch.testing.assert_close(out[0], by_hand)


def test_load_balancing_loss_is_one_when_even_and_e_when_collapsed():
    E = 4
    even = Routing(torch.arange(E)[:, None], torch.ones(E, 1), torch.full((E, E), 1 / E))
    assert load_balancing_loss(even).item() == pytest.approx(1.0)
    collapsed = Routing(torch.zeros(E, 1, dtype=torch.long), torch.ones(E, 1),
                        torch.eye(E)[[0] * E])
    assert load_balancing_loss(collapsed).item() == pytest.approx(E)


def test_bad_top_k():
    with pytest.raises(ValueError, match="top_k"):
        MoE(4, n_experts=2, top_k=3)


def test_mixtral_like_counts_by_hand():
    m = params.moe_params(params.MIXTRAL_LIKE)
    assert m["attention per layer"] == 2 * 4096 ** 2 + 2 * 4096 * 1024 == 41_943_040
    assert m["one expert"] == 3 * 4096 * 14336 == 176_160_768
    shared = 32 * (41_943_040 + 4096 * 8 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert shared == 1_605_636_096
    assert m["total"] == shared + 32 * 8 * 176_160_768 == 46_702_792_704
    assert m["active"] == shared + 32 * 2 * 176_160_768 == 12_879_925_248
    # the published figures for Mixtral 8x7B: 46.7B total, 12.9B active
    assert round(m["total"] / 1e9, 1) == 46.7 and round(m["active"] / 1e9, 1) == 12.9
