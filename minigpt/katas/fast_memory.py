"""A simulated fast memory of M floats for the tiled-attention kata: counted loads and stores.

The learner's function gets a :class:`FastMemory` and :class:`Handle` objects for the big (N, d)
matrices Q, K, V and O, never the tensors. ``memory.load(handle, start, stop)`` copies rows
``start:stop`` into fast memory and counts their floats as reads; ``memory.store(handle, start,
tile)`` copies a tile back and counts its floats as writes. Every tensor the learner's code holds
(loaded tiles and everything computed from them) is in fast memory: a dispatch mode sees each
tensor an operator makes, and when at a load or a store the live ones (with the new tile) add up to
more than M floats, the memory refuses (an error the case keeps even when the code catches it).

Why the count holds: the matrices and the counters live only in the local variables of a running
generator (the memory's controller), which is driven by messages and answers with copies. Its
frame is reachable only through frame and garbage-collector introspection (``gi_frame``,
``sys._getframe``, ``tb_frame``, ``gc.get_referents`` …), and :func:`install_refusals` refuses
those audit events while any controller is alive. The controller checks at every load and store
that its dispatch mode is still in place. What is not counted against M: numbers taken out of
tensors into Python (``tolist`` and ``numpy`` are refused by the kata's forbidden names), and
copies made while the mode is taken off the stack between two loads (the public ways to take it
off are refused by name; torch's private ``_pop_mode`` cannot be, torch's own exit uses it). The
reads and writes are counted by the controller whatever the code does. As the rest of the harness,
this stops easy tricks, not a learner set on fooling their own tutor.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from minigpt.errors import KataCodeError

OPEN_EVENT = "minigpt.fast_memory.open"
# Audit events refused while a controller runs: each reaches a frame, a referent or the code of a
# function, i.e. the controller's hidden matrices and counters.
REFUSED_PREFIXES = ("gc.", "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "ctypes.")
FRAME_ATTRIBUTES = {"gi_frame", "cr_frame", "ag_frame", "tb_frame"}  # audited reads that lead to a frame
_installed = False


def install_refusals() -> None:
    """Install (once per process) the audit hook that refuses introspection while a controller is
    alive. A controller announces itself by the audit event ``OPEN_EVENT``, so the set of live
    controllers is held only by the hook (which no Python code can reach) and can only grow."""
    global _installed
    if _installed:
        return
    live: list[weakref.ref] = []

    def hook(event: str, args) -> None:
        if event == OPEN_EVENT:
            live.append(weakref.ref(args[0]))
            return
        attribute = args[1] if event.startswith("object.__") and len(args) > 1 else None
        if not (event.startswith(REFUSED_PREFIXES) or attribute in FRAME_ATTRIBUTES
                or (event == "object.__setattr__" and attribute == "__code__")):
            return
        live[:] = [r for r in live if (c := r()) is not None and (c.gi_suspended or c.gi_running)]
        if live:
            raise PermissionError(f"the fast memory refuses {event} while your code runs: "
                                  "Q, K, V and O are reached only through memory.load and memory.store")

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with PassThrough():  # torch imports what a dispatch mode needs on first use: before any refusal
        torch.zeros(1).clone()
    sys.addaudithook(hook)
    _installed = True


@dataclass(frozen=True, slots=True)
class Handle:
    """A matrix in slow memory: its name and shape, no data."""
    name: str
    shape: tuple[int, int]
    dtype: torch.dtype


@dataclass(frozen=True)
class _Refusal:
    """What the controller answers instead of a value (a message, never raised: the caller raises
    KataCodeError with its text)."""
    problem: str

    def __str__(self) -> str:
        return self.problem


def _controller(matrices: dict[str, torch.Tensor], capacity: int, tracker_type: type, dispatch: Callable):
    """The memory controller: holds the matrices and the counts, answers one message at a time."""
    reads = writes = peak = 0
    live: dict[int, tuple[list[weakref.ref], int]] = {}  # storage address → (its tensors, floats)
    problem = None
    answer = None
    while True:
        message = yield answer
        answer = None
        kind = message[0]
        if kind == "report":
            answer = (matrices["out"].clone(), reads, writes, peak, problem)
            continue
        if kind in ("load", "store") and problem is None and not _tracker_in_place(tracker_type, dispatch):
            problem = "your code took the fast memory's counter away (its dispatch mode), so nothing it did is counted"
        if kind == "made":
            for t in message[1]:
                key = t.untyped_storage().data_ptr()
                refs, floats = live.get(key, ([], 0))
                if refs and all(r() is None for r in refs):
                    refs, floats = [], 0  # a freed tensor's address, reused
                refs.append(weakref.ref(t))
                live[key] = (refs, max(floats, t.untyped_storage().nbytes() // max(t.element_size(), 1)))
            message = t = None  # the controller holds none of the learner's tensors
            continue
        if problem is not None:
            answer = _Refusal(problem)
            continue
        name, start = message[1], message[2]
        if name not in matrices:
            answer = _Refusal(f"no matrix called {name!r}: use the handles your function was given")
            continue
        matrix = matrices[name]
        for key in [k for k, (refs, _) in live.items() if all(r() is None for r in refs)]:
            del live[key]
        held = sum(floats for _, floats in live.values())
        if kind == "load" and isinstance(message[3], int) and isinstance(start, int):
            held += max(0, message[3] - start) * matrix.shape[1]
        peak = max(peak, held)
        if held > capacity:
            problem = (f"fast memory overflow at a {kind}: your tensors{' and the new tile' if kind == 'load' else ''} "
                       f"would hold {held} floats, the memory has {capacity}")
            answer = _Refusal(problem)
            continue
        if kind == "load":
            stop = message[3]
            if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop <= matrix.shape[0]):
                answer = _Refusal(f"load({name}, {start!r}, {stop!r}): rows must satisfy 0 ≤ start < stop ≤ {matrix.shape[0]}")
                continue
            reads += (stop - start) * matrix.shape[1]
            answer = matrix[start:stop].clone()
            live[answer.untyped_storage().data_ptr()] = ([weakref.ref(answer)], answer.numel())  # held from now on
            continue
        tile = message[3]
        if not (isinstance(tile, torch.Tensor) and tile.dim() == 2 and tile.shape[1] == matrix.shape[1]
                and isinstance(start, int) and 0 <= start and start + tile.shape[0] <= matrix.shape[0]):
            answer = _Refusal(f"store({name}, {start!r}, …): a tile of (rows, {matrix.shape[1]}) that fits in "
                              f"rows 0…{matrix.shape[0]}")
            continue
        writes += tile.numel()
        matrix[start:start + tile.shape[0]] = tile.detach().to(matrix.dtype)
        message = tile = None


def _tracker_in_place(tracker_type: type, dispatch: Callable) -> bool:
    stack = [torch._C._get_dispatch_stack_at(i) for i in range(torch._C._len_torch_dispatch_stack())]
    return any(type(mode) is tracker_type for mode in stack) and tracker_type.__dict__.get("__torch_dispatch__") is dispatch


class FastMemory:
    """What the learner's function is given: ``load``, ``store`` and ``capacity`` (M, in floats)."""

    __slots__ = ("_controller", "capacity")

    def __init__(self, controller, capacity: int):
        self._controller, self.capacity = controller, capacity

    def _ask(self, *message):
        answer = self._controller.send(message)
        if isinstance(answer, _Refusal):
            raise KataCodeError(str(answer))
        return answer

    def load(self, handle: Handle, start: int, stop: int) -> torch.Tensor:
        """Rows ``start:stop`` of ``handle``'s matrix, copied into fast memory (counted as reads)."""
        return self._ask("load", getattr(handle, "name", None), start, stop)

    def store(self, handle: Handle, start: int, tile: torch.Tensor) -> None:
        """Copy ``tile`` into rows ``start:start + len(tile)`` of ``handle``'s matrix (counted as writes)."""
        self._ask("store", getattr(handle, "name", None), start, tile)


def _flat_tensors(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    return []


def run(function: Callable, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, capacity: int):
    """Call ``function(memory, q, k, v, out)`` with handles and a fast memory of ``capacity``
    floats: (O as stored, reads, writes). Raises KataCodeError when the memory overflowed or its
    counter was taken away, even if the learner's code caught the refusal."""
    install_refusals()
    out = torch.full_like(q, float("nan"))  # rows never stored stay NaN and fail the values
    handles = {name: Handle(name, tuple(m.shape), m.dtype) for name, m in (("q", q), ("k", k), ("v", v), ("out", out))}

    class Tracker(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            if not controller.gi_running:  # the controller's own copies are not the learner's
                controller.send(("made", _flat_tensors(result)))
            return result

    controller = _controller({"q": q.clone(), "k": k.clone(), "v": v.clone(), "out": out}, capacity,
                             Tracker, Tracker.__dict__["__torch_dispatch__"])
    next(controller)
    sys.audit(OPEN_EVENT, controller)
    del out
    memory = FastMemory(controller, capacity)
    try:
        with Tracker():
            function(memory, handles["q"], handles["k"], handles["v"], handles["out"])
        stored, reads, writes, _peak, problem = controller.send(("report",))
    except StopIteration:
        raise KataCodeError("your code stopped the fast memory") from None
    finally:
        controller.close()
    if problem:
        raise KataCodeError(problem)
    return stored, reads, writes


ADAPTERS = {"fast_memory": run}
