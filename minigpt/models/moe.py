"""A tiny mixture-of-experts feed-forward layer: a router sends each token to top-k of E experts.

Each expert is an ordinary GELU feed-forward network. The router is one linear map from the token
to E scores; the token goes to the k experts with the highest scores, and their outputs are mixed
with the softmax of those k scores. All E experts hold parameters, but each token runs through
only k of them: total parameters grow with E, compute per token with k.

``load_balancing_loss`` is the Switch Transformer's auxiliary loss, E · Σ_e f_e · P_e (f_e: share
of tokens whose first choice is e; P_e: mean router probability of e): 1 when routing is uniform,
up to E when every token goes to one expert.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


class Expert(nn.Module):
    def __init__(self, d_model: int, hidden: int):
        super().__init__()
        self.up = nn.Linear(d_model, hidden)
        self.down = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


@dataclass
class Routing:
    experts: torch.Tensor  # (N, k) chosen expert ids per token, best first
    weights: torch.Tensor  # (N, k) mixing weights, each row sums to 1
    probs: torch.Tensor  # (N, E) softmax over all experts (for the balancing loss)


class MoE(nn.Module):
    def __init__(self, d_model: int, n_experts: int, top_k: int, hidden: int | None = None):
        super().__init__()
        if not 1 <= top_k <= n_experts:
            raise ValueError(f"top_k must be between 1 and n_experts ({n_experts}), got {top_k}")
        self.top_k = top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d_model, hidden or 4 * d_model) for _ in range(n_experts))

    def route(self, x: torch.Tensor) -> Routing:
        """x (N, d) → which experts each token uses and with what weight."""
        scores = self.router(x)
        top = scores.topk(self.top_k, dim=-1)
        return Routing(top.indices, top.values.softmax(dim=-1), scores.softmax(dim=-1))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, Routing]:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        routing = self.route(flat)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token, slot = (routing.experts == e).nonzero(as_tuple=True)
            if len(token):  # run the expert only on the tokens that picked it
                out.index_add_(0, token, routing.weights[token, slot, None] * expert(flat[token]))
        return out.reshape(shape), routing


def load_balancing_loss(routing: Routing) -> torch.Tensor:
    E = routing.probs.shape[-1]
    first_choice = F.one_hot(routing.experts[:, 0], E).double().mean(dim=0)
    return E * (first_choice * routing.probs.double().mean(dim=0)).sum()
