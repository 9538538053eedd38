"""The quantization / LoRA lesson's worked numbers, pinned against values worked by hand."""

from __future__ import annotations

import pytest

from minigpt.models.quantize import QuantConfig
from minigpt.teaching import compression as C
from minigpt.teaching.examples import compression as X
from minigpt.teaching.examples.catalog import render_example


def test_the_outlier_example():
    rows = X.outlier_rows()
    step = 4.0 / 7  # int4 keeps −7 … 7: the outlier 4.0 is 7 steps
    # per tensor: row 2 (0.2, −0.16, 0.05, 0.3) is 0.35, −0.28, 0.09, 0.525 steps → 0, 0, 0, 1
    assert rows["tensor"][1].tolist() == pytest.approx([0, 0, 0, step])
    assert rows["tensor"][0].tolist() == pytest.approx([0, -step, 0, 4.0])  # 0.3/0.571 = 0.525 → 1
    s2 = 0.3 / 7  # per row: 4.67, −3.73, 1.17, 7 steps → 5, −4, 1, 7
    assert rows["channel"][1].tolist() == pytest.approx([5 * s2, -4 * s2, s2, 0.3])
    shown = render_example("quantization.outlier")
    assert "0.5714" in shown and "0.0429" in shown and "0.271" in shown  # 0.3 − 0.0 … worst: 0.571 − 0.3


def test_the_shipped_model_bytes_and_losses():
    base, int8_channel, int4_tensor, int4_channel = C.quantization_table(
        (QuantConfig(8, "channel"), QuantConfig(4, "tensor"), QuantConfig(4, "channel")))
    # 204,544 parameters; 201,088 in matrices (tok 27×64, pos 16×64, 4 × (192+64+256)×64 + 64×256,
    # head 27×64), the other 3,456 (biases, norms) stay float32.
    assert int8_channel.bytes.float_bytes == 204_544 * 4
    assert int8_channel.bytes.n_quantized == 201_088
    rows = 27 + 16 + 4 * (192 + 64 + 256 + 64) + 27  # 2,374 scales, one per output row
    assert int8_channel.bytes.quant_bytes == 201_088 + 4 * rows + 4 * 3_456 == 224_408
    assert int4_tensor.bytes.quant_bytes == 201_088 // 2 + 4 * 19 + 4 * 3_456 == 114_444  # 19 matrices
    # the first 1,000 test names: near the checkpoint's loss on all of them (1.9466)
    assert base.test_loss == pytest.approx(1.9466, abs=0.05)
    assert abs(int8_channel.test_loss - base.test_loss) < 0.002
    assert int4_tensor.test_loss > int4_channel.test_loss > base.test_loss


def test_lora_counts_and_merge_on_the_shipped_model():
    total, per_rank = C.lora_counts((1, 4))
    assert total == 204_544 and per_rank == {1: 4_096, 4: 16_384}  # 1,024·r per block, 4 blocks
    change, diff = C.merge_check()
    assert change > 0.01 and diff < 1e-4
    assert "2.0%" in render_example("lora.counts")
