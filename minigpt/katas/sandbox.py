"""Grade the learner's code in a separate, bounded process, behind a reaper; judge its outputs here.

The code is first read (never run) for a forbidden call. Then, in a private temporary folder, this
process writes a job (the function's name, the code, the cases' inputs as JSON, the kata's banned
operators; never the kata's folder, never an expected value) and starts, through the bounded runner
(:func:`minigpt.snippets.run_bounded`: time, output and memory limits), a reaper
(:func:`minigpt.spawn.behind_reaper`) that starts :mod:`minigpt.katas.harness`. The harness writes
the learner's outputs under a random name and token; this process decodes them and judges them
against the reference it computes alone. Code that kills its parent kills the reaper only: the
verdict is then "your code ended the grader", and the reaper's child dies with it.
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import threading
from pathlib import Path

from minigpt import guarded, processes, spawn
from minigpt.errors import KataCodeError
from minigpt.katas.ban import banned_ops
from minigpt.katas.catalogue import Kata
from minigpt.katas.forbidden import check_source
from minigpt.katas.grading import Report, judge

GRADE_TIME_LIMIT_S = 30.0  # torch's import (a few seconds on a busy machine) plus every case
AUDIT_GUARD = True  # the harness's audit hook (tests turn it off to reach the reaper alone)
ENDED_BY_YOUR_CODE = "your code ended the grader: it stopped the process that runs it (a signal to its parent)"


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def solution_files(kata: Kata) -> list[tuple[int, int]]:
    """(device, inode) of every kata's ``solution.py`` beside ``kata``: files the harness refuses to open."""
    return sorted(processes.file_ids(kata.folder.parent.glob("*/solution.py")))


def job(kata: Kata, source: str, token: str, out_path: Path) -> dict:
    """What the harness is sent: everything it needs to run the cases, nothing it could pass them with."""
    from minigpt.katas import values
    from minigpt.katas.checkers import checker as checker_for

    checker = checker_for(kata.name)
    cases = [[[values.encode(a) for a in case.args], {k: values.encode(v) for k, v in case.kwargs.items()}]
             for case in checker.cases()]
    return {"token": token, "out": str(out_path), "function": kata.function, "source": source, "cases": cases,
            "forbidden": list(kata.forbidden), "banned_ops": banned_ops(kata.forbidden),
            "solution_files": solution_files(kata), "audit": AUDIT_GUARD, "adapter": checker.adapter}


def _no_result(run, printed: str) -> str:
    """Why the harness wrote no result, in the learner's terms."""
    if run.note:
        return f"no result: {run.note}"
    if run.returncode is not None and run.returncode < 0:
        return ENDED_BY_YOUR_CODE
    if "MemoryError" in printed or "bad_alloc" in printed:
        return "no result: the grader ran out of its memory limit"
    if run.returncode is not None:
        return "no result: your code ended the grader before it wrote any result (sys.exit, os._exit, or a crash)"
    return "no result: the grader was stopped"


def grade_source(kata: Kata, source: str, *, timeout: float = GRADE_TIME_LIMIT_S,
                 stop: threading.Event | None = None) -> Report:
    from minigpt.snippets import run_bounded

    try:
        check_source(source, kata.forbidden, kata.function)
    except KataCodeError as e:
        return Report(kata.name, error=str(e))
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="minigpt-kata-") as tmp:
        out_path = Path(tmp) / f"result-{token}.json"
        job_path = Path(tmp) / f"job-{secrets.token_hex(8)}.json"
        job_path.write_text(json.dumps(job(kata, source, token, out_path)), encoding="utf-8")
        program = f"from minigpt.katas.harness import main\nmain({str(job_path)!r})\n"
        run = run_bounded(spawn.behind_reaper([sys.executable, "-u", "-c", program]), timeout=timeout,
                          stop=stop, cwd=tmp)
        try:
            result = json.loads(guarded.read_text(out_path, guarded.TEXT_FILE_BYTES))
        except (OSError, ValueError):
            result = None
    printed = (run.stdout + run.stderr).strip()
    report = Report(kata.name, output=printed, seconds=run.seconds)
    if result is None or not isinstance(result, dict) or result.get("token") != token:
        report.error = _no_result(run, printed)
        if printed and report.error != ENDED_BY_YOUR_CODE:
            report.error += f"\n{_tail(printed)}"
        return report
    calls = [str(c) for c in result.get("forbidden_calls") or []]
    refused = [str(r) for r in result.get("refused") or []]
    if refused and not calls:
        report.error = f"your code tried {refused[0]}, which the kata grader refuses"
        return report
    if "error" in result and not calls:
        report.error = str(result["error"])
        return report
    from minigpt.katas import values

    outcomes = [(kind, values.decode(v) if kind == "value" else str(v)) for kind, v in result.get("outcomes", [])]
    judged = judge(kata, outcomes, calls)
    judged.output, judged.seconds = printed, run.seconds
    return judged
