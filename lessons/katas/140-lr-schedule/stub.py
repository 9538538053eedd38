import math


def lr_schedule(step: int, max_lr: float, min_lr: float, warmup: int, total: int) -> float:
    """The learning rate at ``step`` (counted from 0) of a run of ``total`` steps.

    Steps 0..warmup-1: linear warmup, max_lr · (step + 1) / warmup.
    Steps warmup..total: cosine decay from max_lr (at step = warmup) to min_lr (at step = total).
    After total: min_lr. Returns a float.
    """
    raise NotImplementedError("write lr_schedule")
