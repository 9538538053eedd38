#!/usr/bin/env bash
# A plain, non-editable `pip install .` into a fresh venv, then the app and the CLI used from a
# folder outside the repository: the bundled lessons, data and checkpoints must come with it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
"$py" -m pip install -q "$repo"
cd "$work"
export MINIGPT_DATA_DIR="$work/data"
"$work/venv/bin/minigpt" --help >/dev/null
"$work/venv/bin/minigpt" sample -n 3 --seed 1
"$work/venv/bin/minigpt" eval --json >/dev/null
"$py" - <<'PY'
import asyncio
from minigpt import paths
from minigpt.lessons import load_lessons
from tui.app import TutorApp

assert "site-packages" in str(paths.lessons_dir()), paths.lessons_dir()
lessons = load_lessons()
assert len(lessons) >= 24, len(lessons)

async def main():
    app = TutorApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lessons[0].id)
        await pilot.pause(0.5)
        assert type(app.screen).__name__ == "LessonScreen"

asyncio.run(main())
print(f"installed package: {len(lessons)} lessons, app opens a lesson, CLI samples and evaluates")
PY
