"""Kata fixes of the round-4 content audit (W1, W2, M2, M6): each message, label and tolerance
checked against a solution written independently of the checkers.

Graded in this process (minigpt.katas.grading.grade_function), as tests/test_katas_mistakes.py
does, to stay quick.
"""

from __future__ import annotations

import pytest
import torch

from minigpt.katas import values
from minigpt.katas.catalogue import kata_by_name, load_katas
from minigpt.katas.checkers import checker
from minigpt.katas.grading import grade_function

# Temperature as p ** (1/T) renormalised: the same distribution as softmax(z / T), so applied FIRST
# it is right; applied after top-k/top-p it changes which tokens top-p keeps.
_SAMPLING = '''
import torch
def sampling_filter(logits, temperature=1.0, top_k=None, top_p=None):
    p = torch.softmax(logits, dim=-1)
    def temper(p):
        p = p ** (1 / temperature)
        return p / p.sum(dim=-1, keepdim=True)
    if {first}:
        p = temper(p)
    if top_k is not None and top_k < p.shape[-1]:
        kth = torch.topk(p, top_k, dim=-1).values[..., -1:]
        p = p.masked_fill(p < kth, 0.0)
        p = p / p.sum(dim=-1, keepdim=True)
    if top_p is not None:
        srt, idx = p.sort(dim=-1, descending=True)
        drop = srt.cumsum(dim=-1) - srt >= top_p
        p = p.masked_fill(torch.zeros_like(drop).scatter(-1, idx, drop), 0.0)
        p = p / p.sum(dim=-1, keepdim=True)
    if not {first}:
        p = temper(p)
    return p
'''


def test_temperature_on_the_probabilities_first_is_accepted():
    report = grade_function(kata_by_name("sampling_filter"), _SAMPLING.format(first=True))
    assert report.passed, report.lines()


def test_temperature_after_the_filters_is_named_as_an_ordering_mistake():
    report = grade_function(kata_by_name("sampling_filter"), _SAMPLING.format(first=False))
    assert not report.passed
    first = report.failures[0]
    assert "top_p" in first.line()  # only the filters differ: the temperature itself is right
    assert first.mistake and "after top-k/top-p" in first.mistake
    assert "divide the logits" not in first.mistake


def test_a_case_is_labelled_causal_exactly_when_it_runs_with_the_mask():
    for kata in load_katas():
        for case in checker(kata.name).cases():
            if "causal" in case.kwargs or "causal" in case.label:
                assert ("causal" in case.label) == bool(case.kwargs.get("causal")), case.label


_ROPE_FLOAT32_ANGLES = '''
import torch
def rope(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
'''

_PE_FLOAT32_ANGLES = '''
import math, torch
def sinusoidal_positions(T, d, base=10000.0, dtype=torch.float32):
    pos = torch.arange(T, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(base) / d))
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe.to(dtype)
'''


@pytest.mark.parametrize(("name", "source"), [("rope", _ROPE_FLOAT32_ANGLES),
                                              ("sinusoidal_positions", _PE_FLOAT32_ANGLES)],
                         ids=["rope", "sinusoidal_positions"])
def test_float32_angles_are_accepted_and_the_stub_says_so(name, source):
    report = grade_function(kata_by_name(name), source)
    assert report.passed, report.lines()
    assert "float32 or float64" in kata_by_name(name).stub


def test_numbers_that_print_alike_show_how_far_apart_they_are():
    expected = torch.tensor([0.6359499], dtype=torch.float64)
    gap = values.difference(expected, expected + 3e-8)
    assert gap.startswith("at [0]: expected 0.63595, obtained 0.63595")
    assert "differ by 3e-08" in gap
    assert "differ" not in values.difference(expected, expected + 0.1)


def test_the_softmax_stub_says_a_fully_masked_row_is_nan_as_torch_gives():
    stub = kata_by_name("softmax").stub
    assert "-inf everywhere" in stub and "NaN" in stub
    row = torch.full((1, 3), float("-inf"), dtype=torch.float64)
    assert torch.isnan(torch.softmax(row, dim=-1)).all()
    masked = [c for c in checker("softmax").cases() if torch.isinf(c.args[0]).all()]
    assert masked and "NaN" in masked[0].label
