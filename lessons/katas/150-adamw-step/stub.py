import torch


def adamw_step(param: torch.Tensor, grad: torch.Tensor, m: torch.Tensor, v: torch.Tensor, step: int,
               lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
               weight_decay: float = 0.01) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One AdamW update, as torch.optim.AdamW does it. Returns (new_param, new_m, new_v).

    ``step`` is the number of this update, counted from 1; m and v are the moment
    estimates before it (zeros at step 1). Weight decay is decoupled: it shrinks the
    parameter by lr·weight_decay·param, apart from the gradient. Return new tensors;
    do not change the arguments.
    """
    raise NotImplementedError("write adamw_step")
