"""The explorers' step-by-step text, checked against values worked by hand."""

import pytest

from minigpt.data import Vocab
from minigpt.models.config import GPTConfig
from minigpt.teaching.explorers import layer_norm_steps, name_ids, parse_vector, real_param_count, rms_norm_steps


def test_layer_norm_of_2_4_6_8():
    lines = layer_norm_steps([2, 4, 6, 8])
    # μ = 5, x − μ = [−3, −1, 1, 3], σ² = (9 + 1 + 1 + 9) / 4 = 5, σ = 2.236, y = ±1.342, ±0.447
    assert lines[1].endswith("= 5.0")
    assert "= 5.0" in lines[3] and "2.236" in lines[4]
    assert "-1.342" in lines[-1] and "-0.447" in lines[-1] and "1.342" in lines[-1]


def test_constant_vector_and_zero_vector_are_explained_not_divided():
    assert "0/0" in layer_norm_steps([3, 3, 3])[-1]
    assert "zero vector" in rms_norm_steps([0, 0])[0]


def test_rms_norm_of_2_4_6_8():
    # mean of squares (4 + 16 + 36 + 64) / 4 = 30, RMS = 5.477, y = x / 5.477
    lines = rms_norm_steps([2, 4, 6, 8])
    assert "5.477" in lines[0] and "0.365" in lines[1] and "1.461" in lines[1]


def test_parse_vector():
    assert parse_vector("2, 4 6,8") == [2.0, 4.0, 6.0, 8.0]
    with pytest.raises(ValueError, match="not a number"):
        parse_vector("2 four")
    with pytest.raises(ValueError):
        parse_vector("   ")


def test_name_ids_and_length_limit():
    vocab = Vocab(tuple(".abcdefghijklmnopqrstuvwxyz"))
    assert name_ids(vocab, " Ana ", 16) == ([0, 1, 14, 1], [".", "a", "n", "a"])
    with pytest.raises(ValueError, match="at most 3"):
        name_ids(vocab, "emma", 4)


def test_real_param_count_of_the_course_model():
    # 27·64 + 16·64 embeddings, 4 blocks of 12·64² + 13·64 (weights, biases, two LayerNorms),
    # final LayerNorm 2·64, head 64·27: 204,544
    assert real_param_count(GPTConfig(vocab_size=27, block_size=16)) == 204_544
