"""A stand-in for ``minigpt train`` that imports no torch: the run-folder protocol at a step rate a
test sets, for tests where the trainer is not what they check (a scheduler, the app's controls).

    python -m tests.helpers.minigpt_fake_trainer train --config RUN/config.json --out RUN [--name N] [--quiet]
    python -m tests.helpers.minigpt_fake_trainer train --resume RUN [--quiet]
    python -m tests.helpers.minigpt_fake_trainer train --steps 100 --eval-interval 20 --out RUN   (any option flag)

It writes through the real writers (``minigpt.runs.files.RunWriter``, ``minigpt.runs.lock.RunLock``)
and stops through the real ``StopFlag``: a status at start, a metrics record every
``log_interval`` steps, at each evaluation (``eval_interval``, a stop, the end) a checkpoint in
``checkpoint/`` and ``last/``, and the final status (finished, stopped, or failed with its reason).
Its command line names minigpt and says ``train``, and it holds the run's lock: ``minigpt stop``'s
proof (``minigpt.runs.lock.proven_trainer``) accepts it as it is.

The checkpoint is a real, loadable one: a bigram count table of the run's data, written by hand
in the safetensors format (the experiment's extras and ``minigpt eval`` can load it). Its losses
are a made-up falling curve, not measured: where a test samples from or judges the model, it uses
the real trainer.

What a test sets, through the environment (``workers.TRAINER_MODULE_VARIABLE`` selects this module):
``MINIGPT_FAKE_STEP_S``, seconds one step takes (default 0.01); ``MINIGPT_FAKE_FAIL_AT``, a step at
which the run fails as a crashed trainer would (its traceback on stderr, a failed status).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import time
from array import array
from pathlib import Path

from minigpt.errors import TutorError
from minigpt.runs.stop import StopFlag

STEP_S_VARIABLE, FAIL_AT_VARIABLE = "MINIGPT_FAKE_STEP_S", "MINIGPT_FAKE_FAIL_AT"
MODULE = "tests.helpers.minigpt_fake_trainer"


class FakeCrash(RuntimeError):
    """The failure a test asked for (``MINIGPT_FAKE_FAIL_AT``)."""


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, dict]:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("command", choices=["train"])
    parser.add_argument("--config", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--resume", nargs="?", const="", default=None)
    parser.add_argument("--name")
    parser.add_argument("--note")
    parser.add_argument("--quiet", "-q", action="store_true")
    # the alert flags the app passes (its trainers say nothing: the app watching them does)
    parser.add_argument("--notify", "--no-notify", dest="notify", action="store_true")
    parser.add_argument("--on-event")
    parser.add_argument("--target-loss", type=float)
    known, rest = parser.parse_known_args(argv)
    return known, _option_flags(rest)


def _option_flags(rest: list[str]) -> dict:
    """The training options given as flags (``--steps 40``, ``--no-pack``), typed as the CLI types them."""
    from minigpt.training.options import OPTIONS

    by_flag = {o.cli_flag: o for o in OPTIONS}
    given, i = {}, 0
    while i < len(rest):
        flag = rest[i]
        if flag.startswith("--no-") and "--" + flag[5:] in by_flag:
            given[by_flag["--" + flag[5:]].name], i = False, i + 1
            continue
        opt = by_flag.get(flag)
        if opt is None:
            raise SystemExit(f"{MODULE}: unknown option {flag}")
        if opt.kind is bool:
            given[opt.name], i = True, i + 1
            continue
        given[opt.name], i = opt.kind(rest[i + 1]), i + 2
    return given


def _config(args: argparse.Namespace, given: dict):
    from minigpt.training.options import TrainConfig, load_config_file, load_run_config

    if args.resume is not None:
        from minigpt.runs.resolve import resolve_run

        run_dir = resolve_run(args.resume or (str(args.out) if args.out is not None else None),
                              none_found="no run to resume")
        return load_run_config(run_dir), Path(run_dir)
    base = load_config_file(args.config) if args.config is not None else TrainConfig()
    cfg = TrainConfig.from_dict({**base.to_dict(), **given})
    if cfg.data is not None:
        cfg.data = str(Path(cfg.data).expanduser().resolve())
    if args.out is None:
        raise SystemExit(f"{MODULE}: give --out (the fake makes no new run folders)")
    return cfg, args.out


# ---------------------------------------------------------------------------- the checkpoint


def _bigram_counts(cfg) -> tuple[list[str], list[float], int]:
    """The vocabulary, the bigram count table and the block size of the run's names file."""
    words = cfg.data_path().read_text(encoding="utf-8").split()
    chars = [".", *sorted(set("".join(words)) - {"."})]
    index = {c: i for i, c in enumerate(chars)}
    size = len(chars)
    counts = [0.0] * (size * size)
    for word in words:
        ids = [0, *(index[c] for c in word), 0]
        for a, b in zip(ids, ids[1:]):
            counts[a * size + b] += 1
    return chars, counts, cfg.block_size or min(max(map(len, words)) + 1, 256)


def _write_safetensors(path: Path, name: str, shape: list[int], values: list[float]) -> None:
    data = array("f", values)
    if sys.byteorder != "little":
        data.byteswap()
    header = json.dumps({name: {"dtype": "F32", "shape": shape, "data_offsets": [0, 4 * len(values)]}},
                        separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(len(header).to_bytes(8, "little") + header + data.tobytes())


def save_checkpoint(folder: Path, cfg, table, metrics: dict, state: dict) -> None:
    """A bigram checkpoint ``minigpt.checkpoint.load_checkpoint`` loads, swapped in as the real save does."""
    chars, counts, block = table
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    _write_safetensors(tmp / "model.safetensors", "counts", [len(chars), len(chars)], counts)
    config = {"format": "minigpt-checkpoint", "format_version": 1, "kind": "bigram",
              "model_config": {"vocab_size": len(chars), "block_size": block, "smoothing": 1.0},
              "vocab": chars, "train_config": cfg.to_dict(), "metrics": metrics, "state": state,
              "weights_sha256": hashlib.sha256((tmp / "model.safetensors").read_bytes()).hexdigest()}
    (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    old = folder.with_name(folder.name + ".old")
    if folder.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.rename(folder, old)
    os.rename(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)


def _resume_state(run_dir: Path) -> dict:
    for name in ("last", "checkpoint"):
        for folder in (run_dir / name, run_dir / f"{name}.old"):
            if (folder / "config.json").exists():
                return json.loads((folder / "config.json").read_text(encoding="utf-8")).get("state") or {}
    raise TutorError(f"{run_dir}: nothing to resume (no checkpoint saved yet)")


# ---------------------------------------------------------------------------- the run


def _loss(step: int, total: int, offset: float = 0.0) -> float:
    """A made-up falling loss curve (3.3 towards 2.0)."""
    return round(2.0 + offset + 1.3 * math.exp(-4 * step / max(total, 1)), 5)


def train(args: argparse.Namespace, given: dict, stop: StopFlag) -> dict:
    from minigpt.runs.files import RunWriter, truncate_metrics, write_run_config
    from minigpt.runs.lock import RunLock
    from minigpt.runs.schema import RunState, read_status

    cfg, run_dir = _config(args, given)
    step_s = float(os.environ.get(STEP_S_VARIABLE, "0.01"))
    fail_at = int(os.environ.get(FAIL_AT_VARIABLE, "0"))
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        previous, state = None, {}
        if args.resume is not None:
            state = _resume_state(run_dir)
            truncate_metrics(run_dir, int(state.get("step", 0)))
            try:
                previous = read_status(run_dir / "status.json")
            except (OSError, TutorError):
                previous = None
        else:
            write_run_config(run_dir, cfg.to_dict())
        table = _bigram_counts(cfg)
        run = RunWriter(cfg, run_dir, None, previous=previous, name=args.name, note=args.note)
        try:
            return _loop(cfg, run, table, state, stop, step_s, fail_at, RunState)
        except BaseException as e:
            reason = "interrupted" if isinstance(e, KeyboardInterrupt) else \
                str(e) if isinstance(e, TutorError) else f"{type(e).__name__}: {e}"
            failed = RunState.STOPPED if isinstance(e, KeyboardInterrupt) else RunState.FAILED
            run.write_status(state=failed, failure_reason=reason)
            raise
        finally:
            run.close()


def _loop(cfg, run, table, state: dict, stop: StopFlag, step_s: float, fail_at: int, RunState) -> dict:
    total = cfg.steps or 10**9
    step = int(state.get("step", 0))
    elapsed_before = float(state.get("elapsed_s", 0.0))
    best_val, best_step = state.get("best_val"), state.get("best_step")
    n_params = _n_params(cfg, len(table[0]), table[2])
    run.write_status(world_size=1, n_params=n_params, device="cpu", block_size=table[2], step=step, best_val=best_val)
    t0 = time.monotonic()

    def elapsed() -> float:
        return round(elapsed_before + time.monotonic() - t0, 3)

    def done() -> bool:
        return step >= cfg.steps if cfg.steps is not None else elapsed() >= cfg.time_s

    first, saved = step + 1, step if state else -1
    stopped = done()
    while not done():
        time.sleep(step_s)
        step += 1
        if step == fail_at:
            raise FakeCrash(f"the fake trainer failed at step {step}, as the test asked ({FAIL_AT_VARIABLE})")
        stopping = stop.signal is not None
        is_eval = step % cfg.eval_interval == 0 or done() or stopping
        if step % cfg.log_interval == 0 or is_eval or step == first:
            record = {"step": step, "lr": cfg.lr, "tokens_per_s": 1000.0, "elapsed_s": elapsed(),
                      "train_loss": _loss(step, total)}
            if is_eval:
                val = _loss(step, total, 0.05)
                record["val_loss"] = val
                if best_val is None or val < best_val:
                    best_val, best_step = val, step
                    save_checkpoint(run.dir / "checkpoint", cfg, table, {"val_loss": val, "step": step},
                                    _state(step, elapsed(), best_val, best_step))
                save_checkpoint(run.dir / "last", cfg, table, {"val_loss": val, "step": step},
                                _state(step, elapsed(), best_val, best_step))
                saved = step
            run.log(record)
            run.write_status(force=is_eval, step=step, best_val=best_val)
        if stopping:
            stopped = True
            break
    if saved != step or not (run.dir / "checkpoint").exists():
        val = _loss(step, total, 0.05)
        run.log({"step": step, "lr": 0.0, "tokens_per_s": 0.0, "elapsed_s": elapsed(), "val_loss": val})
        best_val, best_step = (val, step) if best_val is None or val < best_val else (best_val, best_step)
        for name in ("checkpoint", "last"):
            save_checkpoint(run.dir / name, cfg, table, {"val_loss": val, "step": step},
                            _state(step, elapsed(), best_val, best_step))
    test = round(best_val + 0.02, 5)
    final = RunState.STOPPED if stopped else RunState.FINISHED
    run.write_status(state=final, step=step, best_val=best_val, val_loss=best_val, test_loss=test)
    return run.status.to_dict()


def _n_params(cfg, vocab_size: int, block_size: int) -> int:
    """The size the run's model would have (a sweep's plot spreads its runs by it); the counted
    bigram table for other kinds."""
    if cfg.model == "gpt":
        from minigpt.teaching.params import gpt_total  # (arithmetic, no torch)

        return gpt_total(cfg.model_config(vocab_size, block_size))
    return vocab_size**2


def _state(step: int, elapsed: float, best_val, best_step) -> dict:
    return {"step": step, "elapsed_s": elapsed, "best_val": best_val, "best_step": best_step}


def main(argv: list[str] | None = None) -> int:
    pending: list[int] = []
    import signal

    # As the CLI does: a stop that comes while the trainer starts is remembered, not fatal.
    signal.signal(signal.SIGTERM, lambda signum, _frame: pending.append(signum))
    args, given = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        with StopFlag(pending) as stop:
            status = train(args, given, stop)
    except TutorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{status['state']} at step {status['step']}: {status.get('n_params') or 0:,} parameters on cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
