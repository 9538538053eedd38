"""Agreement of the offline rubric check with a human marker, on a labelled set of typed answers.

    python benchmarks/rubric_agreement.py            # the held-apart part (the figures we report)
    python benchmarks/rubric_agreement.py --tune     # the part used while tuning the matcher

tests/data/rubric_labels.toml holds answers (good, partial, off-topic) to explain questions with
the checklist points a human finds in each. A card is held apart when the first byte of
sha256(card id) mod 10 is below 4 (a fixed rule, about 40% of the cards); its answers were never
read while the matcher was tuned. Each (answer, point) pair is one decision: a pre-tick is a true
positive when the marker found the point too. Prints precision and recall of the pre-ticks.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minigpt.study.decks import load_decks  # noqa: E402
from minigpt.study.rubric import alias_table, check  # noqa: E402

LABELS = ROOT / "tests" / "data" / "rubric_labels.toml"


def held_apart(card_id: str) -> bool:
    return hashlib.sha256(card_id.encode()).digest()[0] % 10 < 4


def agreement(held: bool, *, show: bool = False) -> dict[str, float]:
    deck = load_decks(numbers=False)
    aliases = alias_table(deck)
    answers = tomllib.loads(LABELS.read_text(encoding="utf-8"))["answer"]
    tp = fp = fn = 0
    cards = set()
    for a in answers:
        if held_apart(a["card"]) != held:
            continue
        cards.add(a["card"])
        found = set(check(deck[a["card"]], a["text"], aliases).found)
        truth = set(a["points"])
        tp += len(found & truth)
        fp += len(found - truth)
        fn += len(truth - found)
        if show and found != truth:
            print(f"  {a['card']} {a['kind']}: pre-ticked {sorted(found)}, marker {sorted(truth)}")
    return {"cards": len(cards), "answers": sum(held_apart(a["card"]) == held for a in answers),
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true", help="the tuning part, with its disagreements")
    args = parser.parse_args()
    part = "tuning" if args.tune else "held-apart"
    r = agreement(held=not args.tune, show=args.tune)
    print(f"{part}: {r['cards']} questions, {r['answers']} answers; "
          f"precision {r['precision']:.3f}, recall {r['recall']:.3f}")


if __name__ == "__main__":
    main()
