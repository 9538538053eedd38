"""The checkpoints a playground or picker can choose from: the shipped ones, every run's, the
runs lab jobs kept and the GPT-2 folders ``minigpt hf fetch`` keeps, each labelled with its kind
and the settings that tell it apart from its siblings (64×4 muon lr 0.005 seed 7)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from minigpt import paths
from minigpt.checkpoint import read_checkpoint_config
from minigpt.errors import CheckpointError
from minigpt.models.config import MODEL_LABELS
from minigpt.numbers import number_text
from minigpt.pretrained.gpt2 import fetched_folders


@dataclass
class CheckpointChoice:
    label: str
    path: Path
    kind: str
    val_loss: float | None = None
    source: str = "bundled"  # bundled | run | pretrained (minigpt hf fetch's folders)
    details: str = ""  # kind and key settings, e.g. "MiniGPT 64×4 lr 0.005 seed 1337"


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def key_settings(kind: str, model_config: dict, train_config: dict) -> str:
    """What tells two checkpoints of one kind apart, in a few characters: 64×4 muon lr 0.005 seed 7."""
    parts = []
    if kind == "gpt" and isinstance(model_config.get("d_model"), int) and isinstance(model_config.get("n_layers"), int):
        parts.append(f"{model_config['d_model']}×{model_config['n_layers']}")
        if train_config.get("optimizer") == "muon":  # Muon's runs beside AdamW's (older runs, --optimizer adamw)
            parts.append("muon")
    elif kind == "mlp" and isinstance(model_config.get("n_hidden", model_config.get("hidden")), int):
        parts.append(f"{model_config.get('n_hidden', model_config.get('hidden'))} hidden")
    lr = _number(train_config.get("lr"))
    if lr is not None and kind != "bigram":
        parts.append(f"lr {number_text(lr)}")
    if isinstance(train_config.get("seed"), int) and not isinstance(train_config.get("seed"), bool):
        parts.append(f"seed {train_config['seed']}")
    return " ".join(parts)


def _choice(path: Path, label: str, source: str) -> CheckpointChoice | None:
    try:
        cfg = read_checkpoint_config(path)
    except CheckpointError:
        return None
    metrics = cfg.get("metrics") or {}
    kind = cfg.get("kind", "?")
    val = _number(metrics.get("val_loss"))
    model_config = cfg.get("model_config") if isinstance(cfg.get("model_config"), dict) else {}
    train_config = cfg.get("train_config") if isinstance(cfg.get("train_config"), dict) else {}
    details = " ".join(x for x in (MODEL_LABELS.get(kind, kind), key_settings(kind, model_config, train_config)) if x)
    val_text = f" val {val:.3f}" if val is not None else ""
    return CheckpointChoice(f"{label} ({details}{val_text})", path, kind, val, source, details)


def pretrained_choices(models: Path | None = None) -> list[CheckpointChoice]:
    """GPT-2-family folders where ``minigpt hf fetch`` puts them (models/ in the data folder)."""
    return [CheckpointChoice(f"{d.name} (pretrained, continues text)", d, "gpt", None, "pretrained", "pretrained")
            for d in fetched_folders(models)]


def find_checkpoints(bundled: Path | None = None, runs_root: Path | None = None,
                     live: bool = False, pretrained: bool = False) -> list[CheckpointChoice]:
    """The shipped checkpoints (``default`` first), then every finished run's checkpoint; with
    ``live``, also the best checkpoint so far of each run still training (labelled "live"); then
    the runs lab jobs kept; with ``pretrained``, the GPT-2 folders ``minigpt hf fetch`` keeps (for
    the tools that take one)."""
    root = bundled if bundled is not None else paths.checkpoints_dir()
    found: list[CheckpointChoice] = []
    if root.is_dir():
        dirs = sorted((d for d in root.iterdir() if d.is_dir() and not d.name.endswith((".tmp", ".old"))),
                      key=lambda d: (d.name != "default", d.name))
        for d in dirs:
            c = _choice(d, d.name, "bundled")
            if c:
                found.append(c)
    found += pretrained_choices() if pretrained else []
    from minigpt.runs.listing import list_runs
    from minigpt.runs.schema import RunState

    for run in list_runs(runs_root):
        running = live and run.status == RunState.RUNNING
        if (run.status in (RunState.FINISHED, RunState.STOPPED) or running) and run.checkpoint.exists():
            label = run.label.strip()  # the run's own name
            c = _choice(run.checkpoint, f"your run {label or run.name}{' (live)' if running else ''}", "run")
            if c:
                found.append(c)
    from minigpt.runs.lab import lab_runs

    for job, run_dir in lab_runs():  # what a lab job trained and kept (lab/<job>/run)
        c = _choice(run_dir / "checkpoint", f"lab job {job}", "run")
        if c:
            found.append(c)
    return found
