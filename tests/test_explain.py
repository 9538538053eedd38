"""The stepper's model: explanations agree with the trace, export round-trips, predictions check."""

from __future__ import annotations

import csv
import io
import math

import pytest
import torch

from minigpt.teaching import heatmap
from minigpt.teaching.attention import BUGS, COURSE_EXAMPLE, check_trace, run_preset
from minigpt.teaching.stepper import (
    BUG_ORDER,
    check_answer,
    explain_cell,
    export_csv,
    export_markdown,
    make_question,
    parse_number,
    preset_state,
    stage_note,
    stage_panels,
    stages_for,
)


def test_course_stages_and_scaled_weights():
    s = preset_state(0)
    mh = s.compute()
    assert stages_for(s) == ["input", "qkv", "scores", "scaled", "masked", "weights", "output"]
    A = stage_panels(s, mh, "weights")[0].values
    assert [round(v, 3) for v in A[0]] == [0.154, 0.313, 0.313, 0.220]
    assert [round(v, 3) for v in A[3]] == [0.226, 0.226, 0.322, 0.226]
    assert "course prints row 3" in stage_note(s, "weights")
    s.bugs = {"no_scaling"}
    mh = s.compute()
    assert [round(v, 3) for v in stage_panels(s, mh, "weights")[0].values[0]] == [0.124, 0.336, 0.336, 0.204]
    assert [round(v, 3) for v in stage_panels(s, mh, "output")[0].values[0]] == [0.562, 1.336]


def test_explanations_are_term_by_term_and_match_the_trace():
    s = preset_state(0)
    mh = s.compute()
    assert explain_cell(s, mh, "scores", "S", 2, 1) == "S[2,1] = q₂·k₁ = 1.0×1.0 + 1.0×0.0 = 1.00"
    w = explain_cell(s, mh, "weights", "A", 3, 2)
    assert w.endswith(f"= {mh.heads[0].weights[3, 2].item():.3f}") and "along row 3" in w
    out = explain_cell(s, mh, "output", "out", 0, 1)
    assert out.startswith("out[0,1] = Σₖ A[0,k]·V[k,1]") and out.endswith(f"{mh.heads[0].output[0, 1].item():.3f}")
    assert explain_cell(s, mh, "qkv", "Q", 2, 0).startswith("Q[2,0] = x₂·W_Q[:,0] = 1.0×1.0 + 1.0×0.0")
    s.causal = True
    mh = s.compute()
    assert "masked" in explain_cell(s, mh, "masked", "M", 0, 3)
    assert "exactly zero" in explain_cell(s, mh, "weights", "A", 0, 3)


def test_multi_head_stages_and_explanations():
    s = preset_state(1)
    s.causal = True
    mh = s.compute()
    assert stages_for(s)[-3:] == ["output", "concat", "wo"]
    split = stage_panels(s, mh, "split", head=1)[0]
    assert split.shape == "5×2" and split.values[2][0] == mh.Q[2, 2].item()
    assert "head 1's out[2,1]" in explain_cell(s, mh, "concat", "concat", 2, 3, head=1)
    wo = explain_cell(s, mh, "wo", "out", 4, 0)
    assert wo.endswith(f"{mh.output[4, 0].item():.3f}")


@pytest.mark.parametrize("k", range(5))
def test_each_bug_turns_exactly_one_check_red(k):
    # k_not_transposed needs T = d_k for the shapes to multiply: use a 4-token, d=4 one-head preset.
    s = preset_state(2, seed=3, shape=(4, 4, 1)) if BUG_ORDER[k] == "k_not_transposed" else preset_state(0)
    s.causal = True
    assert all(c.status == "ok" for c in check_trace(s.compute().heads[0]))
    s.bugs = {BUG_ORDER[k]}
    failed = [c for c in check_trace(s.compute().heads[0]) if c.status == "fail"]
    assert len(failed) == 1


def test_export_markdown_and_csv_round_trip():
    s = preset_state(0)
    s.causal = True
    mh = s.compute()
    p = stage_panels(s, mh, "masked")[0]
    md = export_markdown(p, "masked")
    assert "| the | 0.000 | −∞ | −∞ | −∞ |" in md
    rows = list(csv.reader(io.StringIO(export_csv(p))))
    assert rows[0] == ["", "the", "cat", "sat", "down"]
    assert float(rows[3][3]) == mh.heads[0].masked[2, 2].item() and math.isinf(float(rows[1][2]))


def test_predictions_and_parsing():
    s = preset_state(0)
    mh = s.compute()
    A = stage_panels(s, mh, "weights")[0]
    q = make_question(A, 2, 0)
    assert q.kind == "argmax" and q.expected == 2
    assert check_answer(q, "sat", A.col_labels)[0] and check_answer(q, "2", A.col_labels)[0]
    assert not check_answer(q, "0", A.col_labels)[0]
    with pytest.raises(ValueError, match="out of range"):
        check_answer(q, "9", A.col_labels)
    S = stage_panels(s, mh, "scores")[0]
    q = make_question(S, 2, 2)
    assert check_answer(q, "2", S.col_labels)[0] and not check_answer(q, "1.5", S.col_labels)[0]
    with pytest.raises(ValueError, match="not a number"):
        check_answer(q, "two", S.col_labels)
    assert parse_number(" −0,5 ") == -0.5
    for bad in ("", "abc", "inf"):
        with pytest.raises(ValueError):
            parse_number(bad)


def test_editing_an_input_recomputes_and_computed_stages_refuse():
    s = preset_state(0)
    s.set_entry("X", 0, 0, 2.0)
    mh = s.compute()
    assert torch.allclose(mh.heads[0].weights, run_preset(COURSE_EXAMPLE).weights) is False
    assert mh.X[0, 0].item() == 2.0
    with pytest.raises(ValueError, match="computed"):
        s.set_entry("Q", 0, 0, 1.0)


def test_heatmap_levels_and_glyphs():
    assert heatmap.diverging_level(0.0, 2.0) == 0
    assert heatmap.diverging_level(2.0, 2.0) == 3 and heatmap.diverging_level(-0.1, 2.0) == -1
    assert heatmap.diverging_level(float("-inf"), 1.0) == -3
    assert [heatmap.unit_level(v) for v in (0, 0.1, 0.5, 1.0)] == [0, 1, 2, 4]
    assert heatmap.glyph(4, "unit") == "█" and heatmap.glyph(-3, "diverging") == "▼"
    assert heatmap.half_block_rows([[0, 1], [0.5, 0], [1, 1]]) == [[(0, 2), (4, 0)], [(4, -1), (4, -1)]]
    assert "fixed 0–1" in heatmap.legend("unit")
    assert set(BUG_ORDER) == set(BUGS)


def test_one_stage_table_defines_every_stage():
    from minigpt.teaching.stepper import STAGE, STAGES

    assert [s.id for s in STAGES] == list(STAGE)
    s = preset_state(0)
    mh = s.compute()
    for stage in STAGES:
        if stage.multi_head_only:
            continue
        panels = stage_panels(s, mh, stage.id)
        assert panels and stage.title and stage.label
        # every stage the stepper shows can explain its first cell
        assert explain_cell(s, mh, stage.id, panels[0].name, 0, 0)
    assert [st.id for st in STAGES if st.row_sums] == ["weights"]


def test_which_key_wins_accepts_every_tied_key():
    s = preset_state(0)  # the course's example: row 3 weights .226 .226 .322 .226 — no tie at the top
    mh = s.compute()
    A = stage_panels(s, mh, "weights")[0]
    # row 0 of the course example: keys 1 and 2 share the largest weight (0.336)
    q = make_question(A, 0, 0)
    assert q.winners == (1, 2)
    for answer in ("1", "2", A.col_labels[1]):
        ok, msg = check_answer(q, answer, A.col_labels)
        assert ok, (answer, msg)
    assert "tie" in msg
    assert not check_answer(q, "0", A.col_labels)[0]


def test_cells_and_predictions_read_numbers_as_a_quiz_does():
    """One reader of typed numbers: 1/5 in a cell editor or a prediction is 0.2, as in a quiz."""
    assert parse_number("1/5") == parse_number("20%") == parse_number("2e-1") == 0.2
    s = preset_state(0)
    s.set_entry("X", 0, 0, parse_number("1/5"))
    assert s.X[0][0] == 0.2
    s.causal = True
    mh = s.compute()
    S = stage_panels(s, mh, "scores")[0]
    q = make_question(S, 0, 0)
    assert check_answer(q, f"{round(q.expected * 1000)}/1000", S.col_labels)[0]
    M = stage_panels(s, mh, "masked")[0]
    masked = make_question(M, 0, len(M.col_labels) - 1)  # a later key: masked to −∞
    assert math.isinf(masked.expected)
    assert check_answer(masked, "-inf", M.col_labels)[0] and check_answer(masked, "−∞", M.col_labels)[0]
    assert not check_answer(masked, "0", M.col_labels)[0]
