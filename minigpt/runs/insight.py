"""What the trainer records to show what training does, beyond the loss: the surprise of a fixed
handful of validation items at each evaluation (``surprise.jsonl``, with each attention head's
spread on the same items) and the health of each weight matrix every few steps (``layers.jsonl``),
with the torch-free readers the app uses.

Both files start with a versioned header line (what the records mean), then one JSON record per
line, appended and flushed as they come, like ``metrics.jsonl``. A run from before these files
simply has none: the readers return None and the panel says so.

Layer health: per weight matrix, the gradient's norm and ``log10(‖ΔW‖/‖W‖)``, the size of one
update next to the weights it changes. How large a healthy update is depends on the optimizer
(Adam's ~1e-3 is not Muon's, which moves its matrices 10–100× more), so the band is measured, not
assumed: at each sample, the median over the matrices one optimizer moves, ± ``BAND_DECADES``. A
matrix outside its optimizer's band learns far faster or slower than its peers: a warning.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded
from minigpt.runs.files import write_text_atomic
from minigpt.runs.schema import MAX_STEP, in_range

SURPRISE_FILE, LAYERS_FILE = "surprise.jsonl", "layers.jsonl"
SURPRISE_FORMAT, LAYERS_FORMAT, INSIGHT_VERSION = "minigpt-surprise", "minigpt-layers", 1
BAND_DECADES = 1.0  # a matrix 10× faster or slower than its optimizer's median leaves the band
MAX_INSIGHT_BYTES = 64 << 20  # a larger file is not ours: read nothing rather than hang the app
MAX_LINE_CHARS = 1 << 20  # a header or record is a few kilobytes: a longer line is skipped unparsed
# What a record's numbers may be (a value outside is shown as missing): a surprise in nats, a
# gradient norm, a log10 update ratio. Extreme finite values would break the charts' scales.
NLL_RANGE, GRAD_RANGE, RATIO_RANGE, SHARE_RANGE = (0.0, 1e4), (0.0, 1e12), (-40.0, 40.0), (0.0, 1.0)


class InsightLog:
    """Appends records to one of these files (the header first, when the file is new)."""

    def __init__(self, path: Path, header: dict):
        self.path = Path(path)
        self._file = open(self.path, "a", encoding="utf-8")
        if self._file.tell() == 0:
            self._file.write(json.dumps(header) + "\n")
            self._file.flush()

    def write(self, record: dict) -> None:
        self._file.write(json.dumps(record, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def surprise_header(items: list[str], chars: list[list[str]]) -> dict:
    """``items``: the validation items scored; ``chars[i][j]``: the character item i's position j
    predicts (the end of an item shows as ``.``)."""
    return {"format": SURPRISE_FORMAT, "format_version": INSIGHT_VERSION, "items": items, "chars": chars}


def layers_header(names: list[str], optimizers: list[str], every: int) -> dict:
    return {"format": LAYERS_FORMAT, "format_version": INSIGHT_VERSION, "names": names,
            "optimizers": optimizers, "every": every}


def truncate_insight(run_dir: Path | str, last_step: int) -> None:
    """Drop records past ``last_step`` (a resumed run redoes those steps), keeping the header."""
    for name in (SURPRISE_FILE, LAYERS_FILE):
        path = Path(run_dir) / name
        try:
            lines = guarded.read_text(path, MAX_INSIGHT_BYTES).splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        kept = lines[:1] + [ln for ln in lines[1:] if (_step_of(ln) or 0) <= last_step]
        write_text_atomic(path, "".join(ln + "\n" for ln in kept))


def _json(line: str):
    """One line's JSON value, or None (damaged, nested past Python's limit, or too long)."""
    if len(line) > MAX_LINE_CHARS:
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _step(record) -> int | None:
    """A record's step: an int from 0 to ``MAX_STEP`` (anything else: not a record)."""
    step = record.get("step") if isinstance(record, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) and 0 <= step <= MAX_STEP else None


def _step_of(line: str) -> int | None:
    return _step(_json(line))


def _read_lines(path: Path, fmt: str) -> tuple[dict, list[dict]] | None:
    """(header, records) of one of these files; None when absent, damaged or of another format.
    Damaged record lines (a write cut short) are skipped."""
    try:
        if path.stat().st_size > MAX_INSIGHT_BYTES:
            return None
        lines = guarded.read_text(path, MAX_INSIGHT_BYTES).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    header = _json(lines[0]) if lines else None
    if not isinstance(header, dict) or header.get("format") != fmt:
        return None
    if not isinstance(header.get("format_version"), int) or header["format_version"] > INSIGHT_VERSION:
        return None
    records = []
    for line in lines[1:]:
        record = _json(line)
        if _step(record) is not None:
            records.append(record)
    return header, records


# ---------------------------------------------------------------------------- surprise


@dataclass
class Surprise:
    """The surprise of each scored item at each evaluation: ``nll[e][i][j]`` is −ln p of item i's
    character j at evaluation e (step ``steps[e]``)."""

    items: list[str]
    chars: list[list[str]]
    steps: list[int] = field(default_factory=list)
    nll: list[list[list[float]]] = field(default_factory=list)

    def at(self, step: int | None = None) -> tuple[int, list[list[float]]] | None:
        """(step, surprise per item) of the last evaluation at or before ``step`` (None: the last)."""
        best = None
        for e, s in enumerate(self.steps):
            if step is None or s <= step:
                best = e
        return None if best is None else (self.steps[best], self.nll[best])


def read_surprise(run_dir: Path | str) -> Surprise | None:
    got = _read_lines(Path(run_dir) / SURPRISE_FILE, SURPRISE_FORMAT)
    if got is None:
        return None
    header, records = got
    items, chars = header.get("items"), header.get("chars")
    if not (isinstance(items, list) and isinstance(chars, list) and len(items) == len(chars)
            and all(isinstance(c, list) for c in chars)):
        return None
    out = Surprise([str(i) for i in items], [[str(c) for c in cs] for cs in chars])
    for record in records:
        nll = record.get("nll")
        if (isinstance(nll, list) and len(nll) == len(chars)
                and all(isinstance(row, list) and len(row) == len(cs) for row, cs in zip(nll, chars, strict=True))
                and all(_number(v, NLL_RANGE) for row in nll for v in row)):
            out.steps.append(record["step"])
            out.nll.append(nll)
    return out


def _number(v, bounds: tuple[float, float]) -> bool:
    return in_range(v, *bounds)


@dataclass
class HeadSpread:
    """Per attention head at each evaluation (step ``steps[e]``): ``spread[e][layer][head]``, its
    entropy over the most it could have (1: a uniform average), and ``first[e][layer][head]``, its
    weight on the first position, both on the scored items (``minigpt.training.insight.head_stats``)."""

    steps: list[int] = field(default_factory=list)
    spread: list[list[list[float]]] = field(default_factory=list)
    first: list[list[list[float]]] = field(default_factory=list)


def read_head_spread(run_dir: Path | str) -> HeadSpread | None:
    """The heads' records of ``surprise.jsonl`` (None: no file, or a run from before they were kept;
    a record whose tables are not layers × heads of shares is skipped)."""
    got = _read_lines(Path(run_dir) / SURPRISE_FILE, SURPRISE_FORMAT)
    if got is None:
        return None
    out = HeadSpread()
    for record in got[1]:
        heads = record.get("heads")
        tables = [heads.get(k) for k in ("spread", "first")] if isinstance(heads, dict) else []
        if len(tables) == 2 and all(_share_table(t) for t in tables) and _shape(tables[0]) == _shape(tables[1]):
            out.steps.append(record["step"])
            out.spread.append(tables[0])
            out.first.append(tables[1])
    return out if out.steps else None


def _share_table(table) -> bool:
    return (isinstance(table, list) and 0 < len(table) <= 1024
            and all(isinstance(row, list) and 0 < len(row) <= 1024 and all(_number(v, SHARE_RANGE) for v in row)
                    for row in table))


def _shape(table: list[list]) -> list[int]:
    return [len(row) for row in table]


# ---------------------------------------------------------------------------- layer health


@dataclass
class LayerHealth:
    """Per matrix ``names[m]`` (moved by ``optimizers[m]``), at each sampled step: the gradient
    norm ``grad[s][m]`` and ``ratio[s][m]`` = log10(‖ΔW‖/‖W‖) (None: not finite, e.g. no change)."""

    names: list[str]
    optimizers: list[str]
    every: int
    steps: list[int] = field(default_factory=list)
    grad: list[list[float | None]] = field(default_factory=list)
    ratio: list[list[float | None]] = field(default_factory=list)

    def bands(self, sample: int = -1) -> dict[str, tuple[float, float]]:
        """Each optimizer's band at one sample: its matrices' median ratio ± BAND_DECADES."""
        return optimizer_bands(self.ratio[sample], self.optimizers)

    def outside(self, sample: int = -1) -> list[int]:
        """The matrices whose ratio lies outside their optimizer's band at one sample."""
        bands = self.bands(sample)
        return [m for m, (r, opt) in enumerate(zip(self.ratio[sample], self.optimizers, strict=True))
                if r is not None and opt in bands and not bands[opt][0] <= r <= bands[opt][1]]


def optimizer_bands(ratios: list[float | None], optimizers: list[str],
                    decades: float = BAND_DECADES) -> dict[str, tuple[float, float]]:
    """{optimizer: (low, high)}: the median log10 ratio of its matrices ± ``decades`` (an
    optimizer with fewer than 3 measured matrices has no band: a median of two says little)."""
    bands = {}
    for opt in dict.fromkeys(optimizers):
        values = [r for r, o in zip(ratios, optimizers, strict=True) if o == opt and r is not None]
        if len(values) >= 3:
            mid = statistics.median(values)
            bands[opt] = (mid - decades, mid + decades)
    return bands


def read_layer_health(run_dir: Path | str) -> LayerHealth | None:
    got = _read_lines(Path(run_dir) / LAYERS_FILE, LAYERS_FORMAT)
    if got is None:
        return None
    header, records = got
    names, optimizers, every = header.get("names"), header.get("optimizers"), header.get("every")
    if not (isinstance(names, list) and isinstance(optimizers, list) and len(names) == len(optimizers)
            and isinstance(every, int) and not isinstance(every, bool) and 1 <= every <= MAX_STEP):
        return None
    out = LayerHealth([str(n) for n in names], [str(o) for o in optimizers], every)
    for record in records:
        grad, ratio = record.get("grad"), record.get("ratio")
        if not (isinstance(grad, list) and isinstance(ratio, list) and len(grad) == len(ratio) == len(names)):
            continue
        out.steps.append(record["step"])
        out.grad.append([v if _number(v, GRAD_RANGE) else None for v in grad])
        out.ratio.append([v if _number(v, RATIO_RANGE) else None for v in ratio])
    return out


# ---------------------------------------------------------------------------- units


def loss_units(loss: float) -> tuple[float, float]:
    """(perplexity, bits per character) of a mean cross-entropy in nats: e^loss (as unsure as a
    uniform choice among that many characters) and loss / ln 2. A loss too large for e^loss to
    be a float (a run's file may say anything) gives an infinite perplexity, not an error."""
    return (math.exp(loss) if loss < 700 else math.inf), loss / math.log(2)


def short_layer_name(name: str) -> str:
    """``blocks.0.attn.qkv.weight`` → ``b0.attn.qkv``: what fits a narrow column."""
    name = name.removesuffix(".weight")
    return name.replace("blocks.", "b", 1) if name.startswith("blocks.") else name
