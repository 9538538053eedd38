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
device choice in ``minigpt.training.devices``; this module is the loop itself (``_train``): the
train step, evaluate-and-save every ``eval_interval`` steps, a log record every ``log_interval``,
the CPU's thread count re-tuned, a snapshot for the scrubber, and the stop. Each is a named step of
``Trainer`` (``minigpt.training.trainer``), which holds the run's state.

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
import time
from collections.abc import Callable
from pathlib import Path

from minigpt.checkpoint import CheckpointMeta
from minigpt.data import IGNORE, Dataset
from minigpt.errors import ConfigError, TrainingDiverged
from minigpt.models.build import count_parameters
from minigpt.runs.files import BEST_DIR, LAST_DIR, RunWriter, truncate_metrics, write_run_config
from minigpt.runs.insight import truncate_insight
from minigpt.runs.lock import RunLock
from minigpt.runs.schema import RunState, check_name_and_note
from minigpt.runs.stop import StopFlag
from minigpt.training import distributed
from minigpt.training.devices import resolve_device
from minigpt.training.options import TrainConfig, load_run_config
from minigpt.training.schedule import evaluate
from minigpt.training.session import (
    data_fingerprint,
    data_for_run,
    previous_status,
    refuse_changed_data,
    refuse_paths_not_utf8,
    refuse_too_large,
    resume_checkpoint,
    write_exit,
)
from minigpt.training.trainer import Trainer

# ---------------------------------------------------------------------------- the run


def train(cfg: TrainConfig | None, run_dir: Path | str, resume: bool = False,
          on_log: Callable[[dict], None] | None = None, dataset: Dataset | None = None,
          name: str | None = None, note: str | None = None, stop_signals: list[int] | None = None,
          data_changed_ok: bool = False, group: str | None = None) -> dict:
    """Train into ``run_dir``; return the final status (``RunStatus.to_dict()``).

    ``dataset`` replaces the one described by ``cfg`` (benchmarks use it for other splits).
    ``name`` and ``note`` describe the run in lists (default name: its model and key settings).
    ``group`` names the seed group the run belongs to (``minigpt train --seeds N``).

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
                                     data_changed_ok, group)
        # Leave together: a rank that tore its process group down while rank 0 was still saving
        # could abort in gloo's teardown ("terminate called without an active exception").
        world.barrier()
        return result
    finally:
        world.leave()


def _train_main(cfg: TrainConfig, run_dir: Path, source: CheckpointMeta | None, on_log, dataset: Dataset | None,
                name: str | None, note: str | None, world: distributed.World,
                stop_signals: list[int] | None = None, data_changed_ok: bool = False,
                group: str | None = None) -> dict:
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
        truncate_insight(run_dir, int(source.state.get("step", 0)))
    run = RunWriter(cfg, run_dir, on_log, previous=previous, name=name, note=note, data_fingerprint=fingerprint)
    try:
        run.write_status(world_size=world.size, group=group or (previous.group if previous else None))
        with StopFlag(stop_signals) as stop:
            return _train(cfg, run, source, stop, data, world)
    except BaseException as e:
        write_exit(run, e)
        raise
    finally:
        run.close()


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
    """Set up, then train step by step until the budget is spent or a stop is asked for."""
    trainer = Trainer(cfg, run, source, stop, data, world)
    trainer.setup()
    if cfg.model == "bigram":  # counted, not trained: one pass over the data
        return _fit_bigram(cfg, run, trainer.model, data, trainer.device, trainer.save)
    trainer.setup_optimizer()
    try:
        while not trainer.finished:
            trainer.train_step()  # batch, forward, backward, clip, optimizer step
            val_loss = None
            if trainer.is_eval():  # every eval_interval steps and the last: the best model is kept
                val_loss = trainer.evaluate_and_save()
            if trainer.should_log():  # every log_interval steps and every evaluation
                trainer.log(val_loss)
                trainer.retune_threads()  # the machine's other work may have changed since
            trainer.keep_snapshot()
            if trainer.should_stop():
                trainer.stopped = True
                break
        return trainer.finish()
    finally:
        trainer.close_probes()


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
    run.write_status(state=RunState.FINISHED, step=1, best_val=val, val_loss=val, test_loss=test)
    return run.status.to_dict()
