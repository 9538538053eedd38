"""Each checker against written-out wrong solutions: every one fails, with its mistake named.

The wrong solutions are written as a learner would write them (not the checkers' own mistake
functions), and graded in this process (minigpt.katas.grading.grade_function) to keep the suite
quick; tests/test_katas.py grades through the bounded runner.
"""

from __future__ import annotations

import pytest

from minigpt.katas.catalogue import kata_by_name
from minigpt.katas.grading import grade_function

IMPORTS = "import math\nimport torch\n"

WRONG = {
    "softmax": [
        ("def softmax(x, dim=-1):\n    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)\n", "max shift"),
        ("def softmax(x, dim=-1):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n",
         "last axis whatever dim"),
        ("def softmax(x, dim=-1):\n    e = (x - x.max()).exp()\n    return e / e.sum()\n", "whole tensor"),
    ],
    "attention": [
        ("def attention(q, k, v, causal=False):\n    s = q @ k.transpose(-2, -1)\n"
         "    if causal:\n        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float('-inf'))\n"
         "    return torch.softmax(s, dim=-1) @ v\n", "not divided by √d_k"),
        ("def attention(q, k, v, causal=False):\n    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)\n"
         "    if causal:\n        w = w * torch.tril(torch.ones(w.shape[-2:]))\n    return w @ v\n", "after the softmax"),
        ("def attention(q, k, v, causal=False):\n    s = q @ k.T / math.sqrt(q.shape[-1])\n"
         "    if causal:\n        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float('-inf'))\n"
         "    return torch.softmax(s, dim=-1) @ v\n", "k.T transposes every axis"),
        ("def attention(q, k, v, causal=False):\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
         "    if causal:\n        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), 0.0)\n"
         "    return torch.softmax(s, dim=-1) @ v\n", "instead of -inf"),
        ("def attention(q, k, v, causal=False):\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
         "    return torch.softmax(s, dim=-2) @ v\n", "down the columns"),
    ],
    "split_heads": [
        ("def split_heads(x, n_head):\n    B, T, d = x.shape\n    return x.view(B, n_head, T, d // n_head)\n", "straight away"),
        ("def split_heads(x, n_head):\n    B, T, d = x.shape\n    return x.view(B, T, n_head, d // n_head)\n", "transpose(1, 2) is missing"),
    ],
    "merge_heads": [
        ("def merge_heads(x):\n    B, H, T, dh = x.shape\n    return x.reshape(B, T, H * dh)\n", "without moving the time axis"),
    ],
    "multi_head_attention": [
        ("def multi_head_attention(x, w_q, w_k, w_v, w_o, n_head):\n    B, T, d = x.shape\n    h = d // n_head\n"
         "    q, k, v = [(x @ w).view(B, T, n_head, h).transpose(1, 2) for w in (w_q, w_k, w_v)]\n"
         "    s = q @ k.transpose(-2, -1) / math.sqrt(h)\n"
         "    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))\n"
         "    return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d)\n", "W_O was left out"),
        ("def multi_head_attention(x, w_q, w_k, w_v, w_o, n_head):\n    B, T, d = x.shape\n    h = d // n_head\n"
         "    q, k, v = [(x @ w).view(B, T, n_head, h).transpose(1, 2) for w in (w_q, w_k, w_v)]\n"
         "    s = q @ k.transpose(-2, -1) / math.sqrt(d)\n"
         "    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))\n"
         "    return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d) @ w_o\n", "one head's width"),
    ],
    "layer_norm": [
        ("def layer_norm(x, gamma, beta, eps=1e-5):\n    m = x.mean(-1, keepdim=True)\n"
         "    return (x - m) / torch.sqrt(x.var(-1, keepdim=True) + eps) * gamma + beta\n", "d - 1"),
        ("def layer_norm(x, gamma, beta, eps=1e-5):\n    m = x.mean(-1, keepdim=True)\n"
         "    return (x - m) / (x.var(-1, keepdim=True, unbiased=False).sqrt() + eps) * gamma + beta\n", "after the square root"),
    ],
    "gelu": [
        ("def gelu(x):\n    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))\n", "tanh approximation"),
        ("def gelu(x):\n    return x * torch.sigmoid(x)\n", "SiLU"),
    ],
    "cross_entropy": [
        ("def cross_entropy(logits, targets, ignore_index=-1):\n    m = logits.amax(-1, keepdim=True)\n"
         "    lp = logits - m - (logits - m).exp().sum(-1, keepdim=True).log()\n    keep = targets != ignore_index\n"
         "    t = torch.where(keep, targets, 0)\n    nll = -lp.gather(-1, t.unsqueeze(-1)).squeeze(-1) * keep\n"
         "    return nll.sum() / targets.numel()\n", "counted in the mean"),
        ("def cross_entropy(logits, targets, ignore_index=-1):\n"
         "    lp = logits - logits.exp().sum(-1, keepdim=True).log()\n    keep = targets != ignore_index\n"
         "    t = torch.where(keep, targets, 0)\n    nll = -lp.gather(-1, t.unsqueeze(-1)).squeeze(-1) * keep\n"
         "    return nll.sum() / keep.sum()\n", "log-sum-exp trick"),
    ],
    "sinusoidal_positions": [
        ("def sinusoidal_positions(T, d, base=10000.0, dtype=torch.float32):\n"
         "    pos = torch.arange(T, dtype=torch.float64)[:, None]\n    i = torch.arange(0, d, 2, dtype=torch.float64)\n"
         "    a = pos / base ** (i / d)\n    return torch.cat([a.sin(), a.cos()], dim=1).to(dtype)\n", "first half"),
        ("def sinusoidal_positions(T, d, base=10000.0, dtype=torch.float32):\n"
         "    pos = torch.arange(T, dtype=torch.float64)[:, None]\n    i = torch.arange(d // 2, dtype=torch.float64)\n"
         "    a = pos / base ** (i / d)\n    return torch.stack([a.sin(), a.cos()], -1).reshape(T, d).to(dtype)\n", "instead of 2i"),
    ],
    "rope": [
        ("def rope(x, base=10000.0):\n    T, d = x.shape[-2:]\n    th = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
         "    a = torch.arange(T, dtype=torch.float64)[:, None] * th\n    c, s = a.cos().to(x.dtype), a.sin().to(x.dtype)\n"
         "    x1, x2 = x[..., : d // 2], x[..., d // 2:]\n    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], -1)\n", "two halves"),
    ],
    "kv_cache_step": [
        ("def kv_cache_step(q_new, k_new, v_new, cache_k, cache_v):\n"
         "    w = torch.softmax(q_new @ cache_k.transpose(-2, -1) / math.sqrt(q_new.shape[-1]), -1)\n"
         "    return w @ cache_v, torch.cat([cache_k, k_new], -2), torch.cat([cache_v, v_new], -2)\n", "before attending"),
    ],
    "sampling_filter": [
        ("def sampling_filter(logits, temperature=1.0, top_k=None, top_p=None):\n    z = logits / temperature\n"
         "    if top_k is not None and top_k < z.shape[-1]:\n        z = z.masked_fill(z < torch.topk(z, top_k).values[..., -1:], float('-inf'))\n"
         "    p = torch.softmax(z, -1)\n    if top_p is not None:\n        sp, idx = p.sort(-1, descending=True)\n"
         "        drop = sp.cumsum(-1) > top_p\n        p = p.masked_fill(torch.zeros_like(drop).scatter(-1, idx, drop), 0)\n"
         "        p = p / p.sum(-1, keepdim=True)\n    return p\n", "crosses p"),
    ],
    "bpe_merge": [
        ("def bpe_merge(ids, new_id):\n    if len(ids) < 2:\n        return None, list(ids)\n"
         "    pairs = list(zip(ids, ids[1:]))\n    best = max(pairs, key=pairs.count)\n    out, i = [], 0\n"
         "    while i < len(ids):\n        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == best:\n"
         "            out.append(new_id)\n        else:\n            out.append(ids[i])\n        i += 1\n"
         "    return best, out\n", "merges overlapped"),
        ("def bpe_merge(ids, new_id):\n    if len(ids) < 2:\n        return None, list(ids)\n"
         "    pairs = list(zip(ids, ids[1:]))\n    best = max(pairs, key=pairs.count)\n"
         "    i = pairs.index(best)\n    return best, ids[:i] + [new_id] + ids[i + 2:]\n", "only the first occurrence"),
    ],
    "lr_schedule": [
        ("def lr_schedule(step, max_lr, min_lr, warmup, total):\n    if step < warmup:\n        return max_lr * step / warmup\n"
         "    if step >= total:\n        return min_lr\n    p = (step - warmup) / (total - warmup)\n"
         "    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * p))\n", "started at 0"),
        ("def lr_schedule(step, max_lr, min_lr, warmup, total):\n    if step < warmup:\n        return max_lr * (step + 1) / warmup\n"
         "    if step >= total:\n        return min_lr\n    p = step / total\n"
         "    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * p))\n", "over all the steps"),
    ],
    "adamw_step": [
        ("def adamw_step(param, grad, m, v, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01):\n"
         "    m = beta1 * m + (1 - beta1) * grad\n    v = beta2 * v + (1 - beta2) * grad ** 2\n"
         "    return param * (1 - lr * weight_decay) - lr * m / (v.sqrt() + eps), m, v\n", "bias correction"),
        ("def adamw_step(param, grad, m, v, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01):\n"
         "    grad = grad + weight_decay * param\n    m = beta1 * m + (1 - beta1) * grad\n    v = beta2 * v + (1 - beta2) * grad ** 2\n"
         "    mh, vh = m / (1 - beta1 ** step), v / (1 - beta2 ** step)\n"
         "    return param - lr * mh / (vh.sqrt() + eps), m, v\n", "Adam with L2"),
    ],
    "gqa_kv_step": [
        ("def gqa_kv_step(q_new, k_new, v_new, cache_k, cache_v):\n"
         "    keys, values = torch.cat([cache_k, k_new], -2), torch.cat([cache_v, v_new], -2)\n"
         "    n = q_new.shape[1] // keys.shape[1]\n    k, v = keys.repeat(1, n, 1, 1), values.repeat(1, n, 1, 1)\n"
         "    w = torch.softmax(q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1]), -1)\n"
         "    return w @ v, keys, values\n", "h % G"),
    ],
    "top_p_sample": [
        ("def top_p_sample(logits, temperature, top_p, u):\n    p = torch.softmax(logits, -1)\n"
         "    sp, idx = p.sort(-1, descending=True)\n    drop = (sp.cumsum(-1) - sp) >= top_p\n"
         "    p = p.masked_fill(torch.zeros_like(drop).scatter(-1, idx, drop), 0.0)\n"
         "    p = p ** (1 / temperature)\n    p = p / p.sum(-1, keepdim=True)\n"
         "    return p, (p.cumsum(-1) <= u[..., None]).sum(-1)\n", "after top-p"),
    ],
    "causal_padding_mask": [
        ("def causal_padding_mask(attention_mask):\n    real = attention_mask.bool()\n    T = real.shape[1]\n"
         "    return (torch.ones(T, T, dtype=torch.bool).tril() & real[:, :, None])[:, None]\n", "queries (rows)"),
    ],
    "bpe_encode": [
        ("def bpe_encode(word, merges):\n    tokens = list(word)\n    while True:\n"
         "        for i in range(len(tokens) - 1):\n            if (tokens[i], tokens[i + 1]) in merges:\n"
         "                tokens[i:i + 2] = [tokens[i] + tokens[i + 1]]\n                break\n        else:\n"
         "            return tokens\n", "leftmost"),
    ],
    "newton_schulz": [
        ("def newton_schulz(g, steps=5):\n    x = g / g.norm(dim=(-2, -1), keepdim=True)\n    for _ in range(steps):\n"
         "        x = 1.5 * x - 0.5 * x @ x.mT @ x\n    return x\n", "textbook cubic"),
        ("def newton_schulz(g, steps=5):\n    x = g\n    for _ in range(steps):\n        a = x @ x.mT\n"
         "        x = 3.4445 * x + (-4.7750 * a + 2.0315 * a @ a) @ x\n    return x\n", "Frobenius norm"),
    ],
    "gpt_params": [
        ("def gpt_params(vocab_size, block_size, n_layer, d_model, tied=True):\n    d = d_model\n"
         "    n = vocab_size * d + n_layer * (12 * d * d + 13 * d) + 2 * d\n"
         "    return n + (0 if tied else d * vocab_size)\n", "position embedding"),
        ("def gpt_params(vocab_size, block_size, n_layer, d_model, tied=True):\n    d = d_model\n"
         "    return vocab_size * d + block_size * d + n_layer * (12 * d * d + 13 * d) + 2 * d + d * vocab_size\n",
         "counted again"),
    ],
}

WRONG["tiled_attention"] = [(source.removeprefix(IMPORTS), named) for source, named in (
    (kata_by_name("tiled_attention").solution.replace("acc / total", "acc"), "before dividing by the running sum"),)]

CASES = [(name, source, named) for name, wrongs in WRONG.items() for source, named in wrongs]


@pytest.mark.parametrize(("name", "source", "named"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_wrong_solution_fails_with_its_named_mistake(name, source, named):
    report = grade_function(kata_by_name(name), IMPORTS + source)
    assert not report.passed, report.lines()
    assert report.error is None, report.error
    first = report.failures[0]
    assert first.mistake and named in first.mistake, (first.line(), first.details())
    assert named in first.line()


def test_every_kata_has_a_wrong_solution_here():
    from minigpt.katas.catalogue import load_katas

    assert {k.name for k in load_katas()} <= set(WRONG)
