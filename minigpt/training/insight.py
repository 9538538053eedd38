"""The measurements behind the training panel's inside views, taken by the trainer as it runs:

- ``SurpriseProbe``: a fixed handful of validation items, scored at each evaluation: −ln p of
  each character under the kept model (what the model still finds surprising), and on the same
  items each attention head's spread and its weight on the first position (``head_stats``);
- ``LayerProbe``: every ``every`` steps, per weight matrix, the gradient norm and
  log10(‖ΔW‖/‖W‖) of that step's update;
- ``reference_losses``: what the loss chart compares against, for the run's own data: a uniform
  guess (ln V) and a bigram fitted on the training split (counting pairs takes well under a second);
- ``SnapshotKeeper``: the kept model at log-spaced steps and evaluations, for the step scrubber.

``StepObservers`` is what the trainer calls around each update and step: it holds these and the
weight average (``minigpt.training.ema``), so the step itself stays forward, backward, clip, step.

What they write and how it is read back is ``minigpt.runs.insight``.
"""

from __future__ import annotations

import math
import shutil

import torch

from minigpt.data import IGNORE
from minigpt.errors import DiskFullError
from minigpt.runs.insight import (
    LAYERS_FILE,
    SURPRISE_FILE,
    InsightLog,
    layers_header,
    surprise_header,
)
from minigpt.runs.snapshots import (
    MAX_SNAPSHOTS,
    capacity,
    folder_bytes,
    is_log_step,
    snapshot_path,
    snapshot_steps,
    to_drop,
)
from minigpt.training.ema import WeightAverage

SURPRISE_ITEMS = 4  # validation items scored at each evaluation
SURPRISE_CHARS = 40  # characters kept per item (a text window is cut here)
HEAD_MIN_KEYS = 4  # a query with fewer positions to look at says little about how a head spreads
BIGRAM_ROWS = 20_000  # rows counted for the bigram reference (all of a names file)


@torch.no_grad()
def per_char_nll(model, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """−ln p(y[b, t] | x[b, ≤t]) for every position (NaN where y is padding), in float32."""
    was_training = model.training
    model.eval()
    logits, _ = model(x)
    model.train(was_training)
    logp = torch.log_softmax(logits.float(), dim=-1)
    picked = logp.gather(-1, y.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return torch.where(y == IGNORE, torch.full_like(picked, math.nan), -picked)


class SurpriseProbe:
    """Scores the first ``SURPRISE_ITEMS`` validation items at each evaluation (the same items for
    the whole run, so their shading can be compared step to step)."""

    def __init__(self, run_dir, split, vocab, device):
        n = min(SURPRISE_ITEMS, len(split))
        self.x, self.y = split.batch(torch.arange(n))
        self.x, self.y = self.x[:, :SURPRISE_CHARS], self.y[:, :SURPRISE_CHARS]
        self.device = device
        chars = [[vocab.chars[int(t)] for t in row if t != IGNORE] for row in self.y]
        items = ["".join(c)[:-1] if c and c[-1] == vocab.chars[0] else "".join(c) for c in chars]
        self.log = InsightLog(run_dir / SURPRISE_FILE, surprise_header(items, chars))

    def record(self, model, step: int) -> None:
        nll = per_char_nll(model, self.x.to(self.device), self.y.to(self.device)).cpu()
        rows = [[round(float(v), 3) for v in row if not math.isnan(v)] for row in nll]
        record = {"step": step, "nll": rows}
        heads = head_stats(model, self.x.to(self.device), self.y.to(self.device))
        if heads is not None:
            record["heads"] = heads
        self.log.write(record)

    def close(self) -> None:
        self.log.close()


@torch.no_grad()
def head_stats(model, x: torch.Tensor, y: torch.Tensor) -> dict | None:
    """Per layer and head, averaged over the items' queries that see at least HEAD_MIN_KEYS
    positions: ``spread``, the attention's entropy over ln(positions it may see) (1: a uniform
    average of the past, 0: one position), and ``first``, the weight on the first position (near 1:
    the head reads the same place whatever the text). None for a model without attention maps or
    items too short. Costs one forward pass per item (a few, of ≤ SURPRISE_CHARS characters)."""
    maps_of = getattr(model, "attention_maps", None)
    if maps_of is None:
        return None
    spread = first = None
    queries = 0
    for xi, yi in zip(x, y, strict=True):
        n = int((yi != IGNORE).sum())  # the item's own characters (padding, when any, follows them)
        if n < HEAD_MIN_KEYS:
            continue
        maps = maps_of(xi[None, :n]).float()  # (layers, heads, n, n), causal
        rows = maps[:, :, HEAD_MIN_KEYS - 1:, :]  # queries t ≥ HEAD_MIN_KEYS − 1 see t + 1 positions
        entropy = -(rows * rows.clamp_min(1e-30).log()).sum(-1)
        most = torch.arange(HEAD_MIN_KEYS, n + 1, dtype=torch.float32, device=rows.device).log()
        s, f = (entropy / most).clamp(0, 1).sum(-1), rows[..., 0].sum(-1)
        spread, first = (s, f) if spread is None else (spread + s, first + f)
        queries += rows.shape[2]
    if spread is None:
        return None
    return {"spread": _rounded(spread / queries), "first": _rounded(first / queries)}


def _rounded(table: torch.Tensor) -> list[list[float]]:
    return [[round(float(v), 3) for v in row] for row in table.cpu()]


def optimizer_kinds(optimizer) -> dict[int, str]:
    """{id(parameter): "muon" or "adamw"}: which optimizer moves each parameter."""
    kind = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            kind[id(p)] = "muon" if group.get("muon") else "adamw"
    return kind


class LayerProbe:
    """Every ``every`` steps, per weight matrix (every parameter with 2 dimensions): the gradient
    norm before the update and log10(‖ΔW‖/‖W‖) of the update. Between samples it costs nothing;
    at a sample, one copy of the matrices and two norms each."""

    def __init__(self, run_dir, model, optimizer, every: int):
        self.every = every
        kinds = optimizer_kinds(optimizer)
        self.params = [(n, p) for n, p in model.named_parameters() if p.dim() == 2 and p.requires_grad]
        self.log = InsightLog(run_dir / LAYERS_FILE, layers_header(
            [n for n, _ in self.params], [kinds.get(id(p), "adamw") for _, p in self.params], every))
        self._before: list[torch.Tensor] | None = None
        self._grads: list[float] = []

    def wants(self, step: int) -> bool:
        """Whether the update about to be made (the step numbered ``step`` once done) is sampled."""
        return step % self.every == 0

    @torch.no_grad()
    def before_update(self) -> None:
        """Called after backward (gradients clipped), before the optimizer's step."""
        self._before = [p.detach().clone() for _, p in self.params]
        grads = [p.grad.detach().float().norm() if p.grad is not None else torch.zeros(()) for _, p in self.params]
        self._grads = torch.stack([g.to("cpu") for g in grads]).tolist() if grads else []

    @torch.no_grad()
    def after_update(self, step: int) -> None:
        if self._before is None:
            return
        ratios = []
        for (_, p), old in zip(self.params, self._before, strict=True):
            ratios.append(torch.log10((p.detach().float() - old.float()).norm() / old.float().norm().clamp_min(1e-12)))
        values = torch.stack(ratios).cpu().tolist() if ratios else []
        self._before = None
        self.log.write({"step": step, "grad": [_finite_or_none(g, 4) for g in self._grads],
                        "ratio": [_finite_or_none(r, 3) for r in values]})

    def skipped(self) -> None:
        """The sampled step was skipped (non-finite loss): nothing moved, nothing is written."""
        self._before = None

    def close(self) -> None:
        self.log.close()


def _finite_or_none(v: float, digits: int) -> float | None:
    return round(v, digits) if math.isfinite(v) else None


@torch.no_grad()
def reference_losses(train, val, vocab_size: int) -> dict[str, float]:
    """{"uniform_loss": ln V, "bigram_loss": the val loss of a bigram counted on (up to
    BIGRAM_ROWS rows of) the training split, add-one smoothed}.

    Only the pairs the data holds are counted (a V×V table would be 2 GB for 16,000 characters):
    p(y | x) = (count(x, y) + 1) / (count(x) + V)."""
    V = vocab_size
    pairs, rows = _pairs(train, V)
    seen, seen_counts = torch.unique(pairs, return_counts=True)  # sorted pair ids, each once
    row_totals = torch.bincount(rows, minlength=V).to(torch.float64)
    val_pairs, val_rows = _pairs(val, V)
    counts = torch.zeros(len(val_pairs), dtype=torch.float64)
    if len(seen):
        where = torch.searchsorted(seen, val_pairs).clamp(max=len(seen) - 1)
        counts = torch.where(seen[where] == val_pairs, seen_counts[where].to(torch.float64), counts)
    logp = torch.log((counts + 1.0) / (row_totals[val_rows] + V))
    n = len(val_pairs)
    return {"uniform_loss": round(math.log(V), 5), "bigram_loss": round(-float(logp.sum()) / max(n, 1), 5)}


def _pairs(split, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(pair ids prev·V + next, prev) of up to BIGRAM_ROWS rows of ``split``, padding left out."""
    ids, prevs = [], []
    n_rows = min(len(split), BIGRAM_ROWS)
    for i in range(0, n_rows, 4096):
        x, y = split.batch(torch.arange(i, min(i + 4096, n_rows)))
        keep = y != IGNORE
        prev = x[keep].long()
        ids.append(prev * vocab_size + y[keep].long())
        prevs.append(prev)
    if not ids:
        return torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
    return torch.cat(ids), torch.cat(prevs)


class SnapshotKeeper:
    """Saves the kept model at log-spaced steps and at evaluations (``minigpt.runs.snapshots``),
    deleting the snapshots thinning drops so both bounds always hold."""

    def __init__(self, run_dir, save):
        self.run_dir, self.save = run_dir, save  # save(path, step): writes one checkpoint folder
        self.steps = snapshot_steps(run_dir)
        self.capacity = MAX_SNAPSHOTS

    def wants(self, step: int, evaluating: bool) -> bool:
        return (evaluating or is_log_step(step)) and step not in self.steps

    def take(self, step: int) -> None:
        path = snapshot_path(self.run_dir, step)
        self.save(path, step)
        self.steps.append(step)
        self.capacity = capacity(folder_bytes(path), MAX_SNAPSHOTS)
        for old in to_drop(self.steps, self.capacity):
            shutil.rmtree(snapshot_path(self.run_dir, old), ignore_errors=True)
            self.steps.remove(old)

    def forget_after(self, step: int) -> None:
        """A resumed run redoes the steps past its checkpoint: their snapshots go."""
        for old in [s for s in self.steps if s > step]:
            shutil.rmtree(snapshot_path(self.run_dir, old), ignore_errors=True)
            self.steps.remove(old)


class StepObservers:
    """What follows the training beside the step: the weight average after every update, and on
    rank 0 the panel's measurements (layer health around a sampled update, the surprise items at
    each evaluation, snapshots after a step). A part left as None is not taken."""

    def __init__(self, model: torch.nn.Module, average: WeightAverage | None = None,
                 surprise: SurpriseProbe | None = None, layers: LayerProbe | None = None,
                 snapshots: SnapshotKeeper | None = None):
        self.model, self.average = model, average
        self.surprise, self.layers, self.snapshots = surprise, layers, snapshots
        self._sampled = False  # whether the layer probe samples the update under way

    def before_update(self, step: int) -> None:
        """After backward and clipping, before the optimizer's step numbered ``step``."""
        self._sampled = self.layers is not None and self.layers.wants(step)
        if self._sampled:
            self.layers.before_update()

    def after_update(self, step: int, updated: bool) -> None:
        """After the optimizer's step; ``updated`` is False when the batch was skipped (a loss or
        gradient that was not finite), and then nothing moved."""
        if not updated:
            if self._sampled:
                self.layers.skipped()
            return
        if self._sampled:
            self.layers.after_update(step)
        if self.average is not None:
            self.average.update(self.model, step - 1)

    def after_evaluation(self, kept: torch.nn.Module, step: int) -> None:
        if self.surprise is not None:
            self.surprise.record(kept, step)

    def after_step(self, step: int, evaluated: bool) -> None:
        """A snapshot for the scrubber when this step is due one."""
        if self.snapshots is not None and self.snapshots.wants(step, evaluated):
            try:
                self.snapshots.take(step)
            except DiskFullError:
                # Snapshots are an extra for the scrubber: a full disk stops them, not the run. The
                # next checkpoint write then meets the full disk and ends the run with its own line.
                self.snapshots = None

    def close(self) -> None:
        for probe in (self.surprise, self.layers):
            if probe is not None:
                probe.close()
