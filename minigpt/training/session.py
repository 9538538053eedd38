"""What surrounds the training loop: what a run resumes from, its data, the checks made before
anything is written, and the status a run leaves when it ends early.

A run resumes from ``last/`` (the latest evaluation, with the optimizer), or from the best
checkpoint when ``last/`` was never written; a save cut short leaves the previous copy as
``NAME.old``, which counts too. Records of ``metrics.jsonl`` past that checkpoint's step
describe work that is lost: they are dropped, so the charts never show steps going backwards.
"""

from __future__ import annotations

from pathlib import Path

from minigpt.checkpoint import CheckpointMeta, read_checkpoint_meta
from minigpt.errors import ConfigError, DataChangedError, RunError, TutorError
from minigpt.models.build import check_model_size, free_memory_bytes, training_memory_bytes
from minigpt.runs.files import BEST_DIR, CONFIG_FILE, LAST_DIR, STATUS_FILE, RunWriter
from minigpt.runs.schema import RunState, RunStatus, read_json_file, read_status
from minigpt.training.options import TrainConfig, load_data_for


def resume_source(run_dir: Path) -> Path:
    for name in (LAST_DIR, BEST_DIR):
        path = run_dir / name
        if path.exists() or path.with_name(name + ".old").exists():
            return path
    raise ConfigError(f"{run_dir}: nothing to resume (no checkpoint saved yet)")


def resume_checkpoint(run_dir: Path) -> CheckpointMeta:
    """The checkpoint to continue from, read (not loaded) to learn its step and vocabulary."""
    return read_checkpoint_meta(resume_source(run_dir))


def previous_status(run_dir: Path) -> RunStatus | None:
    """The status the resumed run had (its name, note and start carry on); None when missing or
    unreadable (a broken status is replaced by the resumed run's own)."""
    try:
        config = read_json_file(run_dir / CONFIG_FILE, "config.json")
    except (OSError, RunError):
        config = None
    try:
        return read_status(run_dir / STATUS_FILE, config)
    except (OSError, RunError):
        return None


def data_for_run(cfg: TrainConfig, source: CheckpointMeta | None):
    """The run's data; a resumed run keeps its checkpoint's vocabulary and block size."""
    if source is None:
        return load_data_for(cfg)
    return load_data_for(cfg, vocab=source.vocab, block_size=source.model_config.block_size)


_SIZE_FIELD = {"gpt": "d_model", "mlp": "mlp_hidden", "bigram": "model"}  # the option to lower


def refuse_too_large(cfg: TrainConfig, data) -> None:
    """The size rule (``minigpt.models.build``), then the memory a training step would hold against
    the memory this machine has: both refused before anything is allocated."""
    model_config = cfg.model_config(data.vocab.size, data.block_size)
    try:
        n_params = check_model_size(cfg.model, model_config, field=_SIZE_FIELD[cfg.model])
    except ConfigError as e:
        lower = "d_model or n_layers" if cfg.model == "gpt" else "the hidden units" if cfg.model == "mlp" else ""
        raise ConfigError(f"{e}{'; lower ' + lower if lower else ''}", field=e.field) from None
    # Each process holds the weights and its share of the batch (the batch is global).
    processes = _processes_here(cfg)
    need = processes * training_memory_bytes(cfg.model, model_config, -(-cfg.batch_size // processes), n_params,
                                             _tokens_per_item(data))
    have = available_memory_bytes(cfg.device)
    if have is not None and need > have:
        raise ConfigError(f"one training step would hold about {need / 2**30:,.1f} GiB (batch {cfg.batch_size:,} "
                          f"× block {data.block_size:,}), more than the {have / 2**30:,.1f} GiB free here; lower "
                          f"the batch size" + (" or d_model" if cfg.model == "gpt" else ""), field="batch_size")


def _tokens_per_item(data) -> float | None:
    """Positions one item fills in a batch: twice the mean length of a names file (rows are padded
    to their longest), a whole window of a text; None when the data does not say."""
    lengths = getattr(getattr(data, "train", None), "lengths", None)
    if lengths is None or not len(lengths):
        return None
    return 2.0 * float(lengths.float().mean()) + 1


def _processes_here(cfg: TrainConfig) -> int:
    import os

    return int(os.environ.get("LOCAL_WORLD_SIZE", cfg.processes))


def available_memory_bytes(device: str) -> int | None:
    """Memory a run may use now: the GPU's when it trains on one, else what the OS calls available
    (psutil: Linux's MemAvailable, macOS's free and inactive pages); None when unknown."""
    from minigpt.training.devices import resolve_device

    where = resolve_device(device)
    if where.type == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info(where.index or 0)
        return int(free)
    return free_memory_bytes()


def write_exit(run: RunWriter, e: BaseException) -> None:
    if isinstance(e, KeyboardInterrupt):
        changes = dict(state=RunState.STOPPED, failure_reason="interrupted")
    elif isinstance(e, TutorError):  # meant for the learner: the failed status shows it as it is
        changes = dict(state=RunState.FAILED, failure_reason=str(e) or type(e).__name__)
    else:
        changes = dict(state=RunState.FAILED, failure_reason=f"{type(e).__name__}: {e}")
    try:
        run.write_status(**changes)
    except OSError:  # a full disk: the error being raised says more than this status would
        pass


def data_fingerprint(cfg: TrainConfig) -> str | None:
    """``SIZE:SHA256`` of the run's data file, recorded in its status to notice a changed file on
    resume (read after the data was loaded, so the file is known to be a readable regular one).
    Generated data (``repeats``) has no file: None."""
    import hashlib

    if cfg.data_format == "repeats":
        return None
    digest, size = hashlib.sha256(), 0
    with open(cfg.data_path(), "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return f"{size}:{digest.hexdigest()}"


def refuse_changed_data(cfg: TrainConfig, previous: RunStatus | None, now: str, changed_ok: bool) -> None:
    """DataChangedError when a resumed run's data file is not the one it started on (a run saved
    before fingerprints were recorded is not checked), unless ``changed_ok``."""
    was = previous.data_fingerprint if previous is not None else None
    if was is None or was == now or changed_ok:
        return
    sizes = f"{was.split(':')[0]} bytes then, {now.split(':')[0]} now"
    raise DataChangedError(f"{cfg.data_path()}: the data file changed since this run started ({sizes}, "
                           f"other contents): resuming would train on other data; start a new run, or "
                           f"pass --data-changed-ok to continue on the new data")


def shown_path(path: Path | str) -> str:
    """A path as text that can be printed and saved: bytes that are not UTF-8 as ``\\xe9``."""
    import os

    return os.fsencode(path).decode("utf-8", "backslashreplace")


def refuse_paths_not_utf8(cfg: TrainConfig | None, run_dir: Path) -> None:
    """ConfigError, before anything is trained, when the run folder's or the data file's path is
    not UTF-8: the run's JSON files record both, and could not be saved at the end."""
    named = [("run folder", run_dir)] + ([("data file", cfg.data_path())] if cfg is not None else [])
    for what, path in named:
        try:
            str(Path(path).absolute()).encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"{shown_path(Path(path).absolute())}: the {what}'s path is not UTF-8 text, and a "
                              f"run records it in its files; rename the folder (or choose another --data-dir)") from None
