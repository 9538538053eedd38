"""Grade the learner's code in the bounded snippet runner (minigpt.lessons.run_snippet).

The code is first read (never run) for a forbidden call; then a fresh interpreter, limited in
time, output and memory, runs :mod:`minigpt.katas.harness`, which writes the learner's outputs
to a file in a private temporary folder under a random name and token. This process decodes them
and judges them against the reference it computes itself.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import threading
from pathlib import Path

from minigpt import guarded
from minigpt.errors import KataCodeError
from minigpt.katas.catalogue import Kata
from minigpt.katas.forbidden import check_source
from minigpt.katas.grading import Report, judge

GRADE_TIME_LIMIT_S = 30.0  # torch's import (a few seconds on a busy machine) plus every case


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def grade_source(kata: Kata, source: str, *, timeout: float = GRADE_TIME_LIMIT_S,
                 stop: threading.Event | None = None) -> Report:
    from minigpt.lessons import run_snippet

    try:
        check_source(source, kata.forbidden, kata.function)
    except KataCodeError as e:
        return Report(kata.name, error=str(e))
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="minigpt-kata-") as tmp:
        code_path = Path(tmp) / f"{kata.function}.py"
        code_path.write_text(source, encoding="utf-8")
        out_path = Path(tmp) / f"result-{token}.json"
        program = ("from minigpt.katas.harness import main\n"
                   f"main({str(kata.folder)!r}, {str(code_path)!r}, {str(out_path)!r}, {token!r})\n")
        run = run_snippet(program, timeout=timeout, stop=stop)
        try:
            result = json.loads(guarded.read_text(out_path, guarded.TEXT_FILE_BYTES))
        except (OSError, ValueError):
            result = None
    printed = (run.stdout + run.stderr).strip()
    report = Report(kata.name, output=printed, seconds=run.seconds)
    if result is None or not isinstance(result, dict) or result.get("token") != token:
        why = run.note or ("your code ended the grader before it wrote any result (sys.exit, os._exit, "
                           "or a crash)" if run.returncode is not None else "the grader was stopped")
        if "MemoryError" in printed or "bad_alloc" in printed:
            why = "the grader ran out of its memory limit"
        report.error = f"no result: {why}" + (f"\n{_tail(printed)}" if printed else "")
        return report
    if "error" in result:
        report.error = str(result["error"])
        return report
    from minigpt.katas import values

    outcomes = [(kind, values.decode(v) if kind == "value" else str(v)) for kind, v in result.get("outcomes", [])]
    judged = judge(kata, outcomes, list(result.get("forbidden_calls") or []))
    judged.output, judged.seconds = printed, run.seconds
    return judged
