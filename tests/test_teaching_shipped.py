"""Our MiniGPT is one model across the course: every figure the content shows about it is the
shipped checkpoint's, read here straight from checkpoints/default/config.json (plain json, not
through the code under test) and from its weights file's header."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

from minigpt.lessons import load_lessons
from minigpt.study.decks import load_decks
from minigpt.teaching import params
from minigpt.teaching.examples import catalog  # noqa: F401  (registers every example)
from minigpt.teaching.examples.registry import EXAMPLES, render_example
from minigpt.teaching.kv_memory import human_bytes
from minigpt.teaching.shipped import shipped_model

ROOT = Path(__file__).resolve().parents[1]
RAW = json.loads((ROOT / "checkpoints" / "default" / "config.json").read_text(encoding="utf-8"))
CFG = RAW["model_config"]
D, L, H, T, V = CFG["d_model"], CFG["n_layers"], CFG["n_heads"], CFG["block_size"], CFG["vocab_size"]
N = RAW["metrics"]["n_params"]
TRAIN = RAW["train_config"]


def _weights_numel() -> int:
    """Numbers stored in model.safetensors, from its JSON header (8-byte length, then JSON)."""
    with open(ROOT / "checkpoints" / "default" / "model.safetensors", "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    total = 0
    for name, entry in header.items():
        if name != "__metadata__":
            n = 1
            for s in entry["shape"]:
                n *= s
            total += n
    return total


def test_the_shipped_model_is_read_from_the_checkpoint():
    ours = shipped_model()
    assert (ours.config.d_model, ours.config.n_layers, ours.config.n_heads, ours.config.block_size,
            ours.config.vocab_size) == (D, L, H, T, V)
    assert ours.n_params == N == _weights_numel() == params.gpt_total(ours.config)
    assert ours.val_loss == RAW["metrics"]["val_loss"] and ours.test_loss == RAW["metrics"]["test_loss"]
    assert ours.best_step == RAW["metrics"]["step"] and ours.steps_trained == RAW["metrics"]["steps_done"]


def _n(x: int) -> str:
    return f"{x:,}"


# What each example that speaks of our model must show, worked from the checkpoint's file.
EXPECTED = {
    "params.mini_gpt": [f"**{_n(N)}**", f"counted {_n(N)}", f"d {D}, {L} layers, {H} heads, context {T}",
                        f"| position embedding | T·d | {_n(T * D)} |"],
    "pe.learned.params": [f"| our MiniGPT | {T} | {D} | {_n(T * D)} |"],
    "comparison.course": [f"| our MiniGPT (d {D}, {L} layers) | {_n(N)} |",
                          f"(ours {RAW['metrics']['val_loss']:.3f})", f"test split {RAW['metrics']['test_loss']:.3f}"],
    "inference.flops_per_token": [f"| our MiniGPT | {_n(N - V * D - T * D)} |"],
    "kvmem.per_token": [f"| our MiniGPT | 2·{L}·{CFG['n_kv_heads']}·{D // H}·4 | {_n(2 * L * D * 4)} | {T} |"],
    "kvmem.measured": [f"| MHA, n_kv_heads = {H} | {_n(2 * L * D * 4 * T)} | {_n(2 * L * D * 4 * T)} | {_n(N)} |",
                       f"{T} tokens"],
    "longctx.learned_limit": [f"{T} rows (positions 0…{T - 1}), {D} numbers each"],
    "precision.optimizer_memory": [f"| our MiniGPT | float32 | {human_bytes(4 * N)} |"],
    "tokens.cost": [f"MiniGPT has {_n(N)} parameters", f"at d = {D} "],
    "init.numbers": [f"our {L}-layer MiniGPT"],
    "loss.perplexity_bits": [f"| MiniGPT | {RAW['metrics']['val_loss']:.3f} |"],
    "model.shipped_recipe": [f"d {D}, {L} layers, {H} heads, context {T}, {_n(N)} parameters",
                             f"| Muon, lr {TRAIN['muon_lr']:g} |", f"| AdamW, lr {TRAIN['lr']:g} |",
                             f"| {TRAIN['batch_size']} names a step, packed", f"| {100 * TRAIN['warmup']:g}% warmup",
                             f"to {100 * TRAIN['min_lr_ratio']:g}% of the peak |", f"decay {TRAIN['ema']} |",
                             f"| steps | {_n(RAW['metrics']['steps_done'])} in", f"| step {_n(RAW['metrics']['step'])},",
                             f"validation {RAW['metrics']['val_loss']:.3f}, test {RAW['metrics']['test_loss']:.3f}"],
}


@pytest.mark.parametrize("example_id", sorted(EXPECTED))
def test_each_example_about_our_model_shows_the_checkpoints_figures(example_id):
    md = render_example(example_id)
    for figure in EXPECTED[example_id]:
        assert figure in md, f"{example_id}: expected {figure!r} in\n{md}"


def test_decay_groups_add_up_to_our_model():
    md = render_example("training.decay_groups")
    numbers = [int(m.replace(",", "")) for m in re.findall(r"\| (\d[\d,]*) \|$", md, re.M)]
    assert sum(numbers) == N, md


# "our model", "the mini GPT", "the shipped…"; a bare "MiniGPT" is the class, built at any size.
OURS = re.compile(r"\bour (whole )?(mini ?GPT|MiniGPT|model)('s)?\b|\bthe mini GPT\b|\bshipped\b", re.I)
# Figures a sentence about our model may quote, each with the checkpoint's value.
FIGURES = [
    (re.compile(r"\bd = (\d+)"), D), (re.compile(r"\bV = (\d+)"), V), (re.compile(r"\bL = (\d+)"), L),
    (re.compile(r"\b(\d+) layers\b"), L), (re.compile(r"\b(\d+)-layer\b"), L), (re.compile(r"\b(\d+) heads\b"), H),
    (re.compile(r"\bT = (\d+)"), T), (re.compile(r"\bblock size (\d+)"), T),
    (re.compile(r"\bcontext (?:of )?(\d+)\b"), T), (re.compile(r"\b(\d+) positions\b"), T),
    (re.compile(r"\b(\d{3},\d{3}) param"), N),
]


def _sentences(text: str):
    yield from re.split(r"(?<=[.!?])\s+|\n\s*\n", text)


def _our_sentences():
    """(where, sentence) for every sentence of lesson prose, worked example or card that speaks of
    our model; "the course's" sentences and other named models are someone else's."""
    for lesson in load_lessons():
        for block in lesson.blocks():
            if block.kind == "markdown":
                yield from ((lesson.id, s) for s in _sentences(block.text))
    for ex_id in EXAMPLES:
        yield from ((ex_id, s) for s in _sentences(render_example(ex_id)))
    for card in load_decks():
        for text in (card.front, card.back):
            yield from ((card.id, s) for s in _sentences(text))


def test_every_figure_quoted_about_our_model_is_the_checkpoints():
    checked = 0
    for where, sentence in _our_sentences():
        if not OURS.search(sentence) or "course" in sentence.lower() or "|" in sentence:
            continue
        for pattern, value in FIGURES:
            for m in pattern.finditer(sentence):
                checked += 1
                assert int(m.group(1).replace(",", "")) == value, f"{where}: {sentence!r} quotes {m.group(0)!r}"
    assert checked >= 5  # the scan found the sentences it is for


def test_table_rows_about_our_model_quote_its_parameter_count():
    """A table row labelled ours shows our parameter count or none at all (no course-sized model
    called "ours")."""
    allowed = {N, N - V * D - T * D, T * D}
    for ex_id in EXAMPLES:
        for row in render_example(ex_id).splitlines():
            if row.startswith("|") and re.search(r"\bour (mini ?GPT|MiniGPT)\b", row, re.I):
                assert "course" not in row, f"{ex_id}: {row}"
                for m in re.findall(r"\b\d{1,3}(?:,\d{3})+\b", row):
                    value = int(m.replace(",", ""))
                    assert value in allowed or value < 10_000 or value == 2 * L * D * 4 * T, f"{ex_id}: {row}"


def test_the_initialization_lesson_measures_models_as_wide_as_ours():
    """Lesson 166 says its fresh models have our width and heads: init_stats builds them so."""
    import inspect

    from minigpt.teaching import init_stats

    defaults = {k: p.default for k, p in inspect.signature(init_stats.build).parameters.items()}
    assert (defaults["d_model"], defaults["n_heads"], defaults["vocab_size"], defaults["block_size"]) == (D, H, V, T)


def _race_row(label: str) -> tuple[str, str]:
    """(best val, test) of a row of docs/benchmarks.md's option race (the first seed's figures)."""
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and label in cells[0]:
            if len(cells) == 5:  # the default's row: seeds, steps, vals and tests of three seeds
                return cells[3].split(",")[0].strip(), cells[4].split(",")[0].strip()
            return cells[2], cells[3].split()[0]
    raise AssertionError(f"no row {label!r} in docs/benchmarks.md")


def test_the_race_without_positions_is_quoted_as_measured():
    """Lesson 080 and its question say this project's race measured no loss without positional
    encoding: the figures they quote are docs/benchmarks.md's."""
    _, default_test = _race_row("**default")
    _, none_test = _race_row("`pos_encoding=none`")
    assert abs(float(none_test) - float(default_test)) < 0.01  # the claim: no loss beyond noise
    lesson = next(x for x in load_lessons() if x.id == "positional-encoding")
    prose = " ".join(lesson.body.split())
    assert f"test loss of {none_test} against {default_test} with learned positions" in prose
    answers = [c.back for c in load_decks() if "no positional information" in c.front]
    assert answers and all(f"test {none_test} against {default_test}" in a for a in answers)


def test_the_shipped_recipe_names_every_architecture_change_from_the_lesson(monkeypatch):
    """The mini GPT lesson says what the shipped model adds: nothing to the architecture today
    (its config.json names no option away from its default), and a model that did change one
    would be listed by the option's name."""
    from dataclasses import replace

    from minigpt.models.config import GPTConfig
    from minigpt.teaching.examples import model

    md = render_example("model.shipped_recipe")
    sizes = {k: CFG[k] for k in ("vocab_size", "block_size", "d_model", "n_heads", "n_layers")}
    unchanged = all(CFG.get(k, v) == v for k, v in vars(GPTConfig(**sizes)).items())
    assert ("Architecture changed from this lesson's: nothing." in md) == unchanged, md
    changed = replace(shipped_model(), config=GPTConfig(**sizes, bigram="residual", mtp_weight=0.3))
    monkeypatch.setattr(model, "shipped_model", lambda: changed)
    md = render_example("model.shipped_recipe")
    assert "Architecture changed from this lesson's: bigram table = residual; MTP weight = 0.3." in md, md


def _table_after(header_start: str) -> list[list[str]]:
    """The rows (cells) of the docs/benchmarks.md table whose header row starts with ``header_start``."""
    lines = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_the_mini_gpt_lesson_quotes_the_tricks_race_as_measured():
    """Lesson 150 says the pair table and the second head lowered every seed's loss at 1000 steps
    and that the gain was gone by a default run's length: docs/benchmarks.md's races say so."""
    from minigpt.training.options import TrainConfig

    both = "`bigram=residual,mtp_weight=0.3`"
    short = next(r for r in _table_after("| candidate (`--candidate`)") if r[0].startswith(both))
    assert "all five lower" in short[3] and float(short[4].strip("*")) < 0.05, short
    long = next(r for r in _table_after("| 3000 steps |") if r[0] == both)
    assert float(long[3]) > 0.05 and long[4] == "no gain", long
    assert TrainConfig().steps == 3000
    lesson = next(x for x in load_lessons() if x.id == "mini-gpt")
    prose = " ".join(lesson.body.split())
    assert "gave every seed a lower loss after a thousand steps" in prose
    assert "by the default run's three thousand steps" in prose
    # Its key point names the shipped run's training: the checkpoint's recipe.
    assert "its training (Muon, packed batches, a weight average)" in prose
    assert TRAIN["optimizer"] == "muon" and TRAIN["pack"] and TRAIN["ema"] > 0
