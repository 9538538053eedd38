"""What a run's numbers say is wrong, named, with the numbers behind it and the lesson that explains it.

Read from the run folder alone (``status.json``, ``metrics.jsonl``, ``layers.jsonl`` when the
trainer recorded layer health, and the heads' spread in ``surprise.jsonl``), so it works while the run trains, after it ended, and for a run
another process writes. Torch-free: the app and ``minigpt diagnose`` both call :func:`diagnose`.

Each check is deliberately conservative: a symptom is named only when its evidence is clear, and
the default recipe's run shows none (``tests/test_diagnosis.py`` holds a recorded one).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from minigpt.errors import RunError
from minigpt.runs.files import STATUS_FILE
from minigpt.runs.insight import HeadSpread, LayerHealth, read_head_spread, read_layer_health, short_layer_name
from minigpt.runs.metrics import read_metrics
from minigpt.runs.schema import RunState, RunStatus, read_status

# Thresholds (nats unless said). Each is far from what the default recipe's run shows.
FLAT_MARGIN = 0.15         # a train loss within this of ln V is still a uniform guess
FLAT_AFTER = 0.2           # of the budget, before "flat" is said (warmup and the first steps move slowly)
MIN_STEPS = 50             # fewer steps than this: too early to say anything but a divergence
RISE_MARGIN = 0.03         # val above its best by this (and by 2%) while train still falls: overfitting
SLOW_AFTER = 0.5           # of the budget, before "no better than the bigram" is said
SPIKE_RISE = 0.3           # a train record this far above the median of the five before it
SPIKE_FRACTION = 0.15      # … and this fraction above it
BLOWUP = 1.0               # a train loss this far above the lowest seen: the run is coming apart
EXPLODED = 1.5             # a train loss this many times a uniform guess's: it blew up
RATIO_SAMPLES = 8          # the latest layer-health samples looked at
RATIO_SHARE = 0.75         # out of band in this share of them: not one noisy sample
HEAD_UNIFORM = 0.95        # a head's entropy at this share of a uniform average's or more: it still averages
HEAD_DEAD = 0.9            # a head putting this much weight on the first position: it reads nothing else
HEAD_EVALS = 2             # … at each of the last evaluations
HEAD_SHARE = 0.5           # of all heads, before it is named (one idle head among many is common)


# The lesson that explains each symptom (lessons/chapters/*.md front matter ids).
LESSONS = {"diverged": "training", "flat": "initialization", "overfitting": "training", "slow": "training",
           "spikes": "training", "update_ratio": "training", "heads_uniform": "averaging-the-past",
           "heads_dead": "multi-head-attention"}


@dataclass(frozen=True)
class Symptom:
    """One named problem: ``id``, a title, the evidence (numbers), one line of why, the lesson's id."""

    id: str
    title: str
    evidence: str
    explanation: str
    lesson: str

    def line(self) -> str:
        return f"{self.title}: {self.evidence}. {self.explanation} (lesson: {self.lesson})"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RunNumbers:
    """What the checks read: the status and the train and val series."""

    status: RunStatus | None
    records: list[dict]
    layers: LayerHealth | None = None
    heads: HeadSpread | None = None

    @property
    def train(self) -> list[tuple[int, float]]:
        return [(r["step"], float(r["train_loss"])) for r in self.records if "train_loss" in r]

    @property
    def val(self) -> list[tuple[int, float]]:
        return [(r["step"], float(r["val_loss"])) for r in self.records if "val_loss" in r]

    @property
    def step(self) -> int:
        return self.records[-1]["step"] if self.records else 0

    def progress(self) -> float:
        """The fraction of the budget done (1 once the run is over)."""
        st = self.status
        if st is None:
            return 0.0
        if not st.state.active:
            return 1.0
        if st.total_steps:
            return min(self.step / st.total_steps, 1.0)
        if st.time_budget_s and self.records:
            return min(float(self.records[-1].get("elapsed_s", 0.0)) / st.time_budget_s, 1.0)
        return 0.0


def read_run(run_dir: Path | str) -> RunNumbers:
    run_dir = Path(run_dir)
    try:
        status = read_status(run_dir / STATUS_FILE)
    except (OSError, RunError):
        status = None
    records, _ = read_metrics(run_dir)
    return RunNumbers(status, records, read_layer_health(run_dir), read_head_spread(run_dir))


def diagnose(run_dir: Path | str) -> list[Symptom]:
    """The symptoms a run folder shows now (an empty list: none found)."""
    return diagnose_numbers(read_run(run_dir))


def divergence(run_dir: Path | str) -> str | None:
    """The evidence that the run diverges (its loss may have exploded and still be a number), or None."""
    return next((s.evidence for s in diagnose(run_dir) if s.id == "diverged"), None)


def diagnose_numbers(run: RunNumbers) -> list[Symptom]:
    diverged = _diverged(run)
    if diverged is not None:  # the other checks read a curve that no longer means anything
        return [diverged]
    found = [_flat(run), _overfitting(run), _slow(run), _spikes(run), *_ratios(run), *_heads(run)]
    return [s for s in found if s is not None]


# ---------------------------------------------------------------------------- the checks


def _diverged(run: RunNumbers) -> Symptom | None:
    st, train = run.status, run.train
    reason = (st.failure_reason or "") if st is not None else ""
    lr = "Too high a learning rate (or too short a warmup, no clipping) makes the updates overshoot"
    if st is not None and st.state == RunState.FAILED and ("diverged" in reason or "not finite" in reason):
        return Symptom("diverged", "Diverged", reason.split(";")[0], lr + ".", LESSONS["diverged"])
    lost = [r["step"] for r in run.records[1:] if "train_loss" not in r and not r.get("skipped_steps")]
    if train and lost:  # the loss was logged, then a record came without one: it was not a number
        return Symptom("diverged", "Diverged (NaN)", f"the train loss is not a number from step {lost[0]} on",
                       lr + ".", LESSONS["diverged"])
    skipped = max((r.get("skipped_steps", 0) for r in run.records), default=0)
    if skipped:
        return Symptom("diverged", "Non-finite steps skipped",
                       f"{skipped} steps had a loss or gradient that was not a number",
                       lr + "; skipping hides it for a while.", LESSONS["diverged"])
    # far above a uniform guess (or the first loss) at any point: it blew up, even if it came back
    ceiling = EXPLODED * (st.uniform_loss if st is not None and st.uniform_loss else train[0][1]) if train else None
    high = max(train, key=lambda p: p[1]) if train else None
    if high is not None and high[1] > ceiling:
        start = f"ln V = {st.uniform_loss:.3f}" if st is not None and st.uniform_loss else f"{train[0][1]:.3f} at first"
        return Symptom("diverged", "Diverged (the loss exploded)",
                       f"train loss {high[1]:.4g} at step {high[0]}, against {start}", lr + ".", LESSONS["diverged"])
    if len(train) >= 3:
        low_step, low = min(train, key=lambda p: p[1])
        step, last = train[-1]
        if last > low + max(BLOWUP, 0.3 * low):
            return Symptom("diverged", "Diverging",
                           f"train loss {last:.3f} at step {step}, up from {low:.3f} at step {low_step}",
                           lr + ".", LESSONS["diverged"])
    return None


def _flat(run: RunNumbers) -> Symptom | None:
    st, train = run.status, run.train
    if st is None or st.uniform_loss is None or len(train) < 3 or run.step < MIN_STEPS:
        return None
    if run.progress() < FLAT_AFTER:
        return None
    recent = statistics.median(loss for _, loss in train[-3:])
    if recent < st.uniform_loss - FLAT_MARGIN:
        return None
    return Symptom("flat", "Loss flat near ln V",
                   f"train loss {recent:.3f} at step {run.step}, a uniform guess costs ln V = {st.uniform_loss:.3f}",
                   "The model still guesses every token equally: the learning rate is too low or the "
                   "initialisation kills the signal.", LESSONS["flat"])


def _overfitting(run: RunNumbers) -> Symptom | None:
    val, train = run.val, run.train
    if len(val) < 3 or len(train) < 3:
        return None
    best_step, best = min(val, key=lambda p: p[1])
    step, last = val[-1]
    if step == best_step or last - best < max(RISE_MARGIN, 0.02 * best):
        return None
    train_then = _at_or_before(train, best_step)
    train_now = train[-1][1]
    if train_then is None or train_now >= train_then:
        return None
    return Symptom("overfitting", "Overfitting",
                   f"val loss {last:.3f} at step {step}, up from {best:.3f} at step {best_step}, while train "
                   f"fell from {train_then:.3f} to {train_now:.3f}",
                   "The model learns its training items by heart: more data, dropout or an earlier stop "
                   "(the best checkpoint is already kept).", LESSONS["overfitting"])


def _slow(run: RunNumbers) -> Symptom | None:
    st, val = run.status, run.val
    if st is None or st.bigram_loss is None or st.model == "bigram" or not val or run.step < MIN_STEPS:
        return None
    if run.progress() < SLOW_AFTER:
        return None
    best = min(loss for _, loss in val)
    if best <= st.bigram_loss:
        return None
    if run.train and min(loss for _, loss in run.train) < st.bigram_loss - RISE_MARGIN:
        return None  # it learns its training items well: the gap is overfitting (or data), not a slow rate
    size = f" with {st.n_params:,} parameters" if st.n_params else ""
    return Symptom("slow", "Slow progress for the model size",
                   f"best val loss {best:.3f}{size} after {run.step} steps, no better than a counted bigram "
                   f"({st.bigram_loss:.3f})",
                   "A model with attention should beat counting pairs long before this: the learning rate "
                   "is probably too low.", LESSONS["slow"])


def _spikes(run: RunNumbers) -> Symptom | None:
    train = run.train
    spikes = []
    for i in range(6, len(train)):
        before = statistics.median(loss for _, loss in train[i - 5:i])
        step, loss = train[i]
        if loss > before + max(SPIKE_RISE, SPIKE_FRACTION * before):
            spikes.append((step, loss, before))
    if not spikes:
        return None
    step, loss, before = max(spikes, key=lambda s: s[1] - s[2])
    return Symptom("spikes", "Loss spikes",
                   f"{len(spikes)} record(s) jump up, the largest to {loss:.3f} at step {step} from about {before:.3f}",
                   "A few updates overshoot: a lower peak learning rate, a longer warmup or gradient "
                   "clipping steadies them.", LESSONS["spikes"])


def _ratios(run: RunNumbers) -> list[Symptom]:
    layers = run.layers
    if layers is None or len(layers.steps) < 4:
        return []
    samples = range(max(0, len(layers.steps) - RATIO_SAMPLES), len(layers.steps))
    counts = [0] * len(layers.names)
    for s in samples:
        for m in layers.outside(s):
            counts[m] += 1
    needed = math.ceil(RATIO_SHARE * len(samples))
    odd = [m for m, c in enumerate(counts) if c >= needed]
    if not odd:
        return []
    bands = layers.bands(-1)
    parts = []
    for m in odd[:4]:
        ratio, opt = layers.ratio[-1][m], layers.optimizers[m]
        band = bands.get(opt)
        where = f"10^{ratio:.1f}" if ratio is not None else "no change"
        parts.append(f"{short_layer_name(layers.names[m])} ({opt}) {where}"
                     + (f" vs band 10^{band[0]:.1f}..10^{band[1]:.1f}" if band else ""))
    more = f" and {len(odd) - 4} more" if len(odd) > 4 else ""
    return [Symptom("update_ratio", "Update-to-weight ratio out of band",
                    "; ".join(parts) + more + f" (in {needed}+ of the last {len(samples)} samples)",
                    "These matrices move ten times faster or slower than the others their optimizer "
                    "moves: a learning rate or initialisation off for them.", LESSONS["update_ratio"])]


def _heads(run: RunNumbers) -> list[Symptom]:
    """Heads still averaging the past evenly, or looking only at the first position, at each of the
    last HEAD_EVALS evaluations: named when they are HEAD_SHARE of all heads or more."""
    heads = run.heads
    if heads is None or len(heads.steps) < HEAD_EVALS or run.step < MIN_STEPS or run.progress() < FLAT_AFTER:
        return []
    last = range(len(heads.steps) - HEAD_EVALS, len(heads.steps))
    shape = [len(row) for row in heads.spread[-1]]
    if any([len(row) for row in heads.spread[e]] != shape for e in last):
        return []  # the model changed shape between records: nothing to compare
    every = [(layer, head) for layer, n in enumerate(shape) for head in range(n)]
    uniform = [lh for lh in every if all(heads.spread[e][lh[0]][lh[1]] >= HEAD_UNIFORM for e in last)]
    dead = [lh for lh in every if lh not in uniform and all(heads.first[e][lh[0]][lh[1]] >= HEAD_DEAD for e in last)]
    if len(uniform) + len(dead) < HEAD_SHARE * len(every):
        return []
    step, found = heads.steps[-1], []
    if uniform:
        found.append(Symptom("heads_uniform", "Attention heads uniform",
                             f"{len(uniform)} of {len(every)} heads spread their attention at least "
                             f"{HEAD_UNIFORM:.0%} as evenly as a plain average of the past at step {step} "
                             f"({_head_list(uniform, heads.spread[-1])})",
                             "Their queries and keys have not learnt to pick positions yet, so each head "
                             "only averages what came before: a learning rate too low or too few steps.",
                             LESSONS["heads_uniform"]))
    if dead:
        found.append(Symptom("heads_dead", "Attention heads dead",
                             f"{len(dead)} of {len(every)} heads put at least {HEAD_DEAD:.0%} of their weight "
                             f"on the first position at step {step} ({_head_list(dead, heads.first[-1])})",
                             "A head that reads one fixed place passes the same vector to every position and "
                             "adds nothing: too few heads are working, or their learning rate is off.",
                             LESSONS["heads_dead"]))
    return found


def _head_list(heads: list[tuple[int, int]], table: list[list[float]]) -> str:
    shown = ", ".join(f"b{layer}.h{head} {table[layer][head]:.2f}" for layer, head in heads[:4])
    return shown + (f" and {len(heads) - 4} more" if len(heads) > 4 else "")


def _at_or_before(series: list[tuple[int, float]], step: int) -> float | None:
    found = None
    for s, value in series:
        if s > step:
            break
        found = value
    return found
