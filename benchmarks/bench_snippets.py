"""How long each lesson snippet runs: what a learner waits for after pressing enter (prints figures; not a test).

    python benchmarks/bench_snippets.py            # each in this process, torch already imported
    python benchmarks/bench_snippets.py --fresh    # each as the app runs it: a fresh interpreter

The app stops a snippet after ``minigpt.snippets.TIME_LIMIT_S`` seconds; a snippet over it is
marked. In-process figures are the snippet's own work (one thread, as the app gives a snippet);
``--fresh`` adds the interpreter's start and torch's import, which the learner waits for too.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minigpt import lessons
from minigpt.snippets import TIME_LIMIT_S, run_snippet


def in_process(code: str) -> float:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__main__"})
    finally:
        torch.set_num_threads(threads)
    return time.perf_counter() - start


def fresh(code: str) -> float:
    start = time.perf_counter()
    result = run_snippet(code)
    if not result.ok:
        raise RuntimeError(result.stderr[-2000:])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="a fresh interpreter per snippet, as the app runs it")
    args = parser.parse_args()
    run = fresh if args.fresh else in_process
    times = []
    print(f"{'lesson':<36} {'#':>2} {'seconds':>8}")
    for lesson in lessons.load_lessons():
        for index, code in enumerate(lesson.snippets()):
            seconds = run(code)
            times.append(seconds)
            over = f"  over the app's {TIME_LIMIT_S:g} s limit" if seconds >= TIME_LIMIT_S else ""
            print(f"{lesson.id:<36} {index:>2} {seconds:>8.2f}{over}", flush=True)
    print(f"{len(times)} snippets: {sum(times):.1f} s in all, the slowest {max(times):.2f} s")


if __name__ == "__main__":
    main()
