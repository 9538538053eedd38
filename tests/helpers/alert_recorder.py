"""An alert command that records what it was given: each run appends its MINIGPT_* environment
as one JSON line (shared by the alert tests and the multi-node test)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

RECORDER = ("import json, os, sys\n"
            "with open(sys.argv[1], 'a') as f:\n"
            "    f.write(json.dumps({k: v for k, v in os.environ.items() if k.startswith('MINIGPT_')}) + '\\n')\n")


def recorder_command(tmp_path: Path) -> tuple[str, Path]:
    script, out = tmp_path / "record.py", tmp_path / "events.jsonl"
    script.write_text(RECORDER)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(out))}", out


def recorded(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
