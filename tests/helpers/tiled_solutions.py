"""Solutions of the tiled-attention kata written as a learner would (shared by tests/test_katas_tiled.py
and tests/hostile/test_kata_bans.py, which grades the alternatives under the kata's bans)."""

IMPORTS = "import math\nimport torch\n"

# Correct solutions written another way than solution.py (graded, with the kata's bans, by
# tests/hostile/test_kata_bans.py::test_correct_solutions_still_pass_under_the_ban): the log-sum-exp carried instead of the sum,
# with wide query tiles and narrow key tiles; one computing in float32 inside, tiles of equal size.
ALTERNATIVES = [
    IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n    n, d = q.shape\n    M = memory.capacity\n"
    "    bk = max(1, min(n, M // (8 * d)))\n    bq = max(1, min(n, (M - 3 * bk * d) // (3 * d + 2 * bk + 6)))\n"
    "    for i in range(0, n, bq):\n        stop = min(i + bq, n)\n        acc = None\n"
    "        lse = torch.full((stop - i, 1), -math.inf, dtype=q.dtype)\n        for j in range(0, n, bk):\n"
    "            qi = memory.load(q, i, stop) if acc is None else qi\n"
    "            kj = memory.load(k, j, min(j + bk, n))\n            vj = memory.load(v, j, min(j + bk, n))\n"
    "            s = (qi @ kj.transpose(0, 1)) * (1.0 / math.sqrt(d))\n"
    "            top = s.amax(dim=1, keepdim=True)\n"
    "            block = top + (s - top).exp().sum(dim=1, keepdim=True).log()\n"
    "            new = torch.logaddexp(lse, block)\n            part = (s - new).exp() @ vj\n"
    "            acc = part if acc is None else acc * (lse - new).exp() + part\n            lse = new\n"
    "        memory.store(out, i, acc)\n        del qi, acc\n",
    IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n    n, d = q.shape\n    b = 1\n"
    "    while 2 * (b + 1) * d + 3 * (b + 1) * d + 2 * (b + 1) ** 2 + 4 * (b + 1) <= memory.capacity and b < n:\n"
    "        b += 1\n"
    "    for i in range(0, n, b):\n        qi = memory.load(q, i, min(i + b, n)).float() * d ** -0.5\n"
    "        m = torch.full((qi.shape[0], 1), float('-inf'))\n        l = torch.zeros(qi.shape[0], 1)\n"
    "        o = torch.zeros(qi.shape)\n        for j in range(0, n, b):\n"
    "            kj = memory.load(k, j, min(j + b, n)).float()\n            vj = memory.load(v, j, min(j + b, n)).float()\n"
    "            s = qi @ kj.T\n            m2 = torch.maximum(m, s.max(-1, keepdim=True).values)\n"
    "            p = torch.exp(s - m2)\n            c = torch.exp(m - m2)\n"
    "            l = c * l + p.sum(-1, keepdim=True)\n            o = c * o + p @ vj\n            m = m2\n"
    "        memory.store(out, i, (o / l).to(q.dtype))\n        del qi, o\n",
]
# Row-by-row attention with an online softmax: right values, K and V read N times.
NAIVE = (IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n    n, d = q.shape\n    b = memory.capacity // (8 * d)\n"
         "    for i in range(n):\n        qi = memory.load(q, i, i + 1) / math.sqrt(d)\n"
         "        m = torch.full((1, 1), -math.inf, dtype=qi.dtype)\n        l = torch.zeros((1, 1), dtype=qi.dtype)\n"
         "        o = torch.zeros_like(qi)\n        for j in range(0, n, b):\n"
         "            kj = memory.load(k, j, min(j + b, n))\n            vj = memory.load(v, j, min(j + b, n))\n"
         "            s = qi @ kj.T\n            m2 = torch.maximum(m, s.amax(-1, keepdim=True))\n"
         "            p = (s - m2).exp()\n            l = l * (m - m2).exp() + p.sum(-1, keepdim=True)\n"
         "            o = o * (m - m2).exp() + p @ vj\n            m = m2\n        memory.store(out, i, o / l)\n")
