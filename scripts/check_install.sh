#!/usr/bin/env bash
# The wheel installed as a learner installs it, into fresh venvs used from a folder outside the
# repository: once without extras (the app, lessons, study, katas, training and the playground must
# work, and each extra's command must say in one line which extra to install), once with every extra.
#
# One CPU torch for all of them: it is installed once into a base venv, and each fresh venv sees the
# base's site-packages through a .pth file, so pip counts torch as installed and never downloads a
# second one. Everything else the wheel asks for is installed into each venv by pip, as a user's
# `pip install minigpt-tutor` would. Set KEEP=1 to keep the venvs (their folder is printed).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
if [ "${KEEP:-0}" = 1 ]; then echo "venvs kept in $work"; else trap 'rm -rf "$work"' EXIT; fi
PYTHON="${PYTHON:-python3}"

step() { echo "== $*"; }
site_of() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

step "base venv with torch (${TORCH_SPEC:-torch==2.13.0}), shared by the others"
"$PYTHON" -m venv "$work/base"
"$work/base/bin/python" -m pip install -q --upgrade pip
"$work/base/bin/python" -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
base_site="$(site_of "$work/base")"

step "the wheel"
"$work/base/bin/python" -m pip wheel -q --no-deps -w "$work/dist" "$repo"
wheel="$(ls "$work"/dist/minigpt_tutor-*.whl)"

# fresh_venv NAME EXTRAS: a venv that sees the base's torch, with the wheel (and EXTRAS) installed.
fresh_venv() {
  local venv="$work/$1" spec="$wheel"
  [ -n "$2" ] && spec="minigpt-tutor[$2] @ file://$wheel"
  "$PYTHON" -m venv "$venv"
  echo "$base_site" > "$(site_of "$venv")/_shared_torch.pth"
  "$venv/bin/python" -m pip install -q "$spec"
  "$venv/bin/python" -c "import torch, sys; assert torch.__file__.startswith('$base_site'), torch.__file__"
}

# expect_line VENV WANT COMMAND...: the command fails with exactly the one line WANT on its output.
expect_line() {
  local venv="$1" want="$2" got status=0
  shift 2
  got="$("$venv/bin/minigpt" "$@" 2>&1)" || status=$?
  if [ "$status" != 2 ] || [ "$got" != "$want" ]; then
    echo "minigpt $*: exit $status, said: $got (expected: $want)" >&2
    exit 1
  fi
}

cd "$work"
export MINIGPT_DATA_DIR="$work/data"

step "without extras"
fresh_venv core ""
bin="$work/core/bin"
"$bin/minigpt" --help >/dev/null
"$bin/minigpt" doctor >/dev/null || true  # prints what is missing; its exit says whether all is well
"$bin/minigpt" doctor --json | "$bin/python" -c "import json, sys; checks = json.load(sys.stdin)['checks']; \
  assert any(c['name'] == 'extras' for c in checks), checks"
"$bin/minigpt" sample -n 3 --seed 1
"$bin/minigpt" eval --json >/dev/null
"$bin/minigpt" kata list >/dev/null
"$bin/minigpt" progress --json >/dev/null
"$bin/minigpt" train --model bigram --steps 20 --out "$work/data/runs/bigram" >/dev/null
"$bin/minigpt" runs >/dev/null
expect_line "$work/core" "Error: minigpt serve needs the serve extra: pip install 'minigpt-tutor[serve]'" serve
"$bin/python" - <<'PY'
import asyncio

from minigpt import extras, paths
from minigpt.errors import MissingExtraError
from minigpt.lessons import load_lessons
from minigpt.study.anki import export_apkg
from minigpt.study.decks import Deck
from tui import navigation
from tui.app import TutorApp

assert "site-packages" in str(paths.lessons_dir()), paths.lessons_dir()
assert not any(extras.installed(e.name) for e in extras.EXTRAS), [e.name for e in extras.EXTRAS if extras.installed(e.name)]
try:
    export_apkg(Deck(), "cards.apkg")
    raise SystemExit("the Anki export ran without the anki extra")
except MissingExtraError as e:
    assert "pip install 'minigpt-tutor[anki]'" in str(e), e
lessons = load_lessons()
assert len(lessons) >= 24, len(lessons)


async def main():
    app = TutorApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lessons[0].id)
        await pilot.pause(0.5)
        assert type(app.screen).__name__ == "LessonScreen"
        for name in ("flashcards", "katas", "training", "playground"):
            navigation.open_screen(app, name)
            await pilot.pause(0.5)
            assert navigation.is_screen(app.screen, name), (name, app.screen)
            app.pop_screen()
            await pilot.pause(0.1)


asyncio.run(main())
print(f"without extras: {len(lessons)} lessons; a lesson, flashcards, katas, training and the playground open")
PY

step "with every extra"
fresh_venv full "serve,anki,optimizer"
bin="$work/full/bin"
"$bin/minigpt" serve --help >/dev/null
"$bin/python" - <<'PY'
import zipfile

from minigpt import extras
from minigpt.study.anki import export_apkg
from minigpt.study.decks import cached_decks

import tui.browser.serve_server  # noqa: F401  (the serve extra's server imports)

assert all(extras.installed(e.name) for e in extras.EXTRAS)
result = export_apkg(cached_decks(), "cards.apkg")
assert zipfile.is_zipfile(result.path) and result.notes > 0, result
print(f"with every extra: serve imports, {result.notes} notes exported to an Anki package")
PY
echo "check_install: the wheel works without extras and with every extra"
