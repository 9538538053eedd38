import math


def lr_schedule(step: int, max_lr: float, min_lr: float, warmup: int, total: int) -> float:
    """Linear warmup to max_lr, then a half cosine down to min_lr."""
    if step < warmup:
        return max_lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    progress = (step - warmup) / (total - warmup)
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
