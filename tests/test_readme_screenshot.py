"""The README's screenshot is drawn by scripts/readme_screenshot.py from the app itself, so it
cannot go stale: the script runs, and the saved file is what it draws now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "readme_screenshot.py"
SCREENSHOT = REPO / "docs" / "home-80x24.svg"


def test_the_readme_shows_the_screenshot_the_script_draws():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"]({SCREENSHOT.relative_to(REPO).as_posix()})" in readme


def test_the_screenshot_is_what_the_app_draws_now(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGPT_DATA_DIR", "COLORTERM", "NO_COLOR")}
    fresh = tmp_path / "home.svg"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(fresh)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    svg = fresh.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Your progress" in svg.replace("&#160;", " ")
    assert SCREENSHOT.read_text(encoding="utf-8") == svg, (
        "docs/home-80x24.svg is stale (the home screen changed): run python scripts/readme_screenshot.py")
