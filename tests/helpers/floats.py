"""How close two floats that were computed two different ways must be (issue 56).

Two computations of the same number that group their arithmetic differently (a batch of rows
against one row at a time, the KV cache against a full pass, packed against padded rows, one
thread against two, AVX-512 against plain kernels) round at different places. One rounding moves
a float32 by up to half a unit in the last place, FLOAT32_EPS / 2 ≈ 6e-8 of its size; a sum of n
terms can drift by up to n of those (about √n of them in practice), and a model stacks many such
sums. So results of two paths are compared with the tolerances below, never with ==, >= or <=,
and never tighter than float32 can hold. Exact equality stays where it is the point: the same
computation run twice (determinism), a round trip through a file, ids, shapes, counts, strings.
tests/test_float_comparisons.py scans tests/ for comparisons that break this rule.
"""

from __future__ import annotations

FLOAT32_EPS = 2.0 ** -23  # 1.19e-7: the gap between 1.0 and the next float32
FLOAT64_EPS = 2.0 ** -52  # 2.2e-16: the same for float64

# The log-probability of a whole name, summed over its tokens (≤ 16 of them, each a log-softmax of
# a forward pass). Batched beam search and one-at-a-time greedy decoding on an AMD EPYC differed
# by 1e-6 at −8.38 (one float32 step at that size); 1e-4 leaves a hundredfold margin and is still
# far below the gap between two different names worth ranking.
LOGPROB_ATOL = 1e-4

# A mean loss over a data set, computed twice in different batches or thread counts: a float32
# mean of thousands of terms, each a log-softmax; relative drift ~ √n·eps stays below 1e-5.
LOSS_RTOL = 1e-5

# Logits, attention weights and hidden states of the course's small models computed two ways.
# Each layer sums d_model ≤ 256 products (√256 · eps ≈ 2e-6 relative), a few layers deep; logits
# are O(1..10). torch.testing.assert_close's float32 default (rtol 1.3e-6, atol 1e-5) is of this
# size too; these bounds add the headroom a different machine's kernels need.
MODEL_OUTPUT = {"rtol": 1e-5, "atol": 1e-5}

# Gradients of a mean loss computed two ways: every weight's gradient sums over the whole batch
# and back through every layer, so the relative drift is larger; tiny gradients need an absolute
# floor that is still far below a real difference (gradients here are ~1e-3..1).
GRADIENT = {"rtol": 1e-4, "atol": 1e-6}

# Weights after the same training steps taken two ways (one process against two DDP ranks that
# average half-batch gradients): the update is lr × a ratio of moments, so a gradient that
# differs by float32 noise moves a weight by far less than 1e-6.
TRAINED_WEIGHTS = {"rtol": 0.0, "atol": 1e-6}

# float64 teaching maths computed two ways (recurrent against parallel, tiled against direct
# softmax, an iteration against an SVD): drift ~1e-15, so 1e-9 is tight and still safe.
FLOAT64_ATOL = 1e-9


def printed_unit(decimals: int) -> float:
    """One unit in the last printed place: two paths that print a value rounded to ``decimals``
    places may land on either side of a rounding boundary, so printed numbers agree to this."""
    return 10.0 ** -decimals * 1.000001

# Logits of a GPT-2 computed by the tutor's MiniGPT against transformers' own GPT-2 (issue 53's
# bound): the same maths through different kernels (fused attention against explicit softmax,
# Linear against Conv1D's addmm), d_model ≤ 768 products per sum, a dozen layers deep.
PRETRAINED_LOGITS = {"rtol": 0.0, "atol": 1e-4}
