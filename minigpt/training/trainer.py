"""The trainer: one run's state and its named steps, which ``_train`` in ``minigpt.training.loop``
calls in order.

Read it the way nanoGPT's ``train.py`` reads: ``setup`` (device, model, where the run stands),
``setup_optimizer``, then per step ``train_step`` (batch, forward, backward, clip, optimizer
step), ``evaluate_and_save`` every ``eval_interval`` steps, ``log`` every ``log_interval``,
``retune_threads`` and ``keep_snapshot``, and ``finish`` (the best checkpoint's final val and
test losses). The step reads as one process's: what spans the processes of a data-parallel run
is the world's (``minigpt.training.distributed``), and what follows the step (the weight average,
the panel's probes, snapshots) is the observers' (``StepObservers`` in ``minigpt.training.insight``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

import torch

from minigpt.checkpoint import (
    CheckpointMeta,
    load_checkpoint,
    load_optimizer_state,
    load_training_weights,
    save_checkpoint,
)
from minigpt.data import IGNORE, Dataset
from minigpt.errors import TrainingDiverged
from minigpt.models.build import build_model, count_parameters
from minigpt.runs.files import BEST_DIR, LAST_DIR, RunWriter
from minigpt.runs.schema import RunState
from minigpt.runs.stop import StopFlag
from minigpt.training import cpu_policy
from minigpt.training.devices import autocast_for, compile_unsupported, resolve_device
from minigpt.training.distributed import World
from minigpt.training.ema import WeightAverage
from minigpt.training.insight import LayerProbe, SnapshotKeeper, StepObservers, SurpriseProbe, reference_losses
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import (
    apply_lr,
    batch_size_at,
    evaluate,
    lr_at,
    make_optimizer,
    muon_momentum_at,
)
from minigpt.training.shapes import FixedShape

# With nonfinite="skip", this many bad steps in a row mean the weights themselves are gone.
MAX_SKIPPED_IN_A_ROW = 20


class Trainer:
    """One training run, read top to bottom: ``setup`` (device, model, optimizer), then
    ``train_step`` until the budget is spent, with ``evaluate_and_save``, ``log``,
    ``retune_threads`` and ``keep_snapshot`` between steps, and ``finish`` (the final numbers)."""

    def __init__(self, cfg: TrainConfig, run: RunWriter, source: CheckpointMeta | None, stop: StopFlag,
                 data: Dataset, world: World):
        self.cfg, self.run, self.source, self.stop, self.data, self.world = cfg, run, source, stop, data, world
        self.governor = None  # on a CPU, the thread count follows the machine's load
        self.stopped = self.finished = self.stopping = False
        self.skipped = self.skipped_in_a_row = 0  # steps whose loss or gradients were not finite
        self.observers: StepObservers | None = None  # set up with the optimizer

    # ------------------------------------------------------------------------ setup

    def setup(self) -> None:
        """The device, the model (new, or the checkpoint's), and where the run stands."""
        cfg, run = self.cfg, self.run
        self.device = self._choose_device()
        self.ckpt = load_checkpoint(self.source.path, device="cpu") if self.source is not None else None
        state: dict = dict(self.ckpt.state) if self.ckpt is not None else {}
        torch.manual_seed(cfg.seed)
        if self.ckpt is not None:
            self.model = self.ckpt.model
        else:
            self.model = build_model(cfg.model, cfg.model_config(self.data.vocab.size, self.data.block_size))
        self.model.to(self.device)
        self.n_params = count_parameters(self.model)
        self.train_config = cfg.to_dict()
        run.write_status(n_params=self.n_params, device=str(self.device), block_size=self.data.block_size)
        if self.world.is_main:  # the loss chart's reference lines, for this run's own data
            run.write_status(**reference_losses(self.data.train, self.data.val, self.data.vocab.size))
        self.step = int(state.get("step", 0))
        self.elapsed_before = float(state.get("elapsed_s", 0.0))
        self.best_val, self.best_step = state.get("best_val"), state.get("best_step")

    def _choose_device(self) -> torch.device:
        device = resolve_device(self.cfg.device)
        if device.type == "cuda" and self.world.distributed:
            torch.cuda.set_device(self.world.local_rank)
            device = torch.device("cuda", self.world.local_rank)
        if device.type == "cpu":
            # Processes of one machine share its cores (LOCAL_WORLD_SIZE is set by torchrun).
            cores = max(1, cpu_policy.physical_cores() // int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
            policy = cpu_policy.policy_in_use(cores)
            policy = dataclasses.replace(policy, threads=min(policy.threads, cores))
            torch.set_num_threads(policy.threads)
            self.governor = cpu_policy.ThreadGovernor(cores)
            self.run.write_status(cpu_policy=policy.describe())
        if device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        return device

    def setup_optimizer(self) -> None:
        """The weight average, the optimizer (both restored on resume), the network the steps run,
        and the batch generator, seeded by the step so that a resumed run draws what it would have."""
        cfg, model, ckpt = self.cfg, self.model, self.ckpt
        # The average is what gets evaluated and saved; a resumed run's checkpoint holds the
        # average as its model and the raw weights beside it.
        self.average = WeightAverage(model, cfg.ema) if cfg.ema > 0 else None
        if ckpt is not None:
            load_training_weights(ckpt.path, model)
        self.optimizer = make_optimizer(model, cfg, self.device)
        if ckpt is not None:
            load_optimizer_state(ckpt.path, self.optimizer)
        self.kept = self.average.model if self.average is not None else model
        self.net = model  # what the step runs: the model, compiled and/or wrapped for data parallelism
        # A compiled model is compiled again for every new batch shape: batches of names are then
        # padded to one fixed shape (shapes.py), and shapes are not treated as dynamic.
        self.compile_off = compile_unsupported(self.device) if cfg.compile else None
        compiling = cfg.compile and self.compile_off is None
        self.fixed_shape = FixedShape(self.data.block_size) if compiling and cfg.data_format == "lines" else None
        if compiling:
            self.net = torch.compile(self.net, dynamic=False)
        self.net = self.world.wrap(self.net, self.device)  # DDP in a data-parallel run
        self.run.write_status(step=self.step, best_val=self.best_val)
        self.gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + self.step)
        if self.step:
            torch.manual_seed(cfg.seed * 1_000_003 + self.step)  # dropout masks after a resume
        # Names pack several to a row (the MLP's window would reach across packed words); text
        # windows are full already.
        self.packed = cfg.pack and model.kind == "gpt" and cfg.data_format == "lines"
        model.train()
        self.t0 = self.interval_t = self.stepped_at = time.monotonic()
        self.interval_tokens, self.interval_loss, self.interval_n = 0, 0.0, 0
        self.first_step = self.step + 1
        self.saved_step = self.step if ckpt is not None else -1
        self.finished = self.done()
        self.setup_probes()

    def setup_probes(self) -> None:
        """What follows the steps: the weight average, and what the panel's inside views read
        (rank 0 only): the surprise of a few validation items at each evaluation, every
        ``layer_every`` steps each matrix's update size, and snapshots for the step scrubber."""
        if not self.world.is_main:
            self.observers = StepObservers(self.model, self.average)
            return
        surprise = SurpriseProbe(self.run.dir, self.data.val, self.data.vocab, self.device)
        snapshots = SnapshotKeeper(self.run.dir, self._save_snapshot)
        snapshots.forget_after(self.step)
        layers = LayerProbe(self.run.dir, self.model, self.optimizer, self.cfg.layer_every) if self.cfg.layer_every else None
        self.observers = StepObservers(self.model, self.average, surprise, layers, snapshots)

    # ------------------------------------------------------------------------ where the run stands

    def elapsed(self, now: float | None = None) -> float:
        return self.elapsed_before + (time.monotonic() if now is None else now) - self.t0

    def progress(self) -> float:
        """The fraction of the budget done (steps or seconds): the schedule reads it."""
        if self.cfg.steps is not None:
            return self.step / self.cfg.steps
        return self.elapsed() / self.cfg.time_s

    def done(self) -> bool:
        return self.step >= self.cfg.steps if self.cfg.steps is not None else self.elapsed() >= self.cfg.time_s

    def trainer_state(self) -> dict:
        return {"step": self.step, "elapsed_s": round(self.elapsed(), 3), "best_val": self.best_val,
                "best_step": self.best_step}

    # ------------------------------------------------------------------------ one step

    def next_batch(self):
        """The step's batch on the device: every rank draws the same global batch and keeps its
        share (see distributed.py)."""
        data, cfg = self.data, self.cfg
        n = batch_size_at(cfg, self.progress())
        idx = self.world.shard(torch.randint(len(data.train), (n,), generator=self.gen))
        if self.packed:  # several words to a row, kept apart by a mask: same loss, ~1/3 less compute
            b = data.train.packed_batch(idx)
            x, y, extra = b.x, b.y, {"positions": b.positions, "segments": b.segments}
        else:
            (x, y), extra = data.train.batch(idx), {}
        if self.fixed_shape is not None:
            x, y, extra = self.fixed_shape(x, y, extra)
        return x, y, extra

    def train_step(self) -> None:
        """Forward, backward, clip, and (when loss and gradients are finite) the optimizer's step."""
        cfg, world = self.cfg, self.world
        self.lr = lr_at(cfg, self.progress(), self.step, cfg.steps)
        apply_lr(self.optimizer, self.lr, muon_momentum_at(cfg, self.step))
        x, y, extra = self.next_batch()
        local_tokens = int((y != IGNORE).sum())
        total_tokens = world.global_tokens(local_tokens, self.device)  # the loss is a mean over these
        x, y, extra = _to_device(self.device, x, y, extra)
        with autocast_for(self.device, cfg.dtype):
            _, loss = self.net(x, y, **extra)
        self.optimizer.zero_grad(set_to_none=True)
        world.scaled_loss(loss, local_tokens, total_tokens).backward()
        # The norm is computed (clipped or not) to see a non-finite gradient before it reaches the
        # weights: it is the same on every rank (gradients are averaged first), so every rank
        # decides alike. Loss and norm come back to the CPU in one sync.
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip or math.inf)
        loss_value, norm_value = torch.stack([loss.detach().float(), norm.detach().float()]).tolist()
        self.step += 1
        updated = math.isfinite(loss_value) and math.isfinite(norm_value)
        self.observers.before_update(self.step)
        if updated:
            self.optimizer.step()
            self.skipped_in_a_row = 0
            self.interval_loss += loss_value * local_tokens  # a token-weighted sum, so ranks add up
            self.interval_n += local_tokens
        else:
            self._skip_or_fail(loss_value, norm_value)
        self.observers.after_update(self.step, updated)  # the weight average follows each update
        self.interval_tokens += local_tokens
        # One agreement per step: a time budget or a signal on any rank stops every rank here.
        self.finished, self.stopping = world.agree([self.done(), self.stop.signal is not None], self.device)
        self.stepped_at = time.monotonic()  # the interval's training time ends here, before any evaluation

    def _skip_or_fail(self, loss_value: float, norm_value: float) -> None:
        """A loss or gradient that is not finite: skip the batch (``nonfinite="skip"``, up to
        MAX_SKIPPED_IN_A_ROW in a row) or stop the run as diverged."""
        self.skipped, self.skipped_in_a_row = self.skipped + 1, self.skipped_in_a_row + 1
        if self.cfg.nonfinite != "skip" or self.skipped_in_a_row > MAX_SKIPPED_IN_A_ROW:
            what = (f"loss became {loss_value}" if not math.isfinite(loss_value)
                    else f"gradients became {norm_value}")
            in_a_row = f" ({self.skipped_in_a_row} steps in a row)" if self.skipped_in_a_row > 1 else ""
            raise TrainingDiverged(f"training diverged: the {what} at step {self.step}{in_a_row} with learning "
                                   f"rate {self.lr:.3g}; try a lower --lr (checkpoints saved before stay usable)")
        self.optimizer.zero_grad(set_to_none=True)  # skip this batch: the weights stay as they were

    def should_stop(self) -> bool:
        """A signal that arrived while this step was logged stops a single process now; ranks of a
        data-parallel run only stop together, at the next step's agreement."""
        return self.stopping or (not self.world.distributed and self.stop.signal is not None)

    # ------------------------------------------------------------------------ evaluate, save, log

    def is_eval(self) -> bool:
        return self.step % self.cfg.eval_interval == 0 or self.finished or self.stopping

    def should_log(self) -> bool:
        """Every ``log_interval`` steps, the first step, and every evaluation (its record carries
        the val loss)."""
        return self.step % self.cfg.log_interval == 0 or self.is_eval() or self.step == self.first_step

    def evaluate_and_save(self) -> float | None:
        """Rank 0 evaluates the kept model (the average) on the validation split, saves it as the
        best when it is, and always as ``last/`` (what a resume continues from); returns the val
        loss. The other ranks go on (None)."""
        if not self.world.is_main:
            return None
        val = evaluate(self.kept, self.data.val, self.device, dtype=self.cfg.dtype)
        if not math.isfinite(val):  # never kept, never the best: the last good checkpoints stay
            raise TrainingDiverged(f"training diverged: the validation loss became {val} at step {self.step}; "
                                   f"try a lower --lr (checkpoints saved before stay usable)")
        self.observers.after_evaluation(self.kept, self.step)
        raw = self.model if self.average is not None else None
        metrics = {"val_loss": val, "step": self.step}
        if self.best_val is None or val < self.best_val:
            self.best_val, self.best_step = val, self.step
            self.save(BEST_DIR, metrics, self.optimizer, self.trainer_state(), self.kept, raw)
        self.save(LAST_DIR, metrics, self.optimizer, self.trainer_state(), self.kept, raw)
        self.saved_step = self.step
        self.model.train()
        return val

    def log(self, val_loss: float | None = None) -> None:
        """One metrics record for the interval since the last one, with this step's val loss when
        it was evaluated. The interval's time ends with its last step: evaluation is not training."""
        cfg, step, t = self.cfg, self.step, self.stepped_at
        loss_sum, n_tokens, all_tokens = self.world.sum_across(
            [self.interval_loss, self.interval_n, self.interval_tokens], self.device)
        record = {"step": step, "lr": self.lr, "tokens_per_s": round(all_tokens / max(t - self.interval_t, 1e-9), 1),
                  "elapsed_s": round(self.elapsed(t), 3)}
        if n_tokens:  # (none when every step of the interval was skipped)
            record["train_loss"] = round(loss_sum / n_tokens, 5)
        if self.skipped:
            record["skipped_steps"] = self.skipped
        if cfg.compile and step == self.first_step and self.compile_off:
            record["compile_off"] = self.compile_off  # asked for, not possible here: trained eager
        elif cfg.compile and step == self.first_step:
            record["tokens_per_s"] = None  # compilation: left out of the throughput
            record["compile_s"] = round(t - self.interval_t, 2)
        if self.governor is not None:
            record["threads"] = torch.get_num_threads()  # what the interval trained with
        if self.device.type == "cuda":  # the machine line's memory where NVML cannot be imported
            record["cuda_mem_mb"] = round(torch.cuda.memory_allocated(self.device) / 2**20, 1)
            record["cuda_peak_mb"] = round(torch.cuda.max_memory_allocated(self.device) / 2**20, 1)
        if val_loss is not None:
            record["val_loss"] = round(val_loss, 5)
        self.run.log(record)
        self.run.write_status(force=self.is_eval(), step=step, best_val=self.best_val)
        self.interval_t, self.interval_tokens, self.interval_loss, self.interval_n = time.monotonic(), 0, 0.0, 0

    def retune_threads(self) -> None:
        """On a CPU, train with as many threads as the cores other processes leave free: spinning
        threads on a core another process needs slow both down many times over (cpu_policy.py)."""
        if self.governor is None:
            return
        threads = self.governor.check()  # None until it is due (every few seconds)
        if threads is not None and threads != torch.get_num_threads():
            torch.set_num_threads(threads)

    def keep_snapshot(self) -> None:
        """The kept model at log-spaced steps and evaluations, for the step scrubber."""
        self.observers.after_step(self.step, self.is_eval())

    def _save_snapshot(self, path, step: int) -> None:
        save_checkpoint(path, self.kept, self.data.vocab, train_config=self.train_config,
                        metrics={"step": step}, optimizer=None, state=self.trainer_state())

    def save(self, where: str, metrics: dict, optimizer, state: dict, kept=None, training=None) -> None:
        save_checkpoint(self.run.dir / where, kept if kept is not None else self.model, self.data.vocab,
                        train_config=self.train_config, metrics=metrics, optimizer=optimizer, state=state,
                        training_model=training)

    # ------------------------------------------------------------------------ the end

    def finish(self) -> dict:
        """Evaluate once more if the last step was not saved, then store the best checkpoint's
        val and test losses with it; returns the final status."""
        state = RunState.STOPPED if self.stopped else RunState.FINISHED
        if not self.world.is_main:
            return {"state": str(state), "step": self.step}
        run, step, device = self.run, self.step, self.device
        if self.saved_step != step or not (run.dir / BEST_DIR).exists():
            # a stop arrived after this step's log line, or nothing was evaluated yet
            record = {"step": step, "lr": 0.0, "tokens_per_s": 0.0, "elapsed_s": round(self.elapsed(), 3)}
            record["val_loss"] = round(self.evaluate_and_save(), 5)
            run.log(record)
        best = load_checkpoint(run.dir / BEST_DIR, device=device)
        val = evaluate(best.model, self.data.val, device, dtype=self.cfg.dtype)
        test = evaluate(best.model, self.data.test, device, dtype=self.cfg.dtype)
        metrics = {"val_loss": val, "test_loss": test, "step": best.state.get("step", self.best_step),
                   "n_params": self.n_params, "steps_done": step, "elapsed_s": round(self.elapsed(), 3),
                   "device": str(device)}
        self.model.load_state_dict(best.model.state_dict())
        save_checkpoint(run.dir / BEST_DIR, self.model, self.data.vocab, train_config=self.train_config,
                        metrics=metrics, optimizer=None, state=best.state)  # resume reads last/
        self.close_probes()
        run.write_status(state=state, step=step, best_val=self.best_val, val_loss=val, test_loss=test)
        return run.status.to_dict()

    def close_probes(self) -> None:
        if self.observers is not None:
            self.observers.close()


def _to_device(device: torch.device, x, y, extra: dict):
    """Move a batch; on CUDA through pinned memory, so the copy overlaps the GPU's work."""
    if device.type != "cuda":
        return x, y, extra
    move = lambda t: t.pin_memory().to(device, non_blocking=True)  # noqa: E731
    return move(x), move(y), {k: move(v) for k, v in extra.items()}
