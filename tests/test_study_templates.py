"""Generative numeric cards (minigpt.study.templates): 1,000 draws per template checked against
an independent computation, one card per note in the deck, and per-case schedules merged."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from minigpt.store import Store
from minigpt.study import numeric
from minigpt.study import scheduler as sch
from minigpt.study.templates import TEMPLATES, draw_params, fresh, merge_case_state, templated_notes

DRAWS = 1000  # per template; all of them take well under a second on one core


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
        return p["peak"] * p["step"] / p["warmup"]
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
    raise AssertionError(f"no independent computation for {generator}")


@pytest.mark.parametrize("generator", sorted(TEMPLATES))
def test_every_draw_has_a_clean_answer(generator):
    rng = random.Random(generator)
    prompts = set()
    for _ in range(DRAWS):
        params = draw_params(generator, rng)
        item = numeric.generate(generator, params)
        want = independent(generator, params)
        assert float(item.value) == pytest.approx(want, rel=1e-9, abs=1e-12), params
        assert (math.isfinite(want) and want > 0) or generator == "weighted_sum"
        # the answer as shown is accepted by the one parser, and a clearly wrong one is not
        assert numeric.check(item, item.answer_text).correct, (params, item.answer_text)
        off = want + max(3 * item.abs_tolerance, 3 * item.tolerance * abs(want), 0.05 * abs(want), 0.1)
        assert not numeric.check(item, repr(off)).correct, params
        assert not re.search(rf"(?<![\d.]){re.escape(item.answer_text)}(?!\.?\d)", item.prompt), params
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
    assert deck["num.block-params.d768"].template == ""  # no template: cases stay cards
    described = load_decks(numbers=False)  # torch-free listing: same ids
    assert set(described.cards) == set(deck.cards)


def test_per_case_schedules_merge_into_the_note(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with store.transaction() as conn:
        for cid, due_days, reps, lapses in (("num.warmup-lr.half", 5, 3, 1), ("num.warmup-lr.full", 2, 4, 0),
                                            ("num.block-params.d64", 1, 1, 0)):
            card = sch.new_card(cid, now)
            conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses, updated_at)"
                         " VALUES (?, ?, ?, 2, ?, ?, ?)",
                         (cid, sch.card_to_json(card), sch.iso(now + timedelta(days=due_days)), reps, lapses,
                          sch.iso(now)))
            conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at) VALUES (?, 3, 'review', ?)",
                         (cid, sch.iso(now)))
        conn.execute("INSERT INTO card_flag(card_id, note, flagged_at) VALUES ('num.warmup-lr.half', 'x', 'now')")
    assert merge_case_state(store, ["num.warmup-lr"]) == 2
    rows = {r["card_id"]: r for r in store.conn.execute("SELECT * FROM card_state")}
    assert set(rows) == {"num.warmup-lr", "num.block-params.d64"}  # other notes untouched
    merged = rows["num.warmup-lr"]
    assert merged["due"] == sch.iso(now + timedelta(days=2)) and (merged["reps"], merged["lapses"]) == (7, 1)
    logged = [r[0] for r in store.conn.execute("SELECT card_id FROM review_log ORDER BY id")]
    assert logged == ["num.warmup-lr", "num.warmup-lr", "num.block-params.d64"]
    assert [r[0] for r in store.conn.execute("SELECT card_id FROM card_flag")] == ["num.warmup-lr"]
    assert merge_case_state(store, ["num.warmup-lr"]) == 0  # a second run finds nothing
