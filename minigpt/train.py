"""Training loop for the three models, writing a run folder another process can follow.

A run folder holds:

- ``config.json``: the :class:`TrainConfig` of the run;
- ``metrics.jsonl``: one JSON object per log line (step, train_loss, val_loss when evaluated,
  lr, tokens_per_s, elapsed_s), appended and flushed line by line;
- ``status.json``: state (running / finished / failed / stopped), pid, step, budget, best val,
  written atomically (temp file + fsync + rename);
- ``checkpoint/``: the best-val model (with optimizer and trainer state), and ``last/``: the
  latest state, which ``resume=True`` continues from.

The recipe (defaults) comes from measurements on a 2-core CPU: a 64-wide, 4-layer, 4-head
MiniGPT, batch 128, AdamW lr 3e-3 betas (0.9, 0.99), weight decay 0.1 on matrices only, 2% linear
warmup then cosine decay to 10% of the peak, batches trimmed to their longest word.
"""

from __future__ import annotations

import json
import math
import os
import signal
import threading
import time
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import torch

from minigpt import paths
from minigpt.checkpoint import load_checkpoint, load_optimizer_state, save_checkpoint
from minigpt.config import BigramConfig, ConfigError, GPTConfig, MLPConfig
from minigpt.data import IGNORE, Dataset, EncodedSplit, load_dataset
from minigpt.models import build_model, count_parameters

MODEL_KINDS = ("gpt", "mlp", "bigram")
DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16")
EMBEDDED = "embedded"

CONFIG_FILE, METRICS_FILE, STATUS_FILE = "config.json", "metrics.jsonl", "status.json"
BEST_DIR, LAST_DIR = "checkpoint", "last"

# Budgets up to this size train without dropout (short runs do better without it; longer ones
# overfit and need it): measured on the names data, see the notes on training on CPU.
SHORT_RUN_STEPS = 6000
SHORT_RUN_SECONDS = 200.0


@dataclass
class TrainConfig:
    model: str = "gpt"  # gpt | mlp | bigram
    # MiniGPT
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    block_size: int | None = None  # None: the dataset's longest word + 1
    dropout: float | None = None  # None: 0.0 for short budgets, 0.1 for long ones
    pos_encoding: str = "learned"
    tie_weights: bool = False
    # MLP
    mlp_context: int = 3
    mlp_embd: int = 10
    mlp_hidden: int = 200
    # Bigram
    smoothing: float = 1.0
    # Optimisation
    batch_size: int = 128
    lr: float = 3e-3
    min_lr_ratio: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.1
    warmup: float = 0.02  # < 1: fraction of the budget; ≥ 1: a number of steps
    grad_clip: float | None = 1.0
    # Budget: exactly one of steps / time_s
    steps: int | None = 3000
    time_s: float | None = None
    eval_interval: int = 250
    log_interval: int = 10
    # Environment
    device: str = "auto"
    dtype: str = "auto"  # auto: bf16 autocast on CUDA, float32 elsewhere
    seed: int = 1337
    data: str | None = None  # None: the embedded names
    split_seed: int = 42

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if self.model not in MODEL_KINDS:
            raise ConfigError(f"model must be one of {', '.join(MODEL_KINDS)}, got {self.model!r}")
        if (self.steps is None) == (self.time_s is None):
            raise ConfigError("give exactly one budget: a number of steps or a time in seconds")
        if self.steps is not None and (isinstance(self.steps, bool) or not isinstance(self.steps, int)
                                       or self.steps <= 0):
            raise ConfigError(f"steps must be a positive whole number, got {self.steps!r}")
        if self.time_s is not None and not (self.time_s > 0 and math.isfinite(self.time_s)):
            raise ConfigError(f"time budget must be a positive number of seconds, got {self.time_s!r}")
        for name in ("batch_size", "eval_interval", "log_interval"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name.replace('_', ' ')} must be a positive whole number, got {value!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"learning rate must be > 0, got {self.lr!r}")
        if not (0 <= self.min_lr_ratio <= 1):
            raise ConfigError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")
        for name in ("beta1", "beta2"):
            if not (0 <= getattr(self, name) < 1):
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        if not (self.weight_decay >= 0):
            raise ConfigError(f"weight decay must be ≥ 0, got {self.weight_decay!r}")
        if not (self.warmup >= 0) or (self.warmup >= 1 and self.warmup != int(self.warmup)):
            raise ConfigError(f"warmup must be a fraction in [0, 1) or a whole number of steps, got {self.warmup!r}")
        if self.grad_clip is not None and not (self.grad_clip > 0):
            raise ConfigError(f"grad clip must be > 0 (or none), got {self.grad_clip!r}")
        if self.device not in DEVICES:
            raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.dropout is not None and not (0.0 <= float(self.dropout) < 1.0):
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.block_size is not None and (not isinstance(self.block_size, int) or self.block_size < 2):
            raise ConfigError(f"block size must be at least 2, got {self.block_size!r}")
        # The model's own checks (d_model divisible by n_heads, …) with a stand-in vocabulary.
        self.model_config(27, self.block_size or 16)

    @property
    def effective_dropout(self) -> float:
        if self.dropout is not None:
            return float(self.dropout)
        short = (self.steps is not None and self.steps <= SHORT_RUN_STEPS) or (
            self.time_s is not None and self.time_s <= SHORT_RUN_SECONDS)
        return 0.0 if short else 0.1

    def model_config(self, vocab_size: int, block_size: int):
        if self.model == "gpt":
            return GPTConfig(vocab_size=vocab_size, block_size=block_size, d_model=self.d_model,
                             n_heads=self.n_heads, n_layers=self.n_layers, dropout=self.effective_dropout,
                             pos_encoding=self.pos_encoding, tie_weights=self.tie_weights)
        if self.model == "mlp":
            return MLPConfig(vocab_size=vocab_size, block_size=block_size, context=self.mlp_context,
                             n_embd=self.mlp_embd, n_hidden=self.mlp_hidden)
        return BigramConfig(vocab_size=vocab_size, block_size=block_size, smoothing=self.smoothing)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["data"] = self.data if self.data is not None else EMBEDDED
        return d

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"unknown training options: {', '.join(sorted(unknown))}")
        values = dict(values)
        if values.get("data") == EMBEDDED:
            values["data"] = None
        return cls(**values)

    def data_path(self) -> Path:
        return Path(self.data) if self.data is not None else paths.default_dataset()


# ---------------------------------------------------------------------------- helpers


def physical_cores() -> int:
    """Physical cores usable by this process (hyperthreads do not help matrix maths)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    cores = set()
    try:
        phys = None
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("physical id"):
                    phys = line.split(":")[1].strip()
                elif line.startswith("core id"):
                    cores.add((phys, line.split(":")[1].strip()))
    except OSError:
        pass
    return max(1, min(usable, len(cores) or usable))


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device cuda requested but no CUDA GPU is available (try --device auto)")
    if name == "mps" and not (getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()):
        raise ConfigError("device mps requested but Apple MPS is not available (try --device auto)")
    return torch.device(name)


def _autocast(device: torch.device, dtype: str):
    use_bf16 = dtype == "bfloat16" or (dtype == "auto" and device.type == "cuda")
    if use_bf16:
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return torch.autocast(device_type=device.type, enabled=False)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def process_start_time(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def write_json_atomic(path: Path, obj) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def lr_at(cfg: TrainConfig, progress: float, step: int, total_steps: int | None) -> float:
    """Linear warmup, then cosine decay from ``lr`` to ``min_lr_ratio × lr``.

    ``progress`` is the fraction of the budget done (steps or elapsed time). A warmup ≥ 1 counts
    steps; below 1 it is a fraction of the budget.
    """
    if cfg.warmup >= 1:
        if step < cfg.warmup:
            return cfg.lr * (step + 1) / cfg.warmup
        warm_frac = cfg.warmup / total_steps if total_steps else 0.0
    else:
        warm_frac = cfg.warmup
        if progress < warm_frac:
            return cfg.lr * max(progress / warm_frac, 1.0 / max(total_steps or 1000, 1))
    progress = min(max(progress, 0.0), 1.0)
    decay = (progress - warm_frac) / max(1.0 - warm_frac, 1e-9)
    decay = min(max(decay, 0.0), 1.0)
    floor = cfg.min_lr_ratio * cfg.lr
    return floor + 0.5 * (cfg.lr - floor) * (1 + math.cos(math.pi * decay))


def make_optimizer(model, cfg: TrainConfig, device: torch.device) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices (dim ≥ 2) only: not on biases, LayerNorm or gains."""
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    kwargs = dict(lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    if device.type in ("cpu", "cuda"):
        try:
            return torch.optim.AdamW(groups, fused=True, **kwargs)
        except (RuntimeError, TypeError, ValueError):
            pass
    return torch.optim.AdamW(groups, **kwargs)


@torch.no_grad()
def evaluate(model, split: EncodedSplit, device: torch.device | str = "cpu", batch_size: int = 1024,
             dtype: str = "float32") -> float:
    """Mean cross-entropy over every real (non-padding) target of the split."""
    device = torch.device(device)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    order = torch.argsort(split.lengths)  # similar lengths together: batches trim more
    for i in range(0, len(split), batch_size):
        x, y = split.batch(order[i : i + batch_size])
        x, y = x.to(device), y.to(device)
        with _autocast(device, dtype):
            logits, _ = model(x)
        logits = logits.float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                                 ignore_index=IGNORE, reduction="sum")
        total += float(loss)
        count += int((y != IGNORE).sum())
    model.train(was_training)
    return total / max(count, 1)


def load_run_config(run_dir: Path | str) -> TrainConfig:
    path = Path(run_dir) / CONFIG_FILE
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{run_dir}: not a run folder (no {CONFIG_FILE})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: unreadable ({e})") from None
    return TrainConfig.from_dict(values)


def load_data_for(cfg: TrainConfig, vocab=None, block_size: int | None = None) -> Dataset:
    return load_dataset(cfg.data_path(), seed=cfg.split_seed, vocab=vocab,
                        block_size=block_size or cfg.block_size)


# ---------------------------------------------------------------------------- the run


class _Run:
    """Everything one training run writes, kept in one place."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, on_log):
        self.cfg, self.dir, self.on_log = cfg, run_dir, on_log
        self.status = {
            "state": "running", "pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
            "step": 0, "total_steps": cfg.steps, "time_budget_s": cfg.time_s, "best_val": None,
            "model": cfg.model, "n_params": None, "device": None, "started_at": now_iso(),
            "updated_at": now_iso(), "error": None, "val_loss": None, "test_loss": None,
        }
        self._last_status_write = 0.0
        self._metrics = open(run_dir / METRICS_FILE, "a", encoding="utf-8")

    def write_status(self, force: bool = True, **changes) -> None:
        self.status.update(changes)
        t = time.monotonic()
        if not force and t - self._last_status_write < 1.0:
            return
        self.status["updated_at"] = now_iso()
        write_json_atomic(self.dir / STATUS_FILE, self.status)
        self._last_status_write = t

    def log(self, record: dict) -> None:
        self._metrics.write(json.dumps(record) + "\n")
        self._metrics.flush()
        if self.on_log is not None:
            self.on_log(record)

    def close(self) -> None:
        self._metrics.close()


class _StopFlag:
    """SIGINT/SIGTERM set a flag; the loop finishes its step, saves and stops."""

    def __init__(self):
        self.signal: int | None = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop right away
        self.signal = signum

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False


def train(cfg: TrainConfig | None, run_dir: Path | str, resume: bool = False,
          on_log: Callable[[dict], None] | None = None, dataset: Dataset | None = None) -> dict:
    """Train into ``run_dir``; return the final status dict.

    ``dataset`` replaces the one described by ``cfg`` (benchmarks use it for other splits).

    With ``resume=True`` the configuration is read from ``run_dir/config.json`` (``cfg`` may be
    None) and training continues the same schedule from the saved step. ``on_log`` is called
    with every metrics record (the CLI draws its progress line from it).
    """
    run_dir = Path(run_dir)
    if resume:
        cfg = load_run_config(run_dir)
        if not ((run_dir / LAST_DIR).exists() or (run_dir / BEST_DIR).exists()
                or (run_dir / (LAST_DIR + ".old")).exists()):
            raise ConfigError(f"{run_dir}: nothing to resume (no checkpoint saved yet)")
    elif cfg is None:
        raise ConfigError("a training configuration is needed unless resuming")
    else:
        cfg.validate()
        run_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(run_dir / CONFIG_FILE, cfg.to_dict())
    run = _Run(cfg, run_dir, on_log)
    if resume and (run_dir / STATUS_FILE).exists():
        try:
            old = json.loads((run_dir / STATUS_FILE).read_text(encoding="utf-8"))
            run.status["started_at"] = old.get("started_at", run.status["started_at"])
        except (OSError, ValueError):
            pass
    run.write_status()
    try:
        with _StopFlag() as stop:
            status = _train(cfg, run, resume, stop, dataset)
        return status
    except BaseException as e:  # noqa: BLE001 - every way out is written down
        if isinstance(e, KeyboardInterrupt):
            run.write_status(state="stopped", error="interrupted")
        else:
            msg = str(e) or type(e).__name__
            run.write_status(state="failed", error=f"{type(e).__name__}: {msg}")
        raise
    finally:
        run.close()


def _train(cfg: TrainConfig, run: _Run, resume: bool, stop: _StopFlag, dataset: Dataset | None) -> dict:
    device = resolve_device(cfg.device)
    if device.type == "cpu":
        torch.set_num_threads(physical_cores())
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    vocab = None
    state: dict = {}
    ckpt = None
    if resume:
        src = run.dir / LAST_DIR
        if not (src.exists() or src.with_name(LAST_DIR + ".old").exists()):
            src = run.dir / BEST_DIR
        ckpt = load_checkpoint(src, device="cpu")
        vocab, state = ckpt.vocab, dict(ckpt.state)
    data = dataset or load_data_for(cfg, vocab=vocab,
                                    block_size=ckpt.model_config.block_size if ckpt else None)
    torch.manual_seed(cfg.seed)
    if ckpt is not None:
        model = ckpt.model
    else:
        model = build_model(cfg.model, cfg.model_config(data.vocab.size, data.block_size))
    model.to(device)
    n_params = count_parameters(model)
    train_config = cfg.to_dict()
    run.write_status(n_params=n_params, device=str(device), block_size=data.block_size)

    def save(where: str, metrics: dict, optimizer, st: dict) -> None:
        save_checkpoint(run.dir / where, model, data.vocab, train_config=train_config,
                        metrics=metrics, optimizer=optimizer, state=st)

    if cfg.model == "bigram":
        return _fit_bigram(cfg, run, model, data, device, save)

    optimizer = make_optimizer(model, cfg, device)
    if ckpt is not None:
        load_optimizer_state(ckpt.path, optimizer)
    step = int(state.get("step", 0))
    elapsed_before = float(state.get("elapsed_s", 0.0))
    best_val = state.get("best_val")
    best_step = state.get("best_step")
    run.write_status(step=step, best_val=best_val)

    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
    if step:
        torch.manual_seed(cfg.seed * 1_000_003 + step)  # dropout masks after a resume
    n_train = len(data.train)
    model.train()
    t0 = time.monotonic()
    interval_t, interval_tokens, interval_loss, interval_n = t0, 0, 0.0, 0

    def elapsed() -> float:
        return elapsed_before + time.monotonic() - t0

    def progress() -> float:
        if cfg.steps is not None:
            return step / cfg.steps
        return elapsed() / cfg.time_s

    def done() -> bool:
        return step >= cfg.steps if cfg.steps is not None else elapsed() >= cfg.time_s

    def trainer_state() -> dict:
        return {"step": step, "elapsed_s": round(elapsed(), 3), "best_val": best_val,
                "best_step": best_step}

    def eval_and_keep(record: dict) -> None:
        nonlocal best_val, best_step
        val = evaluate(model, data.val, device, dtype=cfg.dtype)
        record["val_loss"] = round(val, 5)
        if best_val is None or val < best_val:
            best_val, best_step = val, step
            save(BEST_DIR, {"val_loss": val, "step": step}, optimizer, trainer_state())
        save(LAST_DIR, {"val_loss": val, "step": step}, optimizer, trainer_state())
        model.train()

    stopped = False
    first_step = step + 1
    saved_step = step if ckpt is not None else -1
    while not done():
        lr = lr_at(cfg, progress(), step, cfg.steps)
        for g in optimizer.param_groups:
            g["lr"] = lr
        idx = torch.randint(n_train, (cfg.batch_size,), generator=gen)
        x, y = data.train.batch(idx)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with _autocast(device, cfg.dtype):
            _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        step += 1
        interval_loss += loss.item()
        interval_n += 1
        interval_tokens += int((y != IGNORE).sum())
        is_eval = step % cfg.eval_interval == 0 or done() or stop.signal is not None
        if step % cfg.log_interval == 0 or is_eval or step == first_step:
            t = time.monotonic()
            record = {"step": step, "train_loss": round(interval_loss / interval_n, 5),
                      "lr": lr, "tokens_per_s": round(interval_tokens / max(t - interval_t, 1e-9), 1),
                      "elapsed_s": round(elapsed(), 3)}
            if is_eval:
                eval_and_keep(record)
                saved_step = step
            run.log(record)
            run.write_status(force=is_eval, step=step, best_val=best_val)
            interval_t, interval_tokens, interval_loss, interval_n = time.monotonic(), 0, 0.0, 0
        if stop.signal is not None:
            stopped = True
            break
    if saved_step != step or not (run.dir / BEST_DIR).exists():
        # a stop arrived after this step's log line, or nothing was evaluated yet
        record = {"step": step, "lr": 0.0, "tokens_per_s": 0.0, "elapsed_s": round(elapsed(), 3)}
        eval_and_keep(record)
        run.log(record)

    # Final numbers: val and test of the best checkpoint, stored with it.
    best = load_checkpoint(run.dir / BEST_DIR, device=device)
    val = evaluate(best.model, data.val, device, dtype=cfg.dtype)
    test = evaluate(best.model, data.test, device, dtype=cfg.dtype)
    metrics = {"val_loss": val, "test_loss": test, "step": best.state.get("step", best_step),
               "n_params": n_params, "steps_done": step, "elapsed_s": round(elapsed(), 3),
               "device": str(device)}
    model.load_state_dict(best.model.state_dict())
    save_checkpoint(run.dir / BEST_DIR, model, data.vocab, train_config=train_config, metrics=metrics,
                    optimizer=None, state=best.state)  # resume reads last/
    state_name = "stopped" if stopped else "finished"
    return dict(_finish(run, state_name, step, best_val, val, test))


def _finish(run: _Run, state: str, step: int, best_val, val: float, test: float) -> dict:
    run.write_status(state=state, step=step, best_val=best_val, val_loss=val, test_loss=test)
    return run.status


def _fit_bigram(cfg, run: _Run, model, data: Dataset, device, save) -> dict:
    run.write_status(total_steps=1, time_budget_s=None)
    t0 = time.monotonic()
    model.fit(data.train.x.to(device), data.train.y.to(device))
    val = evaluate(model, data.val, device)
    test = evaluate(model, data.test, device)
    tokens = int((data.train.y != IGNORE).sum())
    el = time.monotonic() - t0
    run.log({"step": 1, "train_loss": round(evaluate(model, data.train, device), 5), "val_loss": round(val, 5),
             "lr": 0.0, "tokens_per_s": round(tokens / max(el, 1e-9), 1), "elapsed_s": round(el, 3)})
    metrics = {"val_loss": val, "test_loss": test, "step": 1, "n_params": count_parameters(model),
               "steps_done": 1, "elapsed_s": round(el, 3), "device": str(device)}
    st = {"step": 1, "elapsed_s": el, "best_val": val, "best_step": 1}
    save(BEST_DIR, metrics, None, st)
    save(LAST_DIR, metrics, None, st)
    return dict(_finish(run, "finished", 1, val, val, test))
