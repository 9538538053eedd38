"""Telling runs apart: a run's key settings in a few characters, for the runs list, the compare
view and the playground's model picker.

The settings come from the run's ``config.json`` (lr, steps, seed, width and depth) and its name
and note from the status, both read tolerantly: a field that an older run lacks, or a file that
cannot be read, shows as "–" rather than hiding the run.
"""

from __future__ import annotations

import json
from pathlib import Path

from minigpt import guarded
from minigpt.numbers import number_text

CONFIG_FILE = "config.json"
STATE_GLYPHS = {"starting": "…", "running": "▶", "finished": "✓", "stopped": "■", "failed": "✗",
                "broken": "!", "unknown": "?"}
_cache: dict[Path, tuple[int, dict]] = {}  # run folder -> (config.json's mtime, its values)


def read_config(run_dir: Path | str) -> dict:
    """The run's training options as a dict ({} when missing or unreadable), cached by mtime."""
    path = Path(run_dir) / CONFIG_FILE
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return {}
    hit = _cache.get(path)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    try:
        values = json.loads(guarded.read_text(path, guarded.SMALL_JSON_BYTES))
    except (OSError, UnicodeDecodeError, ValueError):
        values = {}
    values = values if isinstance(values, dict) else {}
    _cache[path] = (mtime, values)
    return values


def state_name(info) -> str:
    return str(getattr(info.status, "value", info.status))


def state_glyph(info) -> str:
    return STATE_GLYPHS.get(state_name(info), "?")


def _status_field(info, name: str) -> str:
    # RunInfo.label / .note where the listing provides them; older listings keep the raw status.
    value = getattr(info, "label" if name == "name" else name, None)
    if value is None:
        value = (getattr(info, "raw", None) or {}).get(name)
    return value.strip() if isinstance(value, str) else ""


def run_title(info) -> str:
    """The run's own name when it has one (a renamed or newer run), else its folder's name."""
    return _status_field(info, "name") or info.name


def run_note(info) -> str:
    return _status_field(info, "note")


def model_cell(info, cfg: dict) -> str:
    """GPT 64×4 (width × layers), MLP 200 (hidden units), BIGRAM."""
    kind = (info.model or cfg.get("model") or "?").lower()
    if kind == "gpt" and isinstance(cfg.get("d_model"), int) and isinstance(cfg.get("n_layers"), int):
        return f"GPT {cfg['d_model']}×{cfg['n_layers']}"
    if kind == "mlp" and isinstance(cfg.get("mlp_hidden"), int):
        return f"MLP {cfg['mlp_hidden']}"
    return kind.upper()


def lr_cell(cfg: dict) -> str:
    if cfg.get("model") == "bigram":
        return "–"  # counted, not trained: no learning rate
    lr = cfg.get("lr")
    return number_text(lr) if isinstance(lr, (int, float)) and not isinstance(lr, bool) else "–"


def seed_cell(cfg: dict) -> str:
    seed = cfg.get("seed")
    return str(seed) if isinstance(seed, int) and not isinstance(seed, bool) else "–"


def budget_cell(info, cfg: dict) -> str:
    """Steps done over the budget: 300/3000, or 812/120s for a time budget."""
    if info.total_unit == "seconds" and info.total:
        return f"{info.step}/{info.total:g}s"
    total = info.total or cfg.get("steps")
    return f"{info.step}/{total}" if total else str(info.step)


def params_cell(n: int | None) -> str:
    if not n:
        return "–"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    return f"{n:,}"


def loss_cell(value: float | None) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "–"


def settings_line(info, cfg: dict) -> str:
    """Every setting that tells two runs apart, in words, for the line under a table."""
    kind = (info.model or cfg.get("model") or "?").lower()
    parts = []
    if kind == "gpt":
        arch = [f"{cfg[k]} {word if cfg[k] != 1 else one}"  # "1 layer", not "1 layers"
                for k, word, one in (("d_model", "wide", "wide"), ("n_layers", "layers", "layer"),
                                     ("n_heads", "heads", "head")) if isinstance(cfg.get(k), int)]
        parts.append("GPT " + " × ".join(arch) if arch else "GPT")
        if cfg.get("pos_encoding") not in (None, "learned"):
            parts.append(f"{cfg['pos_encoding']} positions")
    elif kind == "mlp":
        parts.append(f"MLP context {cfg.get('mlp_context', '?')}, {cfg.get('mlp_hidden', '?')} hidden")
    else:
        parts.append(kind.upper())
    if kind != "bigram":
        parts.append(f"lr {lr_cell(cfg)}")
        if isinstance(cfg.get("batch_size"), int):
            parts.append(f"batch {cfg['batch_size']}")
    if isinstance(cfg.get("time_s"), (int, float)) and cfg.get("time_s"):
        parts.append(f"{cfg['time_s']:g} s budget")
    elif isinstance(cfg.get("steps"), int):
        parts.append(f"{cfg['steps']} step{'s' * (cfg['steps'] != 1)}")
    parts.append(f"seed {seed_cell(cfg)}")
    return " · ".join(parts)
