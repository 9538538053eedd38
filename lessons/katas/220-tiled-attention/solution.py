import math

import torch


def _one_query_tile(memory, q, k, v, start, stop, bc):
    """softmax(Q_i Kᵀ / √d) V for query rows start:stop, walking over key/value tiles of bc rows."""
    n, d = k.shape
    qi = memory.load(q, start, stop) / math.sqrt(d)
    m = torch.full((qi.shape[0], 1), -math.inf, dtype=qi.dtype)
    total = torch.zeros((qi.shape[0], 1), dtype=qi.dtype)
    acc = torch.zeros_like(qi)
    for j in range(0, n, bc):
        kj = memory.load(k, j, min(j + bc, n))
        vj = memory.load(v, j, min(j + bc, n))
        s = qi @ kj.T
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        p = (s - m_new).exp()
        shrink = (m - m_new).exp()  # the earlier terms were scaled by exp(-m); now by exp(-m_new)
        total = total * shrink + p.sum(dim=-1, keepdim=True)
        acc = acc * shrink + p @ vj
        m = m_new
    return acc / total


def tiled_attention(memory, q, k, v, out):
    """softmax(Q Kᵀ / √d) V written into out one query tile at a time, reading K and V by tiles."""
    n, d = q.shape
    # At a load, fast memory holds the query tile and its running output (2·Br·d), the previous and
    # the new key/value tiles (3·Bc·d), the scores and their exponentials (2·Br·Bc) and the
    # running max and sum with their updates (4·Br); a query tile's tensors die with its function.
    bc = max(1, min(n, memory.capacity // (8 * d)))
    br = max(1, min(n, (memory.capacity - 3 * bc * d) // (2 * d + 2 * bc + 4)))
    for i in range(0, n, br):
        memory.store(out, i, _one_query_tile(memory, q, k, v, i, min(i + br, n), bc))
