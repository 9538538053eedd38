"""Generative numeric cards (minigpt.study.templates): 100 draws per template (1,000 in soak) checked against
an independent computation, one card per note in the deck, and per-case schedules merged."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from minigpt import numbers
from minigpt.store import Store
from minigpt.study import numeric, scheduler
from minigpt.study.templates import TEMPLATES, draw_params, fresh, merge_case_state, templated_notes

# Draws per template: the 27 templates at 1,000 draws took 7.5-15 s on the loaded 2 cores; the
# default tier draws 100 of each, the soak tier 1,000 (the same check, more inputs).
DRAWS = [pytest.param(100, id="100"), pytest.param(1000, id="1000", marks=pytest.mark.soak)]


def independent(generator: str, p: dict) -> float:
    """Each value worked out again in plain Python (no torch, no minigpt maths)."""
    if generator == "weighted_sum":
        return sum(w * v for w, v in zip(p["weights"], p["values"]))
    if generator == "softmax":
        e = [math.exp(x) for x in p["scores"]]
        return e[p["pick"]] / sum(e)
    if generator == "temperature":
        e = [math.exp(x / p["temperature"]) for x in p["logits"]]
        return e[p["pick"]] / sum(e)
    if generator == "warmup_lr":
        return p["peak"] * (p["step"] + 1) / p["warmup"]  # the trainer's count: step 0 gets peak/warmup
    if generator == "kv_numbers":
        return 2 * p["layers"] * p["tokens"] * p["d"]
    if generator == "attention_params":
        return 4 * p["d"] ** 2
    if generator == "dropout_scale":
        return 1 / (1 - p["p"])
    if generator == "clip_factor":
        return min(1.0, p["limit"] / p["norm"])
    if generator == "nats_to_bits":
        return p["loss"] / math.log(2)
    if generator == "block_params":  # four d×d matrices, two d×4d, their biases, two LayerNorms
        d = p["d"]
        return (4 * d * d + 4 * d) + (2 * 4 * d * d + 4 * d + d) + 2 * 2 * d
    if generator == "sqrt_scale":
        return p["score"] / p["d_k"] ** 0.5
    if generator == "init_loss":
        return -math.log(1 / p["vocab"])
    if generator == "head_split":
        return (p["batch"], p["heads"], p["seq"], p["d"] // p["heads"])
    if generator == "head_width":
        return p["d"] / p["heads"]
    if generator == "dot_spread":
        return math.sqrt(sum(1 for _ in range(p["d_k"])))  # d_k unit variances add up
    if generator == "rule_of_thumb":
        return 12 * p["layers"] * p["d"] ** 2
    if generator == "tied_saving":
        return p["vocab"] * p["d"]
    if generator == "perplexity":
        return math.e ** p["loss"]
    if generator == "recompute_rows":
        return sum(range(1, p["tokens"] + 1))
    if generator == "attention_entries":
        return p["n"] ** 2
    if generator == "swiglu_hidden":  # 3·d·h = 2·d·4d
        return 2 * p["d"] * 4 * p["d"] / (3 * p["d"])
    if generator == "chinchilla_tokens":
        return 20 * p["params"]
    if generator == "train_flops":
        return 6 * p["params"] * p["tokens"]
    if generator == "vector_matrix":
        return sum(x * row[p["pick"]] for x, row in zip(p["x"], p["w"]))
    if generator == "top_k":
        kept = sorted(p["probs"], reverse=True)[:p["k"]]
        return p["probs"][p["pick"]] / sum(kept)
    if generator == "pipeline_bubble":
        return (p["p"] - 1) / (p["m"] + p["p"] - 1)
    raise AssertionError(f"no independent computation for {generator}")


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("generator", sorted(TEMPLATES))
def test_every_draw_has_a_clean_answer(generator, draws):
    rng = random.Random(generator)
    prompts = set()
    for _ in range(draws):
        params = draw_params(generator, rng)
        item = numeric.generate(generator, params)
        want = independent(generator, params)
        if item.is_shape:  # a shape: exact, and a shape with two axes swapped is refused
            assert item.value == want and numeric.check(item, item.answer_text).correct, params
            swapped = (want[0], want[2], want[1], want[3])
            assert not numeric.check(item, str(swapped)).correct, params
            prompts.add(item.prompt)
            continue
        assert float(item.value) == pytest.approx(want, rel=1e-9, abs=1e-12), params
        assert (math.isfinite(want) and want > 0) or generator == "weighted_sum"
        # the answer as shown is accepted by the one parser, and a clearly wrong one is not
        assert numeric.check(item, item.answer_text).correct, (params, item.answer_text)
        off = want + max(3 * item.abs_tolerance, 3 * item.tolerance * abs(want), 0.05 * abs(want), 0.1)
        assert not numeric.check(item, repr(off)).correct, params
        assert not re.search(rf"(?<![\d.]){re.escape(item.answer_text)}(?!\.?\d)", item.prompt), params
        shown = re.findall(r"\d[\d,.]*(?:e[-+]?\d+)?", item.prompt)  # tests/test_content_rules' rule
        assert not any(numbers.is_number(t) and numeric.values_agree(numeric.parse_number(t), want,
                                                                     item.tolerance, item.abs_tolerance)
                       for t in shown), params
        prompts.add(item.prompt)
    assert len(prompts) >= 10  # the inputs really change (dropout has ten rates, the rest far more)


def test_deck_has_one_card_per_templated_note_and_reviews_draw_afresh():
    from minigpt.study.decks import load_decks

    deck = load_decks()
    notes = templated_notes(deck)
    assert "num.warmup-lr" in notes and "num.kv-numbers" in notes
    assert not any(c.id.startswith("num.warmup-lr.") for c in deck)
    card = deck["num.warmup-lr"]
    drawn = {fresh(card, random.Random(i)).front for i in range(10)}
    assert len(drawn) > 1 and all(fresh(card).id == card.id for _ in range(3))
    assert deck["num.exercise-sizes.tiny"].template == ""  # no `template = true`: cases stay cards
    assert {"num.block-params", "num.sqrt-scale", "num.init-loss", "num.head-split"} <= set(notes)
    described = load_decks(numbers=False)  # torch-free listing: same ids
    assert set(described.cards) == set(deck.cards)


def test_per_case_schedules_merge_into_the_note(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with store.transaction() as conn:
        for cid, due_days, reps, lapses in (("num.warmup-lr.half", 5, 3, 1), ("num.warmup-lr.full", 2, 4, 0),
                                            ("num.exercise-sizes.tiny", 1, 1, 0)):
            card = scheduler.new_card(cid, now)
            conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses, updated_at)"
                         " VALUES (?, ?, ?, 2, ?, ?, ?)",
                         (cid, scheduler.card_to_json(card), scheduler.iso(now + timedelta(days=due_days)), reps, lapses,
                          scheduler.iso(now)))
            conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at) VALUES (?, 3, 'review', ?)",
                         (cid, scheduler.iso(now)))
        conn.execute("INSERT INTO card_flag(card_id, note, flagged_at) VALUES ('num.warmup-lr.half', 'x', 'now')")
    assert merge_case_state(store, ["num.warmup-lr"]) == 2
    rows = {r["card_id"]: r for r in store.conn.execute("SELECT * FROM card_state")}
    assert set(rows) == {"num.warmup-lr", "num.exercise-sizes.tiny"}  # other notes untouched
    merged = rows["num.warmup-lr"]
    assert merged["due"] == scheduler.iso(now + timedelta(days=2)) and (merged["reps"], merged["lapses"]) == (7, 1)
    logged = [r[0] for r in store.conn.execute("SELECT card_id FROM review_log ORDER BY id")]
    assert logged == ["num.warmup-lr", "num.warmup-lr", "num.exercise-sizes.tiny"]
    assert [r[0] for r in store.conn.execute("SELECT card_id FROM card_flag")] == ["num.warmup-lr"]
    assert merge_case_state(store, ["num.warmup-lr"]) == 0  # a second run finds nothing


def test_a_template_is_declared_in_the_deck(tmp_path):
    from minigpt.errors import DeckError
    from minigpt.study.decks import load_deck_file

    note = '[[numeric]]\nid = "num.x"\ngenerator = "{gen}"\nlesson = "l"\n{extra}\n[[numeric.case]]\nid = "a"\n{case}\n'
    path = tmp_path / "d.toml"
    path.write_text(note.format(gen="block_params", extra="template = true", case="d = 64"))
    assert [(c.id, c.template) for c in load_deck_file(path)] == [("num.x", "block_params")]
    path.write_text(note.format(gen="block_params", extra="", case="d = 64"))
    assert [(c.id, c.template) for c in load_deck_file(path)] == [("num.x.a", "")]  # cases, fixed
    path.write_text(note.format(gen="gelu", extra="template = true", case="x = 1.0"))
    with pytest.raises(DeckError, match="no template"):
        load_deck_file(path)
    path.write_text(note.format(gen="block_params", extra='template = "yes"', case="d = 64"))
    with pytest.raises(DeckError, match="true or false"):
        load_deck_file(path)
