"""The stability lab (minigpt/training/stability.py, minigpt/training/short_runs.py): spikes as
defined, the largest attention score measured as attention computes it, and the job's claim on a
cut-down run (soak)."""

from __future__ import annotations

import pytest
import torch

from minigpt.models.build import build_model
from minigpt.models.config import GPTConfig
from minigpt.training.short_runs import attention_logits_max, attention_scores
from minigpt.training.stability import count_spikes
from tests.helpers.floats import MODEL_OUTPUT


def test_a_spike_is_half_a_nat_over_the_recent_median_and_a_run_of_them_counts_once():
    calm = [2.0 + 0.1 * (i % 3) for i in range(40)]  # batch noise: never a spike
    assert count_spikes(calm) == 0
    spiky = calm[:25] + [2.7, 2.9, 2.6] + calm[28:35] + [3.5] + calm[36:]
    assert count_spikes(spiky) == 2  # steps 25-27 are one spike, step 35 another
    assert count_spikes([9.0] * 5 + calm[:15]) == 0  # the first window is never judged
    assert count_spikes(calm[:20] + [2.55]) == 0 and count_spikes(calm[:20] + [2.65]) == 1  # median 2.1


@pytest.mark.parametrize("kw", [{}, {"qk_norm": True}, {"pos_encoding": "rope", "n_kv_heads": 1},
                                {"parametrization": "mup", "d_model": 32}])
def test_the_largest_attention_score_is_the_one_attention_softmaxes(kw):
    """Recomputed from each layer's input, the scores give the attention weights the model shows."""
    torch.manual_seed(0)
    cfg = dict(vocab_size=11, block_size=8, d_model=16, n_heads=2, n_layers=2) | kw
    model = build_model("gpt", GPTConfig(**cfg)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.5)  # sharp scores, so the largest is far from the rest
    x = torch.randint(0, 11, (1, 8), generator=torch.Generator().manual_seed(1))
    scores = attention_scores(model, x)
    weights = model.attention_maps(x)  # (layers, heads, T, T), the model's own path
    torch.testing.assert_close(torch.stack([s[0] for s in scores]).softmax(-1), weights, **MODEL_OUTPUT)
    assert attention_logits_max(model, x) == max(float(s.max()) for s in scores)


@pytest.mark.soak
def test_qk_norm_keeps_attention_scores_small_where_the_default_runs_away():
    """The stability job's claim, cut down (one seed, 60 steps): at lr 0.03 the default model's
    largest attention score grows past 50; QK-norm keeps it within √head_dim·gain² of its bound."""
    from minigpt.training.stability import compare

    result = compare(seeds=(1,), steps=60, variants={"default": {}, "QK-norm": {"qk_norm": True}})
    default, qk = (result["variants"][v]["runs"][0] for v in ("default", "QK-norm"))
    assert default["max_attention_logit"] > 50 > qk["max_attention_logit"], result
