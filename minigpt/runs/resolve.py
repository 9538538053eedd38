"""One reading of "which run" or "which checkpoint" for every command that takes one.

A user may type a folder path, the folder name ``minigpt runs`` lists, or a run's own name (when
exactly one run has it); a checkpoint may also be a run, meaning the run's best checkpoint.
"""

from __future__ import annotations

from pathlib import Path

from minigpt import paths
from minigpt.errors import RunError
from minigpt.runs.files import BEST_DIR, STATUS_FILE
from minigpt.runs.listing import RunInfo, is_run_folder, list_runs
from minigpt.runs.schema import RunState


def _by_name(ref: str, root: Path) -> Path | None:
    """A run folder under ``root`` called ``ref``, or the one run whose own name is ``ref``."""
    if ref and "/" not in ref and ref not in (".", ".."):
        candidate = root / ref
        if candidate.is_dir():
            return candidate
    listed = list_runs(root)
    nested = [r.path for r in listed if r.name == ref]  # a run inside an experiment's folder
    if len(nested) == 1:
        return nested[0]
    matches = [r.path for r in listed if r.label == ref]
    if len(matches) > 1:
        raise RunError(f"{len(matches)} runs are named {ref!r}: give the folder name instead "
                       f"({', '.join(p.name for p in matches[:4])})")
    return matches[0] if matches else None


def resolve_run(ref: str | Path | None, root: Path | str | None = None, pick=None,
                none_found: str = "no run") -> Path:
    """The run folder ``ref`` means: a folder path, a folder name under the runs folder, or a
    run's own name. Without ``ref``, the newest run for which ``pick(info)`` is true (any run
    when ``pick`` is None), else RunError(``none_found`` …). RunError says what was not found."""
    root = Path(root) if root is not None else paths.runs_dir()
    if ref is None or str(ref) == "":
        for info in list_runs(root):
            if pick is None or pick(info):
                return info.path
        raise RunError(f"{none_found} in {root}")
    path = Path(ref).expanduser()
    if path.is_dir() and is_run_folder(path):
        return path
    found = _by_name(str(ref), root)
    if found is not None and is_run_folder(found):
        return found
    if path.exists() or found is not None:
        raise RunError(f"{ref}: not a run folder (no status.json or config.json)")
    raise RunError(f"{ref}: no such run folder, and no run in {root} has that name")


def resolve_checkpoint(ref: str | Path | None, root: Path | str | None = None) -> Path:
    """The checkpoint folder ``ref`` means: a checkpoint folder, or a run (path, folder name or
    own name) for its best checkpoint. Without ``ref``, the shipped default checkpoint."""
    if ref is None or str(ref) == "":
        return paths.default_checkpoint()
    path = Path(ref).expanduser()
    if path.exists():
        best = path / BEST_DIR
        if best.exists() or best.with_name(BEST_DIR + ".old").exists() or (path / STATUS_FILE).exists():
            return _best_of(path)  # a run folder
        return path  # a checkpoint folder (or something checkpoint loading will explain)
    try:
        run = resolve_run(ref, root)
    except RunError:
        raise RunError(f"{ref}: no such checkpoint folder, run folder or run name") from None
    return _best_of(run)


def _best_of(run: Path) -> Path:
    best = run / BEST_DIR
    if not (best.exists() or best.with_name(BEST_DIR + ".old").exists()):
        raise RunError(f"{run.name}: the run has saved no checkpoint yet")
    return best


def is_running(info: RunInfo) -> bool:
    return info.status == RunState.RUNNING
