"""``minigpt doctor``: why a learner's setup misbehaves, one line per check, each with its fix.

The facts are gathered by small functions (:func:`gather` calls them all) into one :class:`Facts`;
each check is a pure function of those facts, so tests pin every verdict with facts made up by
hand, and the command only prints. A check's status is ``ok``, ``warn`` (works, but worse than it
could) or ``fail`` (something the tutor needs is broken); the command exits 1 on a ``fail``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minigpt import extras, paths, spawn

MIN_COLUMNS, MIN_ROWS = 80, 24  # the app's smallest screen (tui/home/too_small.py)
LOW_MEMORY = 1 << 30  # a default GPT run with its batches and optimizer state fits well under this
LOW_DISK = 500 << 20  # a run folder with its checkpoints and snapshots takes tens of megabytes
CPU_TORCH = "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cpu"
REINSTALL = "pip install --force-reinstall minigpt-tutor"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok", "warn" or "fail"
    detail: str  # what was found
    fix: str = ""  # how to make it right; empty when nothing needs doing

    def line(self) -> str:
        fix = f". Fix: {self.fix}" if self.fix and self.status != "ok" else ""
        return f"{self.status.upper():<4}  {self.name}: {self.detail}{fix}"


@dataclass
class Facts:
    torch_version: str | None = None  # None: torch cannot be imported
    cuda_build: str | None = None  # torch.version.cuda: the CUDA this torch was built for
    gpu: str | None = None  # the name of CUDA device 0, when one can be used
    mps: bool = False  # Apple's GPU through torch.backends.mps
    threads: int | None = None  # torch's intra-op threads
    cores: int = 1
    memory_available: int | None = None
    data_dir: Path = field(default_factory=Path)
    data_writable: bool = True
    data_size: int | None = None
    disk_free: int | None = None
    terminal: tuple[int, int] | None = None  # columns, rows; None when output is not a terminal
    term: str = ""
    colorterm: str = ""
    in_tmux: bool = False
    tmux_passthrough: str | None = None  # `tmux show -gv allow-passthrough`
    tmux_clipboard: str | None = None  # `tmux show -gv set-clipboard`
    extras: dict[str, bool] = field(default_factory=dict)
    checkpoints: dict[str, str | None] = field(default_factory=dict)  # name -> None, or what is wrong


def size_text(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # unreachable: the loop returns at GB


# ---------------------------------------------------------------------------- the checks


def check_torch(f: Facts) -> Check:
    if f.torch_version is None:
        return Check("torch", "fail", "torch cannot be imported", "pip install 'torch>=2.13,<3'")
    if f.gpu:
        return Check("torch", "ok", f"torch {f.torch_version}, CUDA {f.cuda_build}: trains on {f.gpu} (--device cuda)")
    if f.cuda_build:
        return Check("torch", "warn", f"torch {f.torch_version} is a CUDA {f.cuda_build} build on a machine without a "
                     f"usable GPU: it trains on the CPU and carries gigabytes of GPU libraries for nothing", CPU_TORCH)
    if f.mps:
        return Check("torch", "ok", f"torch {f.torch_version}: trains on the CPU, or on the Apple GPU with --device mps")
    return Check("torch", "ok", f"torch {f.torch_version}, a CPU build: trains on the CPU")


def check_threads(f: Facts) -> Check:
    if f.threads is None:
        return Check("threads", "warn", f"{f.cores} cores; torch's threads unknown (torch missing)")
    if f.threads > f.cores:
        return Check("threads", "warn", f"torch starts {f.threads} threads on {f.cores} physical cores: the extra "
                     f"threads wait on each other", f"export OMP_NUM_THREADS={f.cores} (or unset it: minigpt train "
                     f"chooses its own)")
    return Check("threads", "ok", f"{f.cores} physical core{'s' if f.cores != 1 else ''}, torch uses {f.threads} "
                 f"(minigpt train adjusts to what other processes leave free)")


def check_memory(f: Facts) -> Check:
    if f.memory_available is None:
        return Check("memory", "warn", "free memory could not be read here: runs start without the memory check")
    if f.memory_available < LOW_MEMORY:
        return Check("memory", "warn", f"{size_text(f.memory_available)} free: a default run may not fit",
                     "close other programs, or train a smaller model (--d-model 32 --batch-size 32)")
    return Check("memory", "ok", f"{size_text(f.memory_available)} free")


def check_data(f: Facts) -> Check:
    where = f"{f.data_dir} ({size_text(f.data_size)} of progress and runs)"
    if not f.data_writable:
        return Check("data folder", "fail", f"{f.data_dir} cannot be written: progress and runs are not saved",
                     "minigpt --data-dir FOLDER (a folder you can write), or fix its permissions")
    return Check("data folder", "ok", where)


def check_disk(f: Facts) -> Check:
    if f.disk_free is None:
        return Check("disk", "warn", "free space on the data folder's disk could not be read")
    if f.disk_free < LOW_DISK:
        return Check("disk", "fail", f"{size_text(f.disk_free)} free where the data folder is: runs and "
                     f"checkpoints stop saving when it fills", "free some space, or use --data-dir on another disk")
    return Check("disk", "ok", f"{size_text(f.disk_free)} free where the data folder is")


def check_terminal(f: Facts) -> Check:
    if f.terminal is None:
        return Check("terminal", "ok", "not a terminal here (output piped): the app needs one")
    cols, rows = f.terminal
    if cols < MIN_COLUMNS or rows < MIN_ROWS:
        return Check("terminal", "warn", f"{cols}×{rows}: the app needs {MIN_COLUMNS}×{MIN_ROWS}",
                     f"enlarge the window (or the font smaller) to at least {MIN_COLUMNS}×{MIN_ROWS}")
    return Check("terminal", "ok", f"{cols}×{rows}")


def check_colours(f: Facts) -> Check:
    term = f.term or "(unset)"
    if f.colorterm.lower() in ("truecolor", "24bit"):
        return Check("colours", "ok", f"24-bit colour (COLORTERM={f.colorterm}, TERM={term})")
    if "256color" in f.term:
        return Check("colours", "ok", f"256 colours (TERM={term})")
    better = "tmux-256color" if f.in_tmux else "xterm-256color"
    if f.term in ("", "dumb"):
        return Check("colours", "warn", f"TERM={term}: no colours or cursor movement; the app cannot draw",
                     f"export TERM={better}")
    return Check("colours", "warn", f"TERM={term}: 16 colours, so the app uses its ANSI theme",
                 f"export TERM={better} if your terminal shows 256 colours (most do)"
                 + (", and set -g default-terminal tmux-256color in ~/.tmux.conf" if f.in_tmux else ""))


def check_tmux(f: Facts) -> Check:
    if not f.in_tmux:
        return Check("tmux", "ok", "not inside tmux")
    passthrough = f.tmux_passthrough in ("on", "all")
    clipboard = f.tmux_clipboard in ("on", "external")
    if passthrough and clipboard:
        return Check("tmux", "ok", "passes desktop notifications and clipboard copies through")
    lost, fixes = [], []
    if not passthrough:
        lost.append(f"desktop notifications (allow-passthrough is {f.tmux_passthrough or 'unknown'})")
        fixes.append("set -g allow-passthrough on")
    if not clipboard:
        lost.append(f"copies to the clipboard (set-clipboard is {f.tmux_clipboard or 'unknown'})")
        fixes.append("set -g set-clipboard on")
    return Check("tmux", "warn", f"tmux drops {' and '.join(lost)}",
                 f"add `{'` and `'.join(fixes)}` to ~/.tmux.conf, then tmux source-file ~/.tmux.conf")


def check_extras(f: Facts) -> Check:
    have = [name for name, installed in f.extras.items() if installed]
    missing = [e for e in extras.EXTRAS if not f.extras.get(e.name, False)]
    detail = f"installed: {', '.join(have) or 'none'}"
    if missing:
        detail += "; not installed: " + "; ".join(f"{e.name} ({e.purpose})" for e in missing)
    # A missing extra is a choice, not a fault: the line says how to add one all the same.
    return Check("extras", "ok", detail, "; ".join(extras.install_command(e.name) for e in missing))


def check_checkpoints(f: Facts) -> Check:
    broken = {name: why for name, why in f.checkpoints.items() if why}
    if not f.checkpoints:
        return Check("checkpoints", "fail", "no shipped checkpoint found: lessons and the playground need them",
                     REINSTALL)
    if broken:
        return Check("checkpoints", "fail", "; ".join(f"{name}: {why}" for name, why in broken.items()), REINSTALL)
    return Check("checkpoints", "ok", f"{', '.join(f.checkpoints)}: intact (weights match their SHA-256)")


CHECKS: tuple[Callable[[Facts], Check], ...] = (check_torch, check_threads, check_memory, check_data, check_disk,
                                                check_terminal, check_colours, check_tmux, check_extras,
                                                check_checkpoints)


def run_checks(facts: Facts) -> list[Check]:
    return [check(facts) for check in CHECKS]


def report(checks: list[Check]) -> dict:
    """What ``--json`` prints: every check, and whether none failed."""
    return {"ok": all(c.status != "fail" for c in checks), "checks": [asdict(c) for c in checks]}


# ---------------------------------------------------------------------------- gathering the facts


def torch_facts(f: Facts) -> None:
    try:
        import torch
    except ImportError:
        return
    f.torch_version, f.cuda_build, f.threads = torch.__version__, torch.version.cuda, torch.get_num_threads()
    if torch.cuda.is_available():
        f.gpu = torch.cuda.get_device_name(0)
    mps = getattr(torch.backends, "mps", None)
    f.mps = bool(mps is not None and mps.is_available())


def machine_facts(f: Facts) -> None:
    from minigpt.training.cpu_policy import physical_cores
    from minigpt.training.session import available_memory_bytes

    f.cores, f.memory_available = physical_cores(), available_memory_bytes("cpu")


def _folder_size(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def data_facts(f: Facts) -> None:
    try:
        f.data_dir = paths.user_data_dir()
    except OSError:
        f.data_dir, f.data_writable = Path(os.environ.get("MINIGPT_DATA_DIR", "?")), False
        return
    f.data_writable = os.access(f.data_dir, os.W_OK)
    f.data_size = _folder_size(f.data_dir)
    try:
        f.disk_free = shutil.disk_usage(f.data_dir).free
    except OSError:
        f.disk_free = None


def _tmux_option(name: str) -> str | None:
    """A global tmux option's value (the server this process runs in), None when tmux cannot say."""
    from subprocess import TimeoutExpired

    try:
        proc = spawn.popen(["tmux", "show", "-gv", name], new_session=False, stdout=spawn.PIPE, stderr=spawn.PIPE)
    except OSError:
        return None
    try:
        out, _err = proc.communicate(timeout=5)
    except TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return (out.decode("utf-8", "replace").strip() or None) if proc.returncode == 0 else None


def terminal_facts(f: Facts, stream_fd: int = 1) -> None:
    try:
        size = os.get_terminal_size(stream_fd) if os.isatty(stream_fd) else None
        f.terminal = (size.columns, size.lines) if size else None
    except OSError:
        f.terminal = None
    f.term, f.colorterm = os.environ.get("TERM", ""), os.environ.get("COLORTERM", "")
    f.in_tmux = bool(os.environ.get("TMUX"))
    if f.in_tmux:
        f.tmux_passthrough, f.tmux_clipboard = _tmux_option("allow-passthrough"), _tmux_option("set-clipboard")


def extras_facts(f: Facts) -> None:
    f.extras = {e.name: extras.installed(e.name) for e in extras.EXTRAS}


def checkpoint_facts(f: Facts) -> None:
    """Each shipped checkpoint loaded as the app loads it: config read, shapes and SHA-256 checked."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.errors import TutorError

    folder = paths.checkpoints_dir()
    for path in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else ():
        try:
            load_checkpoint(path)
            f.checkpoints[path.name] = None
        except (TutorError, OSError) as e:
            f.checkpoints[path.name] = str(e)


GATHERERS: tuple[Callable[[Facts], None], ...] = (torch_facts, machine_facts, data_facts, terminal_facts,
                                                  extras_facts, checkpoint_facts)


def gather() -> Facts:
    facts = Facts()
    for gatherer in GATHERERS:
        gatherer(facts)
    return facts
