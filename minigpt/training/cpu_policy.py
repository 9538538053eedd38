"""How a CPU run waits and how many threads it uses, from what the machine is doing *now*.

Two facts, measured on a 2-core machine, shape this:
- OpenMP threads that spin between parallel regions (``OMP_WAIT_POLICY=ACTIVE``) train about
  twice as fast on idle cores as threads that sleep (``PASSIVE``): 1,376–1,450 steps in 25 s
  against 673–712.
- Spinning threads on cores that another process needs slow both down many times over.

The wait policy is read once, when torch's OpenMP runtime starts, so it is decided before torch
is imported, from a short sample of the CPU's busy time (psutil's CPU times, a quarter of a second)
rather than the load average, which lags by minutes after any heavy command. What can change
while a run trains is the thread count: the trainer samples the same signal every few seconds
(``ThreadGovernor``, asked by ``Trainer.retune_threads``, a step of the loop after each log record),
leaving its own CPU time out, and uses as many threads as there are cores nobody else is using
(at least one). A single thread never waits on another, so spinning costs nothing then.

This module imports nothing heavy: the CLI calls it before torch loads.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass

import psutil

# Other processes using less than this many cores' worth of CPU leave the machine "idle".
IDLE_BELOW_CORES = 0.5


@dataclass(frozen=True)
class CpuPolicy:
    wait: str  # "ACTIVE" or "PASSIVE": the OpenMP wait policy for the process
    threads: int
    reason: str

    def describe(self) -> str:
        return f"OpenMP {self.wait.lower()} waiting, {self.threads} thread{'s' if self.threads != 1 else ''} ({self.reason})"


def decide(busy_cores: float | None, cores: int, env_wait: str | None = None) -> CpuPolicy:
    """The policy for a run about to start, from how many cores others keep busy right now."""
    cores = max(1, cores)
    if env_wait:
        wait = env_wait.strip().upper()
        return CpuPolicy(wait, threads_for(busy_cores, cores), "OMP_WAIT_POLICY set in the environment")
    if busy_cores is None:
        return CpuPolicy("ACTIVE", cores, "CPU use could not be measured here")
    if busy_cores < IDLE_BELOW_CORES:
        return CpuPolicy("ACTIVE", cores, f"other processes used {busy_cores:.1f} of {cores} cores at start")
    return CpuPolicy("PASSIVE", threads_for(busy_cores, cores),
                     f"other processes used {busy_cores:.1f} of {cores} cores at start")


def threads_for(busy_cores: float | None, cores: int) -> int:
    """Threads to train with: the cores nobody else is using, rounded, at least one."""
    if busy_cores is None:
        return max(1, cores)
    return max(1, min(cores, int(cores - busy_cores + 0.5)))


# ----------------------------------------------------------------------------- measuring


def physical_cores() -> int:
    """Physical cores usable by this process (hyperthreads do not help matrix maths)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS has no affinity: every core is usable
        usable = os.cpu_count() or 1
    try:
        physical = psutil.cpu_count(logical=False)
    except (psutil.Error, OSError):
        physical = None
    return max(1, min(usable, physical or usable))


# psutil's CPU times are seconds; a sample keeps whole ticks of 1/CLOCK_TICKS s (Linux's own unit).
CLOCK_TICKS = 100
# The system-wide times that add up to the elapsed time; guest time is already inside user time.
_TIME_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "interrupt", "dpc")


@dataclass(frozen=True)
class CpuSample:
    busy_ticks: int  # all cores, all processes
    total_ticks: int
    own_ticks: int  # this process (every thread)
    online_cores: int


def read_sample() -> CpuSample | None:
    """One reading of the CPU's time counters (psutil: Linux, macOS, Windows), or None where they
    cannot be read."""
    try:
        times, own = psutil.cpu_times(), psutil.Process().cpu_times()
    except (psutil.Error, OSError):
        return None
    total = sum(getattr(times, name, 0.0) for name in _TIME_FIELDS)
    idle = times.idle + getattr(times, "iowait", 0.0)
    return CpuSample(round((total - idle) * CLOCK_TICKS), round(total * CLOCK_TICKS),
                     round((own.user + own.system) * CLOCK_TICKS), psutil.cpu_count() or os.cpu_count() or 1)


def others_busy_cores(before: CpuSample | None, after: CpuSample | None) -> float | None:
    """Cores' worth of CPU used by *other* processes between two samples."""
    if before is None or after is None or after.total_ticks <= before.total_ticks:
        return None
    span = after.total_ticks - before.total_ticks  # ticks across all cores
    others = (after.busy_ticks - before.busy_ticks) - (after.own_ticks - before.own_ticks)
    return max(0.0, others / span * after.online_cores)


def measure_busy_cores(seconds: float = 0.25) -> float | None:
    before = read_sample()
    time.sleep(seconds)
    return others_busy_cores(before, read_sample())


_chosen: CpuPolicy | None = None  # what choose_at_start decided for this process


def choose_at_start(cores: int | None = None) -> CpuPolicy:
    """Measure, decide and set ``OMP_WAIT_POLICY`` for this process (before torch loads)."""
    global _chosen
    cores = cores or physical_cores()
    env = os.environ.get("OMP_WAIT_POLICY")
    _chosen = decide(None if env else measure_busy_cores(), cores, env)
    os.environ["OMP_WAIT_POLICY"] = _chosen.wait
    return _chosen


def policy_in_use(cores: int) -> CpuPolicy:
    """The policy this process started with (the CLI chose it), or one that says who did."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get("OMP_WAIT_POLICY")
    if env:
        return decide(None, cores, env)
    return CpuPolicy("default", cores, "torch imported before a policy was chosen")


class ThreadGovernor:
    """Re-reads the machine every ``every_s`` seconds and says how many threads to use now."""

    def __init__(self, cores: int, every_s: float = 5.0):
        self.cores, self.every_s = cores, every_s
        self._last = read_sample()
        self._last_t = time.monotonic()

    def check(self, now: float | None = None) -> int | None:
        """A new thread count when one is due, else None (cheap: two reads of CPU times)."""
        now = time.monotonic() if now is None else now
        if now - self._last_t < self.every_s:
            return None
        sample = read_sample()
        busy = others_busy_cores(self._last, sample)
        self._last, self._last_t = sample, now
        return None if busy is None else threads_for(busy, self.cores)


# One count for the whole process (torch's is global): nested or concurrent users share it, and
# the last one out restores what was there before the first came in.
_threads_lock = threading.Lock()
_threads_depth = 0
_threads_saved = 1


@contextlib.contextmanager
def torch_threads(count):
    """torch on ``count()`` intra-op threads for a while, then the count from before. torch's count
    is global to the process: the first user in sets it (``count`` is called then) and the last
    one out restores it, so nested or concurrent users (worked examples computed in two worker
    threads) never restore each other's count."""
    import torch  # (here, not at the top: the CLI imports this module before torch loads)

    global _threads_depth, _threads_saved
    with _threads_lock:
        if _threads_depth == 0:
            _threads_saved = torch.get_num_threads()
            torch.set_num_threads(count())
        _threads_depth += 1
    try:
        yield
    finally:
        with _threads_lock:
            _threads_depth -= 1
            if _threads_depth == 0:
                torch.set_num_threads(_threads_saved)


def one_thread():
    """torch on one thread: tiny tensors (a worked example, a batch of names) are a string of small
    products, where extra threads only wait on each other (about 9× slower with two threads under
    load; a batch of 50 names: median 86 ms on one thread against 725 ms on two)."""
    return torch_threads(lambda: 1)


def idle_core_threads():
    """torch on as many threads as there are cores no other process is using (at least one), as
    a training run starts. For a pretrained model's passes outside training (sampling, the
    explorers' measurements): on cores another process needs, threads wait on each other.
    Measured on the 2-core course machine under a load of 4 to 6 with a GPT-2-small-shaped model:
    30 sampled tokens 2.8–4.0 s on one thread against 5.3–20 s on torch's default two; the norms
    explorer's view 3.6 s against 17.5 s, the scaling explorer's 4.8 s against 23.9 s."""
    return torch_threads(lambda: threads_for(measure_busy_cores(), physical_cores()))
