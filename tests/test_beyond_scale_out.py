"""The lessons on what does not fit a laptop (issue 35): their maths pinned against values worked
by hand, their place in the track, and their cards and chapter quizzes."""

from __future__ import annotations

from pathlib import Path

import pytest

from minigpt import lessons as L
from minigpt.study import numeric
from minigpt.study.decks import load_decks
from minigpt.study.quiz import chapter_quiz
from minigpt.teaching import parallelism as PA
from minigpt.teaching.examples.catalog import render_example

SCALE_OUT = {"parallelism": 177}  # lesson id → its place in the track (order)
DECK = Path(__file__).resolve().parents[1] / "lessons" / "decks" / "scale-out.toml"


# --- parallelism ---------------------------------------------------------------------------


def test_mixed_precision_adam_is_sixteen_bytes_per_parameter():
    assert (PA.WEIGHT_BYTES, PA.GRADIENT_BYTES, PA.OPTIMIZER_BYTES) == (2, 2, 12)


@pytest.mark.parametrize("stage,gb", [
    ("data parallel", 112.0),                      # 7e9 · 16
    ("ZeRO-1", 38.5),                              # 7e9 · (2 + 2) + 7e9 · 12 / 8 = 28 + 10.5
    ("ZeRO-2 / FSDP SHARD_GRAD_OP", 26.25),        # 14 + 7e9 · (2 + 12) / 8 = 14 + 12.25
    ("ZeRO-3 / FSDP FULL_SHARD", 14.0),            # 112 / 8
])
def test_seven_billion_on_eight_gpus_by_hand(stage, gb):
    assert PA.memory_per_device(7e9, 8, stage).total / 1e9 == pytest.approx(gb)


def test_zero_papers_own_example_7_5b_on_64_gpus():
    # Rajbhandari et al. 2020, figure 1: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    got = [PA.memory_per_device(7.5e9, 64, s).total / 1e9 for s in PA.STAGES]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]


def test_ring_all_reduce_and_tensor_parallel_traffic_by_hand():
    assert PA.ring_all_reduce_bytes_sent(100, 4) == pytest.approx(150)  # 2 · 3/4 · 100
    tr = PA.tensor_parallel_traffic(batch=1, seq=4096, d_model=4096, t=2)
    assert tr.activation_bytes == 32 * 2**20           # 4096 · 4096 · 2 bytes
    assert tr.all_reduces == 4
    assert tr.sent_per_device == 4 * 32 * 2**20        # 2 · (1/2) · 32 MiB, four times
    assert "| 8 | 32 | 4 | 224 | 7.0 |" in render_example("parallel.tensor_traffic")


@pytest.mark.parametrize("p,m,expected", [(4, 1, 0.75), (4, 4, 3 / 7), (4, 12, 0.2),
                                          (8, 32, 7 / 39)])
def test_bubble_formula_and_the_counted_schedule_agree(p, m, expected):
    assert PA.bubble_fraction(p, m) == pytest.approx(expected)
    assert PA.idle_share(PA.pipeline_schedule(p, m)) == pytest.approx(expected)


def test_schedule_picture_by_hand():
    assert PA.pipeline_schedule(3, 2) == ["12..", ".12.", "..12"]


def test_zero_example_and_numeric_cards_show_the_hand_values():
    md = render_example("parallel.zero_memory")
    assert "| ZeRO-1 | 14.00 | 14.00 | 10.50 | 38.50 |" in md
    assert "ZeRO-3 / FSDP FULL_SHARD: 17.50 GB" in md     # 70e9 · 16 / 64
    item = numeric.generate("zero_memory", {"params": 7e9, "devices": 8, "stage": "ZeRO-1"})
    assert item.value == pytest.approx(38.5)
    assert numeric.generate("pipeline_bubble", {"p": 4, "m": 12}).value == pytest.approx(0.2)


# --- lessons, cards and quizzes --------------------------------------------------------------


@pytest.fixture(scope="module")
def lessons():
    return {l.id: l for l in L.load_lessons()}


@pytest.fixture(scope="module")
def deck():
    return load_decks()


def test_each_lesson_is_in_the_track_with_examples_and_a_snippet(lessons):
    for lesson_id, order in SCALE_OUT.items():
        lesson = lessons[lesson_id]
        assert lesson.order == order
        assert lesson.example_ids() and lesson.snippets(), lesson_id
    ordered = [l.id for l in sorted(lessons.values(), key=lambda l: l.order)]
    assert ordered.index("precision-and-memory") < ordered.index("parallelism")


def test_every_card_of_the_deck_belongs_to_one_of_these_lessons(deck):
    mine = [c for c in deck if Path(c.source).name == DECK.name]
    assert {c.lesson for c in mine} == set(SCALE_OUT)


@pytest.mark.parametrize("lesson_id", sorted(SCALE_OUT))
def test_chapter_quiz_has_six_questions_in_two_formats(deck, lesson_id):
    assert len({c.id.split(":")[0] for c in deck.by_lesson(lesson_id)}) >= 6
    for seed in range(5):
        quiz = chapter_quiz(lesson_id, n=8, seed=seed, deck=deck)
        assert len(quiz) >= 6 and len({q.format for q in quiz}) >= 2, (lesson_id, seed)


def test_the_lessons_cite_their_sources(lessons):
    text = " ".join(lessons["parallelism"].body.split())
    for source in ("Rajbhandari et al., 2020", "Shoeybi et al., 2019", "Huang et al., 2019"):
        assert source in text
