"""Muon: momentum, then the update of each weight matrix replaced by its nearest orthogonal matrix.

For a hidden matrix W the step is the momentum-averaged gradient G made "all directions equal":
U·Vᵀ from G = U·S·Vᵀ, every singular value set to one, so no single direction dominates the
update. Computing an SVD every step would be slow, so five Newton–Schulz iterations of a quintic
polynomial (coefficients from Keller Jordan's Muon, 2024) push the singular values of G / ‖G‖
towards one instead. Only the matrices inside the blocks use it: embeddings, the output head,
norms and biases keep AdamW, as in the original recipe.
"""

from __future__ import annotations

import torch

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def orthogonalize(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """≈ U·Vᵀ of a matrix (or a stack of matrices) g = U·S·Vᵀ, by Newton–Schulz iteration."""
    a, b, c = NS_COEFFICIENTS
    x = g / (g.norm(dim=(-2, -1), keepdim=True) + 1e-7)  # singular values now ≤ 1
    tall = x.shape[-2] > x.shape[-1]
    if tall:  # iterate on the short side: X·Xᵀ is then the smaller square
        x = x.transpose(-2, -1)
    for _ in range(steps):
        gram = x @ x.transpose(-2, -1)
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.transpose(-2, -1) if tall else x


def orthogonalize_cubic(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """The textbook Newton–Schulz cubic X ← 1.5·X − 0.5·(X·Xᵀ)·X, for comparison: it converges
    to U·Vᵀ exactly (singular values of G / ‖G‖ in (0, 1] go to 1), but slowly for small ones;
    the tuned quintic above gets near one in fewer steps and then hovers around it."""
    x = g / (g.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        x = 1.5 * x - 0.5 * (x @ x.transpose(-2, -1)) @ x
    return x


class Muon(torch.optim.Optimizer):
    """Muon for the groups marked ``muon=True`` (hidden matrices), AdamW for the rest, in one
    optimizer so the trainer's schedule, checkpoints and resume treat it like AdamW.

    The schedule sets every group's ``lr`` to the AdamW learning rate of the moment; a Muon group
    moves by ``lr × lr_scale`` (its own peak over AdamW's), so both follow the same warmup and
    decay. A Muon update is orthogonalized Nesterov momentum, scaled so that matrices of any
    shape move by a similar RMS (× √max(1, rows/cols)); weight decay is decoupled, as AdamW's.
    """

    def __init__(self, groups, lr: float, momentum: float = 0.95, betas=(0.9, 0.99), eps: float = 1e-8):
        super().__init__(groups, dict(lr=lr, momentum=momentum, betas=betas, eps=eps, weight_decay=0.0,
                                      muon=False, lr_scale=1.0))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            lr, wd = group["lr"] * group["lr_scale"], group["weight_decay"]
            if wd:
                torch._foreach_mul_(params, 1 - lr * wd)
            if group["muon"]:
                self._muon(group, params, lr)
            else:
                self._adam(group, params, lr)
        return None

    def _muon(self, group, params, lr):
        by_shape: dict[tuple, list] = {}
        for p in params:
            buf = self.state[p].setdefault("momentum", torch.zeros_like(p))
            buf.mul_(group["momentum"]).add_(p.grad)
            by_shape.setdefault(tuple(p.shape), []).append((p, p.grad.add(buf, alpha=group["momentum"])))
        for shape, items in by_shape.items():  # one batched iteration per shape: fewer, larger matmuls
            updates = orthogonalize(torch.stack([u for _, u in items]))
            scale = max(1.0, shape[0] / shape[1]) ** 0.5
            for (p, _), u in zip(items, updates):
                p.add_(u, alpha=-lr * scale)

    def _adam(self, group, params, lr):
        """AdamW's update for a whole group at once (``_foreach`` ops: a few kernels, not one per
        parameter), the step count kept with the group's first parameter."""
        if not params:
            return
        beta1, beta2 = group["betas"]
        for p in params:
            if not self.state[p]:
                self.state[p].update(step=torch.zeros(()), exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
        states = [self.state[p] for p in params]
        t = float(states[0]["step"]) + 1
        for st in states:
            st["step"].fill_(t)
        grads = [p.grad for p in params]
        avg, avg_sq = [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states]
        torch._foreach_lerp_(avg, grads, 1 - beta1)
        torch._foreach_mul_(avg_sq, beta2)
        torch._foreach_addcmul_(avg_sq, grads, grads, value=1 - beta2)
        denom = torch._foreach_sqrt(torch._foreach_div(avg_sq, 1 - beta2 ** t))
        torch._foreach_add_(denom, group["eps"])
        torch._foreach_addcdiv_(params, avg, denom, value=-lr / (1 - beta1 ** t))
