"""The child side of grading: run the learner's function on every case and write what it returned.

Started by :mod:`minigpt.katas.sandbox` in the bounded snippet runner (time, output and memory
limits). It writes no verdict, only outputs, to a file named by the parent with a random token;
the parent computes the expected values and compares. So printing "PASS", exiting with status 0
or writing a fake file cannot pass a case: only returning the right values can.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def main(kata_folder: str, code_path: str, out_path: str, token: str) -> None:
    from minigpt import guarded
    from minigpt.errors import KataCodeError
    from minigpt.katas import values
    from minigpt.katas.catalogue import load_kata
    from minigpt.katas.grading import call_cases, load_function

    kata = load_kata(Path(kata_folder))
    source = guarded.read_text(Path(code_path), guarded.TEXT_FILE_BYTES)
    try:
        function = load_function(kata, source, filename="your code")
        outcomes, calls = call_cases(kata, function)
        result = {"token": token, "forbidden_calls": calls, "outcomes": [
            [kind, values.encode(v) if kind == "value" else v] for kind, v in outcomes]}
    except KataCodeError as e:
        result = {"token": token, "error": str(e)}
    tmp = f"{out_path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, out_path)
