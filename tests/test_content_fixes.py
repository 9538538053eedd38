"""Numbers corrected by issue 25's audit, each pinned against an independent computation."""

import struct

from minigpt.teaching import precision as P


def _bfloat16_by_hand(x: float) -> float:
    """Round a float32 to bfloat16 by keeping its top 16 bits (round to nearest even)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits += 0x7FFF + ((bits >> 16) & 1)
    return struct.unpack("<f", struct.pack("<I", (bits >> 16) << 16))[0]


def test_the_two_losses_of_the_bf16_example_do_collapse():
    a, b = 1.947, 1.949
    assert _bfloat16_by_hand(a) == _bfloat16_by_hand(b) == 1.9453125
    assert P.stored_as(a, "bfloat16") == P.stored_as(b, "bfloat16") == 1.9453125
    # the old pair did not: one step of bfloat16 lies between them
    assert _bfloat16_by_hand(1.947) != _bfloat16_by_hand(1.951)


def test_the_example_prints_one_value_for_both():
    from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
    from minigpt.teaching.examples.registry import render_example as render

    text = render("precision.loss_in_fp32")
    assert "1.947 and 1.949" in text and "become 1.94531 and 1.94531" in text
