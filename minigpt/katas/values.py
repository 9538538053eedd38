"""Values of a kata's cases: sent between processes as JSON, compared, and shown to the learner.

A tensor travels as ``{"tensor": dtype, "shape": [...], "data": [...]}`` (Python's JSON keeps
every float exactly, NaN and infinities included); tuples and lists as lists, numbers as numbers.
Comparison says *where* two values differ, in the learner's terms (the index, both numbers), so
feedback never has to show a whole tensor. Torch is imported only when a tensor is met.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from minigpt.numbers import number_text

TOLERANCE = {"float64": (1e-9, 1e-11), "float32": (1e-4, 1e-6)}  # (relative, absolute)


def _is_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "shape") and hasattr(value, "dtype")


def dtype_name(value) -> str:
    return str(value.dtype).removeprefix("torch.")


def encode(value):
    """A JSON-ready form of ``value`` (tensors, numbers, strings, None, tuples and lists of them)."""
    if _is_tensor(value):
        flat = value.detach().cpu().reshape(-1)
        data = [bool(x) for x in flat.tolist()] if value.dtype.is_floating_point is False and \
            dtype_name(value) == "bool" else flat.tolist()
        return {"tensor": dtype_name(value), "shape": list(value.shape), "data": data}
    if isinstance(value, (list, tuple)):
        return {"seq": type(value).__name__, "items": [encode(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return {"dtype": str(value).removeprefix("torch.")}
    return {"unsupported": type(value).__name__}


def decode(value):
    if isinstance(value, dict):
        if "tensor" in value:
            import torch

            return torch.tensor(value["data"], dtype=getattr(torch, value["tensor"])).reshape(value["shape"])
        if "seq" in value:
            items = [decode(v) for v in value["items"]]
            return tuple(items) if value["seq"] == "tuple" else items
        if "dtype" in value:
            import torch

            return getattr(torch, value["dtype"])
        return _Unsupported(value.get("unsupported", "?"))
    return value


@dataclass(frozen=True)
class _Unsupported:
    type_name: str

    def __repr__(self) -> str:
        return f"<a {self.type_name}>"


def _number(x: float) -> str:
    """Whole numbers (and booleans) as Python writes them, others to six significant digits."""
    return str(x) if isinstance(x, int) else number_text(x, significant=6)


def _expected_obtained(expected: float, obtained: float) -> str:
    """Both numbers; when six digits print them alike, also how far apart they are, so the
    feedback never reads "expected 0.63595, obtained 0.63595"."""
    text = f"expected {_number(expected)}, obtained {_number(obtained)}"
    if _number(expected) == _number(obtained):
        text += f" (they differ by {abs(obtained - expected):.2g}, more than the tolerance)"
    return text


def show(value, limit: int = 6) -> str:
    """A short description: small tensors written out, larger ones by shape, dtype and a few numbers."""
    if _is_tensor(value):
        flat = value.detach().reshape(-1).tolist()
        head = ", ".join(_number(v) for v in flat[:limit]) + (", …" if len(flat) > limit else "")
        shape = "×".join(str(s) for s in value.shape) or "scalar"
        return f"tensor {shape} {dtype_name(value)} [{head}]"
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v, limit) for v in value) + ")"
    if isinstance(value, list):
        inner = ", ".join(show(v, limit) for v in value[: limit * 2])
        return "[" + inner + (", …" if len(value) > limit * 2 else "") + "]"
    if isinstance(value, float):
        return _number(value)
    return repr(value)


def difference(expected, obtained, rtol: float | None = None, atol: float | None = None) -> str | None:
    """None when ``obtained`` matches ``expected``; otherwise where and how they differ, in one line."""
    if _is_tensor(expected):
        if not _is_tensor(obtained):
            return f"expected a tensor, obtained {show(obtained)}"
        if tuple(obtained.shape) != tuple(expected.shape):
            return (f"shape {tuple(obtained.shape)} where {tuple(expected.shape)} was expected")
        if obtained.dtype != expected.dtype:
            return f"dtype {dtype_name(obtained)} where {dtype_name(expected)} was expected (keep the input's dtype)"
        if not expected.dtype.is_floating_point:
            wrong = (obtained != expected).nonzero()
            if len(wrong):
                at = tuple(wrong[0].tolist())
                return f"at {list(at)}: expected {expected[at].item()}, obtained {obtained[at].item()}"
            return None
        r, a = TOLERANCE.get(dtype_name(expected), TOLERANCE["float32"])
        r, a = rtol if rtol is not None else r, atol if atol is not None else a
        import torch

        e, o = expected.double(), obtained.double()
        same_nan = torch.isnan(e) & torch.isnan(o)
        close = torch.isclose(o, e, rtol=r, atol=a) | same_nan
        if bool(close.all()):
            return None
        gap = torch.where(close, torch.zeros_like(e), (o - e).abs().nan_to_num(float("inf")))
        at = tuple(int(i) for i in torch.unravel_index(gap.reshape(-1).argmax(), e.shape)) if e.dim() else ()
        where = f"at {list(at)}: " if at else ""
        return f"{where}{_expected_obtained(e[at].item(), o[at].item())}"
    if isinstance(expected, (tuple, list)):
        if not isinstance(obtained, (tuple, list)) or len(obtained) != len(expected):
            return f"expected {len(expected)} values {show(expected)}, obtained {show(obtained)}"
        for i, (e, o) in enumerate(zip(expected, obtained)):
            gap = difference(e, o, rtol, atol)
            if gap:
                return f"item {i}: {gap}"
        return None
    if isinstance(expected, float) and not isinstance(expected, bool):
        if _is_tensor(obtained) and obtained.numel() == 1:
            obtained = obtained.item()
        if not isinstance(obtained, (int, float)) or isinstance(obtained, bool):
            return f"expected the number {_number(expected)}, obtained {show(obtained)}"
        if math.isclose(obtained, expected, rel_tol=rtol or 1e-9, abs_tol=atol or 1e-12):
            return None
        return _expected_obtained(expected, float(obtained))
    if isinstance(expected, int) and not isinstance(expected, bool):
        if _is_tensor(obtained) and obtained.numel() == 1 and not obtained.dtype.is_floating_point:
            obtained = obtained.item()
        if type(obtained) is not int:
            return f"expected the int {expected}, obtained {show(obtained)}"
        return None if obtained == expected else f"expected {expected}, obtained {obtained} (off by {obtained - expected:+d})"
    return None if obtained == expected else f"expected {show(expected)}, obtained {show(obtained)}"
