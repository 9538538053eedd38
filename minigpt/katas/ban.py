"""A kata's forbidden calls as families of torch operators, refused at torch's dispatcher.

A rule such as ``torch.softmax`` names one Python entry point, but the same operator is reachable
by many others (``torch._softmax``, ``torch.ops.aten._softmax``, a ``TensorBase`` method, a
reference taken before any guard was in place). Every one of them ends in the dispatcher, so
:class:`Ban` refuses the operator there, in two ways that each hold without the other:

- the operator's kernel is replaced, for the time of the ban, by one that refuses
  (``torch.library``: the composite kernel where the operator has one, so a math fallback such as
  ``_scaled_dot_product_attention_math`` cannot decompose into allowed operators first; else the CPU
  and Meta kernels, where the cases run);
- a :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees every operator that reaches a
  device, whatever its spelling, and refuses the banned ones (any device).

Each refusal is recorded, so the grader fails the kata even when the learner's code caught the
error. Rules that are Python classes or helpers only (``torch.optim.lr_scheduler``,
``torch.nn.Module.parameters``) have no operator: :mod:`minigpt.katas.forbidden` covers them.

:func:`banned_ops` is torch-free; :class:`Ban` imports torch when entered.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from minigpt.errors import KataCodeError

_SDPA = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
         "_scaled_dot_product_attention_math_for_mps", "_scaled_dot_product_flash_attention",
         "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_efficient_attention",
         "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_fused_attention_overrideable")
_SOFTMAX = ("softmax", "_softmax", "_safe_softmax", "_masked_softmax", "special_softmax")
_LOG_SOFTMAX = ("log_softmax", "_log_softmax", "special_log_softmax")

# A family per practised operation: every aten operator that computes it (public, private, fused,
# per-device). Names missing from this torch are skipped when the ban is entered.
OP_FAMILIES: dict[str, tuple[str, ...]] = {
    "softmax": _SOFTMAX,
    "log_softmax": _LOG_SOFTMAX,
    "logsumexp": ("logsumexp", "special_logsumexp"),
    "scaled_dot_product_attention": _SDPA,
    "multi_head_attention": ("_native_multi_head_attention", *_SDPA),
    "layer_norm": ("layer_norm", "native_layer_norm"),
    "gelu": ("gelu", "gelu_"),
    "cross_entropy": ("cross_entropy_loss", "nll_loss", "nll_loss_nd", "nll_loss_forward", "nll_loss2d",
                      "nll_loss2d_forward", *_LOG_SOFTMAX),
    "multinomial": ("multinomial",),
    "adam": ("_fused_adam", "_fused_adam_", "_fused_adamw", "_fused_adamw_"),
}

# The last part of a forbidden rule (``torch.nn.functional.softmax`` → ``softmax``) → its family.
RULE_FAMILIES: dict[str, str] = {
    "softmax": "softmax", "log_softmax": "log_softmax", "logsumexp": "logsumexp",
    "scaled_dot_product_attention": "scaled_dot_product_attention",
    "MultiheadAttention": "multi_head_attention", "multi_head_attention_forward": "multi_head_attention",
    "layer_norm": "layer_norm", "LayerNorm": "layer_norm", "native_layer_norm": "layer_norm",
    "gelu": "gelu", "GELU": "gelu",
    "cross_entropy": "cross_entropy", "CrossEntropyLoss": "cross_entropy", "nll_loss": "cross_entropy",
    "multinomial": "multinomial",
    "AdamW": "adam", "Adam": "adam", "adamw": "adam", "adam": "adam", "_fused_adamw_": "adam",
}


def banned_ops(forbidden: Iterable[str]) -> dict[str, str]:
    """aten operator name → the family it belongs to, for a kata's forbidden rules."""
    ops: dict[str, str] = {}
    for rule in forbidden:
        family = RULE_FAMILIES.get(rule.rpartition(".")[2])
        for op in OP_FAMILIES.get(family, ()):
            ops.setdefault(op, family)
    return ops


def describe(op: str, family: str) -> str:
    """How a refused operator is named to the learner."""
    return f"{family} (through torch.ops.aten.{op})"


class Ban:
    """While inside, the operators in ``ops`` (name → family) refuse to run; each attempt is
    appended to ``calls`` (as :func:`describe` words it) and raises :class:`KataCodeError`."""

    def __init__(self, ops: dict[str, str], calls: list[str]):
        self.ops, self.calls = dict(ops), calls
        self._library = None
        self._mode = None

    def _refuse(self, op: str):
        text = describe(op, self.ops[op])
        self.calls.append(text)
        raise KataCodeError(f"{text} is what this kata asks you to write yourself")

    def __enter__(self) -> Ban:
        if not self.ops:
            return self
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        ban = self

        class RefuseBanned(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ in ban.ops:
                    ban._refuse(func.overloadpacket.__name__)
                return func(*args, **(kwargs or {}))

        library = torch.library.Library("aten", "IMPL")
        with warnings.catch_warnings():  # "overriding a previously registered kernel": meant
            warnings.simplefilter("ignore")
            for op in self.ops:
                packet = getattr(torch.ops.aten, op, None)
                if packet is None:
                    continue
                for overload in packet.overloads():
                    qualified = op if overload == "default" else f"{op}.{overload}"

                    def refuse(*args, _op=op, **kwargs):
                        ban._refuse(_op)

                    composite = torch._C._dispatch_has_kernel_for_dispatch_key(
                        f"aten::{qualified}", "CompositeImplicitAutograd")
                    for key in ("CompositeImplicitAutograd",) if composite else ("CPU", "Meta"):
                        library.impl(qualified, refuse, key)
        self._library = library
        self._mode = RefuseBanned()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if self._library is not None:
            self._library._destroy()  # the original kernels are back
            self._library = None
