"""The maths behind the lessons beyond the course, pinned against values worked by hand.

One section per lesson: averaging with a triangle, long context, the loss (and DPO), precision,
KV memory, inference cost, mixture of experts. Initialization and tokenization have their own
files (tests/test_init_stats.py, tests/test_bpe.py).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from minigpt.teaching import averaging, inference_cost, kv_memory, long_context, loss_maths, precision
from minigpt.teaching.examples.catalog import render_example


def rounded(t, digits=3):
    return [round(v, digits) for v in t.tolist()]


# --- averaging the past --------------------------------------------------------------------


def test_averaging_matrix_rows_by_hand():
    W = averaging.averaging_matrix(4)
    assert rounded(W[0]) == [1.0, 0.0, 0.0, 0.0]
    assert rounded(W[1]) == [0.5, 0.5, 0.0, 0.0]
    assert rounded(W[2]) == [0.333, 0.333, 0.333, 0.0]
    assert rounded(W[3]) == [0.25, 0.25, 0.25, 0.25]
    x = torch.tensor(averaging.EXAMPLE_X, dtype=torch.float64)
    # t3 averages (1,0) (3,2) (2,4) (6,2): (12/4, 8/4)
    assert rounded((W @ x)[3]) == [3.0, 2.0]
    assert torch.allclose(averaging.running_means(x), W @ x)


def test_zero_scores_under_the_mask_give_the_averaging_matrix():
    assert torch.allclose(averaging.causal_softmax(torch.zeros(5, 5, dtype=torch.float64)),
                          averaging.averaging_matrix(5))


def test_data_dependent_weights_by_hand():
    w = averaging.causal_softmax(torch.tensor(averaging.EXAMPLE_SCORES, dtype=torch.float64))
    # row 1: scores 0.5, 1.5 → 1/(1+e) and e/(1+e); the 9s above the diagonal never count
    assert rounded(w[1]) == [0.269, 0.731, 0.0, 0.0]
    # row 3: scores 1, 0, 0.5, 1 → e/(2e + 1 + e^0.5) = 2.718/8.086 = 0.336
    assert rounded(w[3]) == [0.336, 0.124, 0.204, 0.336]
    assert "| **t1** | 0.269 | 0.731 | 0.000 | 0.000 |" in render_example("averaging.masked_softmax")


# --- long context ----------------------------------------------------------------------------


def test_rope_angles_by_hand():
    # head_dim 8: θ = 1, 10000^-0.25 = 0.1, 10000^-0.5 = 0.01, 10000^-0.75 = 0.001
    assert rounded(long_context.rope_frequencies(8), 4) == [1.0, 0.1, 0.01, 0.001]
    assert rounded(long_context.rope_angles(15, 8), 4) == [15.0, 1.5, 0.15, 0.015]
    assert rounded(long_context.rope_angles(63, 8, interpolation=4), 5) == [15.75, 1.575, 0.1575, 0.01575]


def test_ntk_base_keeps_the_fast_pair_and_slows_the_slow_one_by_s():
    base = long_context.ntk_base(10000.0, 4.0, 8)
    assert base == pytest.approx(10000 * 4 ** (4 / 3))  # 63,496
    assert round(base) == 63496
    plain, ntk = long_context.rope_angles(63, 8), long_context.rope_angles(63, 8, base=base)
    assert ntk[0].item() == pytest.approx(plain[0].item())  # fastest pair unchanged
    assert ntk[-1].item() == pytest.approx(plain[-1].item() / 4)  # slowest pair ÷ s
    assert plain[1].item() / 4 < ntk[1].item() < plain[1].item()  # in between


def test_alibi_slopes_and_bias_by_hand():
    assert long_context.alibi_slopes(8) == [1 / 2 ** k for k in range(1, 9)]
    assert long_context.alibi_slopes(4) == [0.25, 0.0625, 0.015625, 0.00390625]
    bias = long_context.alibi_bias(3, 0.5)
    assert bias[2].tolist() == [-1.0, -0.5, 0.0]
    assert bias[0, 1].item() == float("-inf")
    with pytest.raises(ValueError):
        long_context.alibi_slopes(6)


def test_learned_positions_example_shows_the_models_own_error():
    md = render_example("longctx.learned_limit")
    assert "16 rows" in md and "exceeds the model's block size 16" in md


# --- the loss ----------------------------------------------------------------------------------


def test_loss_step_by_step_by_hand():
    z = torch.tensor([2.0, 1.0, 0.1, -1.0], dtype=torch.float64)
    # Σe^z = 7.389 + 2.718 + 1.105 + 0.368 = 11.580; −log p(e) = ln 11.580 − 1 = 1.449
    assert loss_maths.nll(z, 1) == pytest.approx(math.log(11.5804) - 1.0, abs=1e-4)
    assert round(loss_maths.nll(z, 1), 3) == 1.449
    assert "−log p(e) = 1.449" in render_example("loss.step_by_step")


def test_naive_log_softmax_overflows_in_float32_and_the_stable_one_does_not():
    z = torch.tensor([100.0, 90.0, 80.0])
    naive = loss_maths.log_softmax_naive(z)
    assert torch.isnan(naive[0]) and naive[2].item() == float("-inf")
    stable = loss_maths.log_softmax_stable(z)
    # log(1 + e^-10 + e^-20) = 4.54e-5
    assert stable[0].item() == pytest.approx(-4.54e-5, rel=1e-2)
    assert stable[1].item() == pytest.approx(-10.0000454, abs=1e-4)
    assert torch.isfinite(stable).all()


def test_perplexity_bits_and_label_smoothing_by_hand():
    assert loss_maths.perplexity(math.log(27)) == pytest.approx(27)
    assert loss_maths.bits_per_token(math.log(2)) == pytest.approx(1.0)
    assert loss_maths.bits_per_token(math.log(27)) == pytest.approx(4.7549, abs=1e-4)  # log2 27
    # two equal logits: −log p = ln 2 for every class, so any smoothing gives ln 2
    assert loss_maths.label_smoothed_loss(torch.zeros(2), 0, 0.1) == pytest.approx(math.log(2))
    z = torch.tensor([6.0, 1.0, 0.0, -1.0], dtype=torch.float64)
    ref = F.cross_entropy(z[None], torch.tensor([0]), label_smoothing=0.1).item()
    assert loss_maths.label_smoothed_loss(z, 0, 0.1) == pytest.approx(ref)


def test_teacher_forcing_rows_average_to_the_models_own_loss():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    ck.model.eval()
    rows = loss_maths.teacher_forcing_rows(ck.model, ck.vocab, "emma")
    assert [r[0] for r in rows] == [".", ".e", ".em", ".emm", ".emma"]
    assert [r[1] for r in rows] == ["e", "m", "m", "a", "."]
    ids = ck.vocab.encode("emma")
    with torch.no_grad():
        loss = ck.model(torch.tensor([[0] + ids]), torch.tensor([ids + [0]]))[1].item()
    assert sum(-math.log(p) for *_, p in rows) / 5 == pytest.approx(loss, abs=1e-5)


def test_dpo_loss_by_hand():
    # margin 0 → −log σ(0) = ln 2
    assert loss_maths.dpo_loss(-25, -30, -25, -30) == pytest.approx(math.log(2))
    # margin (−15 + 25) − (−40 + 30) = 20, β 0.1 → log(1 + e^−2) = 0.1269
    assert loss_maths.dpo_loss(-15, -40, -25, -30, beta=0.1) == pytest.approx(math.log1p(math.exp(-2)))
    # the wrong way round costs more than ln 2
    assert loss_maths.dpo_loss(-25, -25, -25, -30) > math.log(2)
    assert "| before tuning (policy = reference) | 0 | 0.693 |" in render_example("dpo.toy")


# --- precision -----------------------------------------------------------------------------------


def test_formats_from_finfo():
    assert precision.format_info("float16").largest == 65504.0
    assert precision.format_info("bfloat16").epsilon == 2.0 ** -7
    assert precision.format_info("float32").epsilon == 2.0 ** -23
    assert precision.format_info("bfloat16").bits == (1, 8, 7)


def test_stored_values_by_hand():
    # bfloat16 between 512 and 1024 has a spacing of 2^(9-7) = 4: 1000.7 → 1000
    assert precision.stored_as(1000.7, "bfloat16") == 1000.0
    # between 65,536 and 131,072 the spacing is 512: 70,000 / 512 = 136.7 → 137 · 512 = 70,144
    assert precision.stored_as(70000.0, "bfloat16") == 70144.0
    assert precision.stored_as(70000.0, "float16") == float("inf")
    assert precision.stored_as(1e-8, "float16") == 0.0  # below 2^-25, half the smallest subnormal
    assert precision.stored_as(3e-8, "float16") == 2.0 ** -24


def test_bfloat16_running_sum_stalls_at_4():
    # Between 4 and 8 neighbouring bfloat16 numbers are 2^-5 = 0.03125 apart; adding 0.01 (less
    # than half of that) rounds back to 4, so the sum can never pass 4.
    assert precision.running_sum(0.01, 1000, "bfloat16") == 4.0
    assert precision.running_sum(0.01, 1000, "float32") == pytest.approx(10.0, abs=1e-3)


def test_loss_scaling_rescues_a_tiny_gradient():
    plain, scaled = precision.scaled_gradient(1e-8, 2.0 ** 16)
    assert plain == 0.0
    assert scaled == pytest.approx(1e-8, rel=1e-3)


@pytest.mark.parametrize("pieces", [2, 3, 4])
def test_gradient_accumulation_equals_the_big_batch(pieces):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).double()
    x, y = torch.randn(32, 5, dtype=torch.float64), torch.randint(0, 3, (32,))
    whole = precision.accumulated_gradients(model, F.cross_entropy, x, y, 1)
    parts = precision.accumulated_gradients(model, F.cross_entropy, x, y, pieces)  # 3 → 11, 11, 10 rows
    for a, b in zip(whole, parts):
        torch.testing.assert_close(a, b)


def test_adamw_memory_is_16_bytes_a_parameter():
    for recipe in precision.TRAINING_BYTES:
        assert sum(precision.training_bytes(1000, recipe).values()) == 16_000
    parts = precision.training_bytes(10, "float32")
    assert parts["adam m"] + parts["adam v"] == 2 * parts["weights"]  # two extra copies


# --- KV memory -----------------------------------------------------------------------------------


def test_bytes_per_token_by_hand():
    assert kv_memory.bytes_per_token(32, 32, 128, 2) == 524_288  # LLaMA-2 7B: half a MiB
    assert kv_memory.bytes_per_token(80, 8, 128, 2) == 327_680  # LLaMA-2 70B with 8 KV heads
    assert kv_memory.bytes_per_token(12, 12, 64, 2) == 36_864  # GPT-2 small = 2·12·768·2
    assert kv_memory.shape_bytes_per_token(kv_memory.our_model()) == 2 * 4 * 64 * 4
    assert kv_memory.shape_bytes_per_token(kv_memory.LLAMA2_70B_IF_MHA) == 8 * 327_680
    assert kv_memory.cache_bytes(kv_memory.MODELS[1], 4096) == 2 ** 31
    assert kv_memory.human_bytes(2 ** 31) == "2.0 GiB"


def test_measured_cache_equals_the_formula():
    from minigpt.models.config import GPTConfig
    from minigpt.models.gpt import MiniGPT

    for kv in (4, 1):
        model = MiniGPT(GPTConfig(n_kv_heads=kv)).eval()
        assert kv_memory.measured_cache_bytes(model, 16, batch=2) == kv_memory.bytes_per_token(4, kv, 16, 4) * 16 * 2
    assert "| MQA, n_kv_heads = 1 | 8,192 | 8,192 |" in render_example("kvmem.measured")


# --- inference cost ------------------------------------------------------------------------------


def _attention_flops_counted(attended: int, d: int) -> int:
    """Count one query's attention arithmetic operation by operation (one layer)."""
    flops = 0
    for _key in range(attended):          # scores: a dot product of length d with each key
        flops += d + d                    # d multiplies, d adds
    for _value in range(attended):        # weighted sum: each value vector scaled and added
        flops += d + d
    return flops


def test_flops_per_token_by_hand():
    # 2·100 + 2 layers × (scores 2·10·4 + weighted sum 2·10·4) = 200 + 320
    assert inference_cost.flops_per_token(100, 2, 10, 4) == 520 == 200 + 2 * _attention_flops_counted(10, 4)
    # a 3-token prompt: 3·200 + 4·2·4·(1 + 2 + 3) = 600 + 192
    assert inference_cost.prefill_flops(100, 2, 3, 4) == 792
    # Kaplan's 2·L·T·d is the causal average: positions 1..T attend to (T + 1)/2 on average
    T, L, d = 1000, 2, 4
    mean = sum(L * _attention_flops_counted(t, d) for t in range(1, T + 1)) / T
    assert mean == pytest.approx(2 * L * T * d, rel=2e-3)


def test_training_and_inference_share_one_attention_formula():
    from minigpt.training.flops import attention_forward_flops, gpt_step_cost

    assert attention_forward_flops(3, 7, 5) == 3 * _attention_flops_counted(7, 5)
    cost = gpt_step_cost(1000, 0, 3, 5, 7)
    assert cost.flops_per_token == 3 * inference_cost.flops_per_token(1000, 3, 7, 5)


def test_decode_is_memory_bound_until_the_batch_matches_the_hardware_ratio():
    gpu = inference_cost.ILLUSTRATIVE_GPU
    assert gpu.balance == pytest.approx(1e15 / 3e12)  # 333 FLOPs per byte
    one = inference_cost.decode_step(7_000_000_000, 1, gpu)
    assert one.intensity == 1.0 and one.bound == "memory"
    assert one.memory_s == pytest.approx(14e9 / 3e12)  # 14 GB of weights at 3 TB/s: 4.7 ms
    assert inference_cost.decode_step(7_000_000_000, 334, gpu).bound == "compute"
    assert inference_cost.decode_step(7_000_000_000, 333, gpu).bound == "memory"
