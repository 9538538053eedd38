"""Data-parallel training with PyTorch's own engine: torchrun starts the processes, DDP syncs them.

``minigpt train --nproc N`` starts ``torch.distributed.run`` (torchrun) with the same command;
each process it starts finds ``WORLD_SIZE`` and ``RANK`` in its environment and joins the group
(gloo on CPU, nccl on CUDA) as a :class:`DataParallelWorld`. What makes N processes train the
same model one process would:

- every rank draws the *global* batch with the same seeded generator and keeps its own share
  (``shard``), so the examples seen per step do not depend on the number of processes, and a run
  resumes on any number of them;
- the loss is a sum over real (non-padding) tokens divided by the global token count, reduced
  across ranks (``global_tokens``): DDP averages gradients over ranks, so each rank scales its
  loss by the world size (``scaled_loss``), and the gradient equals the single-process one on the
  same examples;
- one small all-reduce per step agrees on "stop now" (the time budget or a signal seen by any
  rank), so every rank stops at the same step;
- rank 0 alone evaluates and writes the run folder; the others write nothing.

The trainer asks its world for each of these (``world.global_tokens(...)``, ...), and a single
process's :class:`World` answers with its own input, so the step reads as one process's.
"""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist

from minigpt.errors import ConfigError


@dataclass(frozen=True)
class World:
    """The processes training one model together; this one is a single process.

    A single process has nobody to share a batch with or to reduce with: its share is the whole
    batch, and each reduction returns its input unchanged."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def shard(self, index: torch.Tensor) -> torch.Tensor:
        """This process's share of the global batch's rows."""
        return index

    def wrap(self, net: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """The network the step runs."""
        return net

    def global_tokens(self, local_tokens: int, device) -> int:
        """Real target tokens in the global batch."""
        return local_tokens

    def scaled_loss(self, mean_loss: torch.Tensor, local_tokens: int, total_tokens: int) -> torch.Tensor:
        """The loss to back-propagate."""
        return mean_loss

    def agree(self, flags: list[bool], device) -> list[bool]:
        """Each flag, true when it is true in any process."""
        return flags

    def sum_across(self, values: list[float], device) -> list[float]:
        """Each value summed over the processes."""
        return values

    def barrier(self) -> None:
        """Wait until every process gets here."""

    def leave(self) -> None:
        """Leave the group of processes."""


SINGLE = World()


@dataclass(frozen=True)
class DataParallelWorld(World):
    """The ranks torchrun started, in one process group: each reduction is one all-reduce."""

    def shard(self, index: torch.Tensor) -> torch.Tensor:
        return shard(index, self)

    def wrap(self, net: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """DDP: backward averages every gradient over the ranks."""
        return torch.nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None)

    def global_tokens(self, local_tokens: int, device) -> int:
        t = torch.tensor([local_tokens], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return int(t.item())

    def scaled_loss(self, mean_loss: torch.Tensor, local_tokens: int, total_tokens: int) -> torch.Tensor:
        return scaled_loss(mean_loss, local_tokens, total_tokens, self)

    def agree(self, flags: list[bool], device) -> list[bool]:
        t = torch.tensor([float(f) for f in flags], device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return [bool(v) for v in t.tolist()]

    def sum_across(self, values: list[float], device) -> list[float]:
        t = torch.tensor(values, dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return t.tolist()

    def barrier(self) -> None:
        """(After a run that ended normally on every rank.)"""
        if dist.is_initialized():
            dist.barrier()

    def leave(self) -> None:
        """Tear the process group down while the interpreter is fully alive.

        Garbage first: DDP's hooks form reference cycles, and anything in a cycle that still holds a
        collective's work or the group itself would otherwise be freed only during interpreter
        finalization, when gloo's worker threads can no longer take the GIL (SIGABRT, "terminate
        called without an active exception")."""
        if dist.is_initialized():
            gc.collect()
            dist.destroy_process_group()


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ


def join(device_type: str) -> World:
    """Join the process group torchrun set up (or return the single-process world)."""
    if not launched_by_torchrun():
        return SINGLE
    world = DataParallelWorld(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]),
                              int(os.environ.get("LOCAL_RANK", 0)))
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device_type == "cuda" else "gloo")
    return world


def exit_rank(code: int = 0) -> None:
    """End a torchrun rank's process once its group is gone: flush, then exit without running
    interpreter finalization.

    A rank has nothing left to finalize (rank 0's files are written and closed, the others write
    nothing), but finalization would destroy torch's and gloo's C++ objects in no set order while
    their threads may still run; a thread destroyed while joinable aborts the process (exit -6,
    "terminate called without an active exception") and torchrun then reports a finished run as
    failed. ``os._exit`` skips that teardown; the kernel closes the sockets."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


# The formulas, for any rank of any world size.


def shard(index: torch.Tensor, world: World) -> torch.Tensor:
    """This rank's share of the global batch: a contiguous slice, the first ranks one longer."""
    return index.tensor_split(world.size)[world.rank]


def scaled_loss(mean_loss: torch.Tensor, local_tokens: int, total_tokens: int, world: World) -> torch.Tensor:
    """The loss to back-propagate so DDP's gradient average equals the global token mean."""
    return mean_loss * (local_tokens * world.size / max(total_tokens, 1))


DEFAULT_MASTER_PORT = 29500  # torchrun's own default
DEFAULT_RDZV_TIMEOUT_S = 120  # torchrun alone waits 10 to 15 minutes, silently, for a missing node
MAX_RDZV_TIMEOUT_S = 24 * 3600


def parse_endpoint(text: str, what: str = "--rdzv-endpoint") -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as (host, port), or one ConfigError saying what is wrong."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or any(c.isspace() for c in host):
        raise ConfigError(f"{what} {text!r}: write HOST:PORT, for example 10.0.0.1:29400")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"{what} {text!r}: the port {port!r} should be a number from 1 to 65535")
    return host, int(port)


def rendezvous_address(nnodes: int, node_rank: int, master_addr: str | None, master_port: int | None,
                       rdzv_endpoint: str | None) -> str:
    """Where the nodes of a multi-node run meet, as HOST:PORT (checked, with this node's rank)."""
    if node_rank >= nnodes:
        raise ConfigError(f"--node-rank {node_rank}: the ranks of {nnodes} node(s) are 0 to {nnodes - 1}")
    if rdzv_endpoint is not None:
        host, port = parse_endpoint(rdzv_endpoint)
        return f"{host}:{port}"
    if master_addr is not None and (not master_addr.strip() or any(c.isspace() or c in "/:" for c in master_addr)):
        raise ConfigError(f"--master-addr {master_addr!r}: give a host name or an IPv4 address")
    return f"{master_addr or '127.0.0.1'}:{master_port or DEFAULT_MASTER_PORT}"


def launcher_argv(nproc: int, nnodes: int = 1, node_rank: int = 0, master_addr: str | None = None,
                  master_port: int | None = None, rdzv_endpoint: str | None = None,
                  rdzv_timeout_s: int = DEFAULT_RDZV_TIMEOUT_S) -> list[str]:
    """``python -m torch.distributed.run …`` options for the processes of this machine. The
    nodes of a multi-node run wait at most ``rdzv_timeout_s`` for each other."""
    argv = ["--nproc-per-node", str(nproc)]
    if nnodes == 1 and rdzv_endpoint is None and master_addr is None and master_port is None:
        return argv + ["--standalone"]  # a rendezvous on localhost, on a free port
    address = rendezvous_address(nnodes, node_rank, master_addr, master_port, rdzv_endpoint)
    argv += ["--nnodes", str(nnodes)]
    if rdzv_endpoint is not None:  # c10d's waits: joining, and the last call for late nodes
        return argv + ["--rdzv-backend", "c10d", "--rdzv-endpoint", address,
                       "--rdzv-conf", f"join_timeout={rdzv_timeout_s},timeout={rdzv_timeout_s}"]
    host, port = address.rsplit(":", 1)
    return argv + ["--node-rank", str(node_rank), "--master-addr", host, "--master-port", port,
                   "--rdzv-conf", f"timeout={rdzv_timeout_s}"]  # the static rendezvous's one wait
