"""Generative numeric cards: a note whose inputs are drawn afresh at each review (torch-free here).

A ``[[numeric]]`` note that says ``template = true`` in its deck (its generator must have a
template below) becomes ONE study card keyed by the note's id (``num.warmup-lr``, not
``num.warmup-lr.half``): FSRS schedules the note, and each
time it is asked :func:`fresh` draws new inputs from the template's ranges, the generator computes
the value (``minigpt.study.generators``) and the one numeric parser grades it. The deck's cases
stay as the card's first instance (listings, export, the lesson's worked example).

Each template states its input ranges; they are chosen so every instance has a clean answer the
stated tolerance cannot confuse (weights on a 0.05 grid that sum to 1, steps on tenths of the
warmup, widths in multiples of 32…). tests/test_study_templates.py draws 1,000 instances of each
against its own computation. Cards saved under the old per-case ids move to the note's id with
:func:`merge_case_state` (the earliest due wins; reps and lapses add up).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from minigpt.store import Store


@dataclass(frozen=True)
class Template:
    generator: str
    ranges: str                                  # the input ranges, in words
    draw: Callable[[random.Random], dict]        # rng → the generator's parameters


def _weights(rng: random.Random, n: int) -> list[float]:
    """n positive weights on a 0.05 grid that sum to exactly 1."""
    cuts = sorted(rng.sample(range(1, 20), n - 1))
    edges = [0, *cuts, 20]
    return [(b - a) / 20 for a, b in zip(edges, edges[1:])]


def _weighted_sum(rng):
    """Distinct values, drawn again while the blend equals one of the inputs (the answer would
    then stand in the question)."""
    while True:
        n = rng.choice((2, 3))
        weights, values = _weights(rng, n), [float(v) for v in rng.sample(range(-9, 10), n)]
        if round(sum(w * v for w, v in zip(weights, values)), 9) not in (*values, *weights):
            return {"weights": weights, "values": values}


def _temperature(rng):
    """Drawn again while the option asked gets under 0.02 or over 0.98: such a probability is,
    within the card's 0.005, the 0 or the 1 among the logits shown."""
    while True:
        logits = [float(x) for x in rng.sample(range(-2, 4), 3)]
        temperature, pick = rng.choice((0.5, 1.0, 2.0)), rng.randrange(3)
        exps = [math.exp(x / temperature) for x in logits]
        if 0.02 <= exps[pick] / sum(exps) <= 0.98:
            return {"logits": logits, "temperature": temperature, "pick": pick}


def _warmup_lr(rng):
    warmup = rng.choice((100, 200, 500, 1000, 2000, 4000))
    return {"peak": rng.choice((1e-4, 3e-4, 6e-4, 1e-3, 3e-3)), "warmup": warmup,
            "step": warmup * rng.randint(1, 9) // 10}


def _kv_numbers(rng):
    return {"layers": rng.choice((2, 4, 6, 8, 12, 16, 24, 32, 48)),
            "tokens": rng.choice((128, 256, 512, 1024, 2048, 4096)), "d": 64 * rng.randint(1, 16)}


def _sqrt_scale(rng):
    """d_k a square, so √d_k is whole and the scaling can be done in the head, as in an interview;
    scores up to 40 keep the answer (score/√d_k) from ever equalling d_k itself."""
    return {"score": rng.randint(2, 80) / 2, "d_k": rng.choice((16, 64, 256))}


def _init_loss(rng):
    small, large = rng.randint(20, 100), 1000 * rng.randint(1, 256)
    return {"vocab": rng.choice((small, large))}


def _head_split(rng):
    """Batch, sequence, heads and head width all different, so a shape with two axes swapped
    (the transpose forgotten) is never also right."""
    while True:
        batch, seq = rng.randint(1, 16), rng.choice((rng.randint(5, 64), 2 ** rng.randint(7, 11)))
        heads, d_head = rng.choice((2, 4, 6, 8, 12, 16, 32, 64, 96)), rng.choice((16, 32, 64, 128))
        if len({batch, seq, heads, d_head}) == 4:
            return {"batch": batch, "seq": seq, "d": heads * d_head, "heads": heads}


def _head_width(rng):
    while True:
        heads, d_head = rng.choice((2, 4, 6, 8, 12, 16, 20, 25, 32, 40, 64, 96)), 16 * rng.randint(1, 16)
        if heads != d_head:
            return {"d": heads * d_head, "heads": heads}


def _vector_matrix(rng):
    """Whole entries 1..6, so the entry is worked in the head; drawn again while it equals a
    number the question shows."""
    while True:
        x = [float(rng.randint(1, 6)) for _ in range(2)]
        w = [[float(rng.randint(1, 6)) for _ in range(2)] for _ in range(2)]
        pick = rng.randrange(2)
        if x[0] * w[0][pick] + x[1] * w[1][pick] not in {*x, *w[0], *w[1]}:
            return {"x": x, "w": w, "pick": pick}


def _top_k(rng):
    """Four distinct probabilities on a 0.05 grid summing to 1 (no ties at the cut), k 2 or 3, an
    option that is kept; drawn again while the answer is within 0.005 of a probability shown."""
    while True:
        probs, k = _weights(rng, 4), rng.choice((2, 3))
        kept = sorted(range(4), key=lambda i: -probs[i])[:k]
        pick = rng.choice(kept)
        answer = probs[pick] / sum(probs[i] for i in kept)
        if len(set(probs)) == 4 and all(abs(answer - p) > 0.005 for p in probs):
            return {"probs": probs, "k": k, "pick": pick}


def _scale(rng, exponents: range) -> float:
    """A round model or data size: 1, 1.5, 2, 3, 5 or 7 times a power of ten."""
    return rng.choice((1.0, 1.5, 2.0, 3.0, 5.0, 7.0)) * 10.0 ** rng.choice(exponents)


TEMPLATES: dict[str, Template] = {t.generator: t for t in (
    Template("weighted_sum", "2 or 3 weights on a 0.05 grid summing to 1; distinct integer values -9..9, "
             "the blend none of the inputs",
             _weighted_sum),
    Template("softmax", "3 distinct integer scores in -2..3; any position",
             lambda rng: {"scores": [float(x) for x in rng.sample(range(-2, 4), 3)], "pick": rng.randrange(3)}),
    Template("temperature", "3 distinct integer logits in -2..3; T in {0.5, 1, 2}; an option whose "
             "probability is 0.02..0.98",
             _temperature),
    Template("warmup_lr", "peak in {1e-4, 3e-4, 6e-4, 1e-3, 3e-3}; warmup 100..4000; step a tenth "
             "multiple of it", _warmup_lr),
    Template("kv_numbers", "layers 2..48; tokens 128..4096 (powers of 2); d a multiple of 64 up to 1024",
             _kv_numbers),
    Template("attention_params", "d a multiple of 32 from 32 to 2048",
             lambda rng: {"d": 32 * rng.randint(1, 64)}),
    Template("dropout_scale", "p in 0.05..0.5 in steps of 0.05",
             lambda rng: {"p": rng.randint(1, 10) / 20}),
    Template("clip_factor", "norm 2.5..10 in steps of 0.5 (always above the limit); limit in {0.5, 1, 2}",
             lambda rng: {"norm": rng.randint(5, 20) / 2, "limit": rng.choice((0.5, 1.0, 2.0))}),
    Template("nats_to_bits", "loss 0.5..5 nats in steps of 0.05",
             lambda rng: {"loss": rng.randint(10, 100) / 20}),
    Template("block_params", "d a multiple of 32 from 32 to 2048",
             lambda rng: {"d": 32 * rng.randint(1, 64)}),
    Template("sqrt_scale", "score 1..40 in steps of 0.5; d_k in {16, 64, 256}", _sqrt_scale),
    Template("init_loss", "vocabulary 20..100 characters or 1,000..256,000 tokens (thousands)",
             _init_loss),
    Template("head_split", "B 1..16; T 5..64 or 128..2048 (powers of 2); heads 2..96; d_head in "
             "{16, 32, 64, 128}; B, T, heads and d_head all different", _head_split),
    Template("head_width", "heads 2..96; d_head a multiple of 16 up to 256, not equal to heads",
             _head_width),
    Template("dot_spread", "d_k a square from 4 to 1024 (the answer whole)",
             lambda rng: {"d_k": rng.randint(2, 32) ** 2}),
    Template("rule_of_thumb", "L 2..96; d a multiple of 64 up to 8192",
             lambda rng: {"layers": rng.randint(2, 96), "d": 64 * rng.randint(1, 128)}),
    Template("tied_saving", "vocabulary 1,000..260,000; d a multiple of 64 up to 8192",
             lambda rng: {"vocab": rng.randint(1000, 260_000), "d": 64 * rng.randint(1, 128)}),
    Template("perplexity", "loss 0.5..5 nats in steps of 0.05",
             lambda rng: {"loss": rng.randint(10, 100) / 20}),
    Template("recompute_rows", "tokens 5..2000", lambda rng: {"tokens": rng.randint(5, 2000)}),
    Template("attention_entries", "n a multiple of 128 up to 65,536",
             lambda rng: {"n": 128 * rng.randint(1, 512)}),
    Template("swiglu_hidden", "d a multiple of 64 up to 8192", lambda rng: {"d": 64 * rng.randint(1, 128)}),
    Template("chinchilla_tokens", "N in {1, 1.5, 2, 3, 5, 7} × 10^7..10^11",
             lambda rng: {"params": _scale(rng, range(7, 12))}),
    Template("train_flops", "N in {1, 1.5, 2, 3, 5, 7} × 10^7..10^11; D the same × 10^9..10^13",
             lambda rng: {"params": _scale(rng, range(7, 12)), "tokens": _scale(rng, range(9, 14))}),
    Template("vector_matrix", "x and W_V (2×2) with whole entries 1..6; either entry; the answer none "
             "of the numbers shown", _vector_matrix),
    Template("top_k", "4 distinct probabilities on a 0.05 grid summing to 1; k 2 or 3; a kept option "
             "whose answer is no probability shown", _top_k),
    Template("pipeline_bubble", "stages 2..16; micro-batches 1..64",
             lambda rng: {"p": rng.randint(2, 16), "m": rng.randint(1, 64)}),
)}


def is_template(generator: str) -> bool:
    return generator in TEMPLATES


def draw_params(generator: str, rng: random.Random) -> dict:
    return TEMPLATES[generator].draw(rng)


def fresh(card, rng: random.Random | None = None):
    """A ``StudyCard`` with newly drawn inputs (same id: the schedule stays the note's); a card
    that is not generative comes back unchanged."""
    if not card.template or card.numeric is None:
        return card
    from minigpt.study import numeric

    item = card.numeric
    drawn = numeric.generate(item.generator, draw_params(item.generator, rng or random.Random()),
                             tolerance=item.tolerance, abs_tolerance=item.abs_tolerance)
    return replace(card, numeric=drawn, front=drawn.prompt, back=drawn.solution)


def merge_case_state(store: Store, note_ids: list[str]) -> int:
    """Move schedules kept under per-case ids (``<note>.<case>``) to the note's own id.

    Of a note's rows (its own, if any, and its cases'), the earliest due one's FSRS state is kept
    (the memory most in need of review), reps and lapses add up, and it stays suspended only if
    all were; the review log and open flags follow. Returns how many case rows were merged; a
    second run finds none.
    """
    merged = 0
    with store.transaction() as conn:
        for note in note_ids:
            like = note.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ".%"
            cases = conn.execute("SELECT * FROM card_state WHERE card_id LIKE ? ESCAPE '\\'",
                                 (like,)).fetchall()
            if not cases:
                continue
            own = conn.execute("SELECT * FROM card_state WHERE card_id = ?", (note,)).fetchall()
            if not all(isinstance(r["due"], str) and type(r["reps"]) is int and type(r["lapses"]) is int
                       for r in [*own, *cases]):
                continue  # a row the tutor never wrote: the note is left as it is (its readers count the row)
            merging = sorted([*own, *cases], key=lambda r: r["due"])
            keep = merging[0]
            conn.execute("DELETE FROM card_state WHERE card_id = ? OR card_id LIKE ? ESCAPE '\\'",
                         (note, like))
            conn.execute(
                "INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses, suspended,"
                " buried_until, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (note, keep["fsrs_json"], keep["due"], keep["fsrs_state"], sum(r["reps"] for r in merging),
                 sum(r["lapses"] for r in merging), int(all(r["suspended"] for r in merging)),
                 keep["buried_until"], keep["updated_at"]))
            conn.execute("UPDATE review_log SET card_id = ? WHERE card_id LIKE ? ESCAPE '\\'", (note, like))
            conn.execute("INSERT OR IGNORE INTO card_flag(card_id, note, flagged_at, resolved_at) "
                         "SELECT ?, note, flagged_at, resolved_at FROM card_flag "
                         "WHERE card_id LIKE ? ESCAPE '\\' AND resolved_at IS NULL", (note, like))
            conn.execute("DELETE FROM card_flag WHERE card_id LIKE ? ESCAPE '\\'", (like,))
            merged += len(cases)
    return merged


def templated_notes(deck) -> list[str]:
    """The ids of the deck's generative cards (one per templated note)."""
    return [c.id for c in deck if c.template]
