"""Text bars for probabilities, readable without colour: the number and the bar carry the meaning.

``DistributionTable`` shows one next-character distribution stage by stage (raw logit, ÷T,
after top-k / top-p, final probability), the way step mode teaches the sampling pipeline.
"""

from __future__ import annotations

import math

from textual.widgets import Static

from minigpt.text import markup_escape as escape

BLOCKS = " ▏▎▍▌▋▊▉█"


def bar(p: float, width: int) -> str:
    """A left-aligned bar of ``width`` cells, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, p)) * width * 8)
    full, part = divmod(eighths, 8)
    s = "█" * full + (BLOCKS[part] if part else "")
    return s.ljust(width)


def prob_style(p: float) -> str:
    """Colour as a second cue only: the printed probability is the primary one."""
    if p >= 0.3:
        return "bold $success"
    if p >= 0.05:
        return "$warning"
    return "$error"


def show_char(c: str) -> str:
    return "·end" if c == "." else f"'{c}'"


class DistributionTable(Static):
    """The top characters of a distribution with every stage of the pipeline visible."""

    def show(self, dist, rows: int = 10, bar_width: int = 16) -> None:
        if dist is None:
            self.update("")
            return
        vocab = dist.vocab
        order = sorted(range(vocab.size), key=lambda i: -float(dist.scaled[i]))[:rows]
        lines = [f"[b]{'char':<5}{'logit':>7}{'÷T':>7}{'p(T=1)':>8}  {'filter':<7}{'p final':>8}  bar[/b]"]
        for i in order:
            c = vocab.chars[i]
            kept = math.isfinite(float(dist.filtered[i]))
            p = float(dist.probs[i])
            head = escape(f" {show_char(c):<4}{float(dist.logits[i]):>7.2f}{float(dist.scaled[i]):>7.2f}"
                          f"{float(dist.probs_raw[i]):>8.3f}  ")
            if kept:
                lines.append(f"{head}{'kept':<7}{p:>8.3f}  [{prob_style(p)}]{bar(p, bar_width)}[/]")
            else:
                lines.append(f"{head}[$text-muted]{'✗ cut':<7}{p:>8.3f}[/]")
        hidden = vocab.size - len(order)
        shown = f"{hidden} less likely characters not shown" if hidden else f"all {vocab.size} characters shown"
        lines.append(f"[$text-muted]{shown} · entropy {dist.entropy:.2f} nats[/]")
        self.update("\n".join(lines))
