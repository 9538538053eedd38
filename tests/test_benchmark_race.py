"""The time-to-quality race: its verdict, and one tiny race run end to end."""

from __future__ import annotations

from benchmarks.race import race, shortest_at_or_below
from minigpt.data import load_dataset


def test_the_verdict_is_the_shortest_budget_at_or_below_the_reference():
    losses = {10.0: 2.10, 15.0: 2.05, 20.0: 2.00, 30.0: 1.95}
    assert shortest_at_or_below(losses, 2.05) == 15.0  # "at or below": equal counts
    assert shortest_at_or_below(losses, 2.5) == 10.0
    assert shortest_at_or_below(losses, 1.9) is None
    assert shortest_at_or_below({30.0: 1.9, 10.0: 2.2}, 2.0) == 30.0  # order of the dict does not matter


def test_a_tiny_race_scores_both_sides_on_the_same_test_split(tmp_path, capsys):
    names = tmp_path / "names.txt"
    names.write_text("\n".join(f"{a}{b}{c}" for a in "abcde" for b in "aeiou" for c in "lmnrst"))
    ds = load_dataset(names)
    result = race(ds, changes={"d_model": 16, "n_heads": 2, "n_layers": 1, "eval_interval": 5},
                  budgets=(0.5, 1.0), makemore_seconds=0.4)
    assert set(result["ours"]) == {0.5, 1.0} and result["makemore_steps"] > 0
    assert all(steps > 0 and 0 < test < 10 for steps, test in result["ours"].values())
    assert result["first"] == shortest_at_or_below({b: t for b, (_, t) in result["ours"].items()},
                                                   result["makemore_test"])
    out = capsys.readouterr().out
    assert "makemore after" in out and "[race]" in out
