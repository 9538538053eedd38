"""Training loop for the three models, writing a run folder another process can follow.

A run folder holds (its schema, versioned, in ``minigpt.runs.schema``):

- ``config.json``: the :class:`TrainConfig` of the run, its data path absolute;
- ``metrics.jsonl``: a format header, then one JSON object per log line (step, train_loss, val_loss
  when evaluated, lr, tokens_per_s, elapsed_s), appended and flushed line by line;
- ``status.json``: state (a ``RunState``), the run's name and note, pid, step, budget, best val,
  why it failed, written atomically (temp file + fsync + rename);
- ``checkpoint/``: the best-val model (weights, vocabulary, final val/test metrics), and
  ``last/``: the latest state with optimizer and trainer state, which ``resume=True`` continues
  from (``metrics.jsonl`` is first cut back to that step);
- ``trainer.lock``: held by the one live trainer of the run (``minigpt.runs.lock``).

A loss, gradient or validation loss that is not a finite number stops the run as failed with the
reason (or, with ``nonfinite="skip"``, skips that batch): a diverged model is never saved.

The options live in ``minigpt.training.options``, the run-folder writer in ``minigpt.runs.files`` and
device choice in ``minigpt.training.devices``; this module is the loop itself.

The recipe (the defaults in ``options.py``) comes from measurements on a 2-core CPU: a 64-wide,
4-layer, 4-head MiniGPT, batch 128, Muon (lr 0.02) for the matrices inside the blocks and AdamW
(lr 5e-3, betas 0.9/0.99, weight decay 0.1 on matrices only) for the embeddings, head and
vectors; 2% linear warmup then cosine decay to 10% of the peak; MiniGPT batches packed several
words to a row; and an exponential moving average of the weights (decay 0.999) as the model that
is evaluated and kept. ``--optimizer adamw`` trains everything with AdamW, the previous recipe.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from minigpt.checkpoint import (
    CheckpointMeta,
    load_checkpoint,
    load_optimizer_state,
    load_training_weights,
    save_checkpoint,
)
from minigpt.data import IGNORE, Dataset
from minigpt.errors import ConfigError, TrainingDiverged
from minigpt.models.build import build_model, count_parameters
from minigpt.runs.files import BEST_DIR, LAST_DIR, RunWriter, truncate_metrics, write_run_config
from minigpt.runs.lock import RunLock
from minigpt.runs.schema import RunState, check_name_and_note
from minigpt.training import cpu_policy, distributed
from minigpt.training.devices import autocast_for, resolve_device
from minigpt.training.ema import WeightAverage
from minigpt.training.options import TrainConfig, load_run_config
from minigpt.training.schedule import evaluate, lr_at, make_optimizer
from minigpt.training.session import (
    StopFlag,
    data_fingerprint,
    data_for_run,
    previous_status,
    refuse_changed_data,
    refuse_paths_not_utf8,
    refuse_too_large,
    resume_checkpoint,
    write_exit,
)

# With nonfinite="skip", this many bad steps in a row mean the weights themselves are gone.
MAX_SKIPPED_IN_A_ROW = 20

# ---------------------------------------------------------------------------- the run


def train(cfg: TrainConfig | None, run_dir: Path | str, resume: bool = False,
          on_log: Callable[[dict], None] | None = None, dataset: Dataset | None = None,
          name: str | None = None, note: str | None = None, stop_signals: list[int] | None = None,
          data_changed_ok: bool = False) -> dict:
    """Train into ``run_dir``; return the final status (``RunStatus.to_dict()``).

    ``dataset`` replaces the one described by ``cfg`` (benchmarks use it for other splits).
    ``name`` and ``note`` describe the run in lists (default name: its model and key settings).

    With ``resume=True`` the configuration is read from ``run_dir/config.json`` (``cfg`` may be
    None) and training continues the same schedule from the saved step. ``on_log`` is called
    with every metrics record (the CLI draws its progress line from it).

    One trainer per run: a second one is refused (RunBusyError) while the first lives. Nothing
    in the folder changes until the data, the checkpoint and the model size have been checked.
    ``stop_signals`` collects the signals that arrived before training could listen (the CLI
    catches them from its first line): a stop asked for while the trainer starts still stops it
    cleanly, after one step, as stopped and resumable.
    """
    run_dir = Path(run_dir)
    check_name_and_note(name, note)
    refuse_paths_not_utf8(cfg, run_dir)  # the run's files record them: found now, not after training
    if resume:
        cfg = load_run_config(run_dir)
    elif cfg is None:
        raise ConfigError("a training configuration is needed unless resuming")
    else:
        cfg.validate()
    if cfg.data is not None:  # stored absolute: eval and --resume work from any folder
        cfg = dataclasses.replace(cfg, data=str(Path(cfg.data).expanduser().resolve()))
    world = distributed.join(resolve_device(cfg.device).type)
    try:
        if not world.is_main:  # the other ranks of a data-parallel run write nothing
            source = resume_checkpoint(run_dir) if resume else None
            with StopFlag(stop_signals) as stop:
                result = _train(cfg, _Silent(run_dir), source, stop, dataset or data_for_run(cfg, source), world)
        else:
            run_dir.mkdir(parents=True, exist_ok=True)
            with RunLock(run_dir):  # first: a run another trainer is writing is refused as such
                source = resume_checkpoint(run_dir) if resume else None
                result = _train_main(cfg, run_dir, source, on_log, dataset, name, note, world, stop_signals,
                                     data_changed_ok)
        # Leave together: a rank that tore its process group down while rank 0 was still saving
        # could abort in gloo's teardown ("terminate called without an active exception").
        distributed.barrier(world)
        return result
    finally:
        distributed.leave(world)


def _train_main(cfg: TrainConfig, run_dir: Path, source: CheckpointMeta | None, on_log, dataset: Dataset | None,
                name: str | None, note: str | None, world: distributed.World,
                stop_signals: list[int] | None = None, data_changed_ok: bool = False) -> dict:
    """Rank 0 (or the only process), holding the run's lock: check, then write and train."""
    previous = previous_status(run_dir) if source is not None else None
    data = dataset or data_for_run(cfg, source)
    fingerprint = data_fingerprint(cfg) if dataset is None else None
    if fingerprint is not None:
        refuse_changed_data(cfg, previous, fingerprint, data_changed_ok)
    if source is None:
        refuse_too_large(cfg, data)
        write_run_config(run_dir, cfg.to_dict())
    else:
        truncate_metrics(run_dir, int(source.state.get("step", 0)))
    run = RunWriter(cfg, run_dir, on_log, previous=previous, name=name, note=note, data_fingerprint=fingerprint)
    try:
        run.write_status(world_size=world.size)
        with StopFlag(stop_signals) as stop:
            return _train(cfg, run, source, stop, data, world)
    except BaseException as e:
        write_exit(run, e)
        raise
    finally:
        run.close()


def _to_device(device: torch.device, x, y, extra: dict):
    """Move a batch; on CUDA through pinned memory, so the copy overlaps the GPU's work."""
    if device.type != "cuda":
        return x, y, extra
    move = lambda t: t.pin_memory().to(device, non_blocking=True)  # noqa: E731
    return move(x), move(y), {k: move(v) for k, v in extra.items()}


class _Silent:
    """The run writer of a rank other than 0: same interface, writes nothing."""

    def __init__(self, run_dir: Path):
        self.dir, self.status = Path(run_dir), {}

    def log(self, record: dict) -> None:
        pass

    def write_status(self, force: bool = True, **changes) -> None:
        self.status.update(changes)

    def close(self) -> None:
        pass


def _train(cfg: TrainConfig, run: RunWriter, source: CheckpointMeta | None, stop: StopFlag, data: Dataset,
           world: distributed.World = distributed.SINGLE) -> dict:
    device = resolve_device(cfg.device)
    if device.type == "cuda" and world.distributed:
        torch.cuda.set_device(world.local_rank)
        device = torch.device("cuda", world.local_rank)
    governor = None
    if device.type == "cpu":
        # Processes of one machine share its cores (LOCAL_WORLD_SIZE is set by torchrun).
        cores = max(1, cpu_policy.physical_cores() // int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
        policy = cpu_policy.policy_in_use(cores)
        policy = dataclasses.replace(policy, threads=min(policy.threads, cores))
        torch.set_num_threads(policy.threads)
        governor = cpu_policy.ThreadGovernor(cores)  # the thread count follows the machine's load
        run.write_status(cpu_policy=policy.describe())
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    ckpt = load_checkpoint(source.path, device="cpu") if source is not None else None
    state: dict = dict(ckpt.state) if ckpt is not None else {}
    torch.manual_seed(cfg.seed)
    if ckpt is not None:
        model = ckpt.model
    else:
        model = build_model(cfg.model, cfg.model_config(data.vocab.size, data.block_size))
    model.to(device)
    n_params = count_parameters(model)
    train_config = cfg.to_dict()
    run.write_status(n_params=n_params, device=str(device), block_size=data.block_size)

    def save(where: str, metrics: dict, optimizer, st: dict, kept=None, training=None) -> None:
        save_checkpoint(run.dir / where, kept if kept is not None else model, data.vocab,
                        train_config=train_config, metrics=metrics, optimizer=optimizer, state=st,
                        training_model=training)

    if cfg.model == "bigram":
        return _fit_bigram(cfg, run, model, data, device, save)

    # The average is what gets evaluated and saved; a resumed run's checkpoint holds the average
    # as its model and the raw weights beside it.
    average = WeightAverage(model, cfg.ema) if cfg.ema > 0 else None
    if ckpt is not None:
        load_training_weights(ckpt.path, model)
    optimizer = make_optimizer(model, cfg, device)
    if ckpt is not None:
        load_optimizer_state(ckpt.path, optimizer)
    kept = average.model if average is not None else model
    net = model  # what the step runs: the model, compiled and/or wrapped for data parallelism
    if cfg.compile:
        net = torch.compile(net)
    if world.distributed:
        net = torch.nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None)
    step = int(state.get("step", 0))
    elapsed_before = float(state.get("elapsed_s", 0.0))
    best_val = state.get("best_val")
    best_step = state.get("best_step")
    run.write_status(step=step, best_val=best_val)

    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
    if step:
        torch.manual_seed(cfg.seed * 1_000_003 + step)  # dropout masks after a resume
    n_train = len(data.train)
    # Names pack several to a row (the MLP's window would reach across packed words); text
    # windows are full already.
    packed = cfg.pack and model.kind == "gpt" and cfg.data_format == "lines"
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
        if not world.is_main:
            return  # rank 0 evaluates and saves; the others go on to the next collective
        val = evaluate(kept, data.val, device, dtype=cfg.dtype)
        if not math.isfinite(val):  # never kept, never the best: the last good checkpoints stay
            raise TrainingDiverged(f"training diverged: the validation loss became {val} at step {step}; "
                                   f"try a lower --lr (checkpoints saved before stay usable)")
        record["val_loss"] = round(val, 5)
        raw = model if average is not None else None
        if best_val is None or val < best_val:
            best_val, best_step = val, step
            save(BEST_DIR, {"val_loss": val, "step": step}, optimizer, trainer_state(), kept, raw)
        save(LAST_DIR, {"val_loss": val, "step": step}, optimizer, trainer_state(), kept, raw)
        model.train()

    stopped = False
    skipped = skipped_in_a_row = 0  # steps whose loss or gradients were not finite (nonfinite="skip")
    first_step = step + 1
    saved_step = step if ckpt is not None else -1
    finished = done()
    while not finished:
        lr = lr_at(cfg, progress(), step, cfg.steps)
        for g in optimizer.param_groups:
            g["lr"] = lr
        # Every rank draws the same global batch and keeps its share (see distributed.py).
        idx = distributed.shard(torch.randint(n_train, (cfg.batch_size,), generator=gen), world)
        if packed:  # several words to a row, kept apart by a mask: same loss, ~1/3 less compute
            b = data.train.packed_batch(idx)
            x, y, extra = b.x, b.y, {"positions": b.positions, "segments": b.segments}
        else:
            (x, y), extra = data.train.batch(idx), {}
        local_tokens = int((y != IGNORE).sum())
        total_tokens = distributed.global_tokens(local_tokens, world, device)
        x, y, extra = _to_device(device, x, y, extra)
        with autocast_for(device, cfg.dtype):
            _, loss = net(x, y, **extra)
        optimizer.zero_grad(set_to_none=True)
        distributed.scaled_loss(loss, local_tokens, total_tokens, world).backward()
        # The norm is computed (clipped or not) to see a non-finite gradient before it reaches the
        # weights: it is the same on every rank (gradients are averaged first), so every rank
        # decides alike. Loss and norm come back to the CPU in one sync.
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip or math.inf)
        loss_value, norm_value = torch.stack([loss.detach().float(), norm.detach().float()]).tolist()
        step += 1
        if math.isfinite(loss_value) and math.isfinite(norm_value):
            optimizer.step()
            if average is not None:
                average.update(model, step - 1)
            skipped_in_a_row = 0
            interval_loss += loss_value * local_tokens  # a token-weighted sum, so ranks add up
            interval_n += local_tokens
        else:
            skipped, skipped_in_a_row = skipped + 1, skipped_in_a_row + 1
            if cfg.nonfinite != "skip" or skipped_in_a_row > MAX_SKIPPED_IN_A_ROW:
                what = f"loss became {loss_value}" if not math.isfinite(loss_value) else f"gradients became {norm_value}"
                in_a_row = f" ({skipped_in_a_row} steps in a row)" if skipped_in_a_row > 1 else ""
                raise TrainingDiverged(f"training diverged: the {what} at step {step}{in_a_row} with learning rate "
                                       f"{lr:.3g}; try a lower --lr (checkpoints saved before stay usable)")
            optimizer.zero_grad(set_to_none=True)  # skip this batch: the weights stay as they were
        interval_tokens += local_tokens
        # One agreement per step: a time budget or a signal on any rank stops every rank here.
        finished, stopping = distributed.agree([done(), stop.signal is not None], world, device)
        is_eval = step % cfg.eval_interval == 0 or finished or stopping
        if step % cfg.log_interval == 0 or is_eval or step == first_step:
            loss_sum, n_tokens, all_tokens = distributed.sum_across([interval_loss, interval_n, interval_tokens],
                                                                    world, device)
            t = time.monotonic()
            record = {"step": step, "lr": lr, "tokens_per_s": round(all_tokens / max(t - interval_t, 1e-9), 1),
                      "elapsed_s": round(elapsed(), 3)}
            if n_tokens:  # (none when every step of the interval was skipped)
                record["train_loss"] = round(loss_sum / n_tokens, 5)
            if skipped:
                record["skipped_steps"] = skipped
            if cfg.compile and step == first_step:
                record["tokens_per_s"] = None  # compilation: left out of the throughput
                record["compile_s"] = round(t - interval_t, 2)
            if governor is not None:
                threads = governor.check()
                if threads is not None and threads != torch.get_num_threads():
                    torch.set_num_threads(threads)
                record["threads"] = torch.get_num_threads()
            if is_eval:
                eval_and_keep(record)
                saved_step = step
            run.log(record)
            run.write_status(force=is_eval, step=step, best_val=best_val)
            interval_t, interval_tokens, interval_loss, interval_n = time.monotonic(), 0, 0.0, 0
        # A signal that arrived while this step was logged stops a single process now; ranks of a
        # data-parallel run only stop together, at the next step's agreement.
        if stopping or (not world.distributed and stop.signal is not None):
            stopped = True
            break
    if not world.is_main:
        return {"state": str(RunState.STOPPED if stopped else RunState.FINISHED), "step": step}
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
    return _finish(run, RunState.STOPPED if stopped else RunState.FINISHED, step, best_val, val, test)


def _finish(run: RunWriter, state: RunState, step: int, best_val, val: float, test: float) -> dict:
    run.write_status(state=state, step=step, best_val=best_val, val_loss=val, test_loss=test)
    return run.status.to_dict()


def _fit_bigram(cfg, run: RunWriter, model, data: Dataset, device, save) -> dict:
    run.write_status(total_steps=1, time_budget_s=None)
    t0 = time.monotonic()
    model.fit(data.train.x.to(device), data.train.y.to(device))
    val = evaluate(model, data.val, device)
    test = evaluate(model, data.test, device)
    if not math.isfinite(val):
        raise TrainingDiverged(f"the validation loss is {val}: with smoothing {cfg.smoothing:g}, a pair of "
                               f"characters never seen in training gets probability 0; use smoothing > 0")
    tokens = int((data.train.y != IGNORE).sum())
    el = time.monotonic() - t0
    run.log({"step": 1, "train_loss": round(evaluate(model, data.train, device), 5), "val_loss": round(val, 5),
             "lr": 0.0, "tokens_per_s": round(tokens / max(el, 1e-9), 1), "elapsed_s": round(el, 3)})
    metrics = {"val_loss": val, "test_loss": test, "step": 1, "n_params": count_parameters(model),
               "steps_done": 1, "elapsed_s": round(el, 3), "device": str(device)}
    st = {"step": 1, "elapsed_s": el, "best_val": val, "best_step": 1}
    save(BEST_DIR, metrics, None, st)
    save(LAST_DIR, metrics, None, st)
    return _finish(run, RunState.FINISHED, 1, val, val, test)
