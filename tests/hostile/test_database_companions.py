"""After the read-only notice's advice (make the database writable again), progress is saved:
the `-wal` and `-shm` files a read-only open left read-only follow the database.

Permissions mean nothing to root, so as root the scenario runs as `nobody` (through setpriv)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.hostile import REPO

SCENARIO = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from minigpt.store import Store
p = Path({db!r})
s = Store(p); s.set_setting("theme", "a"); s.conn.close()
p.chmod(0o444)
ro = Store(p)                      # the app, opened while the file was read-only
assert ro.read_only and "-shm" in ro.notice, ro.notice
{between}
p.chmod(0o644)                     # the notice's advice, followed
again = Store(p)
print("read_only:", again.read_only, "|", again.notice)
if not again.read_only:
    again.set_setting("theme", "b")
    print("saved:", again.get_setting("theme"))
"""


def _run_as_unprivileged(tmp_path: Path, between: str = "") -> str:
    folder = tmp_path / "progress"
    folder.mkdir()
    code = textwrap.dedent(SCENARIO).format(repo=str(REPO), db=str(folder / "progress.sqlite3"),
                                            between=between)
    if os.geteuid() != 0:
        argv = [sys.executable, "-c", code]
    else:
        python = shutil.which("python3", path="/usr/bin:/bin")
        if shutil.which("setpriv") is None or python is None:
            pytest.skip("running as root without setpriv and a system python3")
        folder.chmod(0o777)
        for parent in [tmp_path, *tmp_path.parents]:
            if parent == Path("/"):
                break
            parent.chmod(parent.stat().st_mode | 0o005)  # nobody may reach the folder
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", python, "-c", code]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    if result.returncode != 0 and "Permission denied" in result.stderr and os.geteuid() == 0:
        pytest.skip(f"nobody cannot run the scenario here: {result.stderr[-200:]}")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_writes_work_again_once_the_database_is_writable(tmp_path):
    out = _run_as_unprivileged(tmp_path)
    assert "read_only: False | None" in out and "saved: b" in out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a -shm owned by another user (made as root)")
def test_a_companion_this_user_cannot_fix_is_named(tmp_path):
    """Not tried by the sweep: a `-shm` owned by someone else, read-only: the notice names it."""
    # The scenario runs as nobody; root makes the foreign -shm while it waits (two marker files).
    shm = tmp_path / "progress" / "progress.sqlite3-shm"
    marker = "import time\nwhile not Path(str(p) + '-go').exists(): time.sleep(0.05)\n"
    code_between = f"Path(str(p) + '-ready').touch()\n{marker}"
    import threading

    def make_foreign_shm() -> None:
        ready = tmp_path / "progress" / "progress.sqlite3-ready"
        for _ in range(400):
            if ready.exists():
                break
            threading.Event().wait(0.05)
        shm.unlink(missing_ok=True)
        shm.write_bytes(b"")
        shm.chmod(0o444)  # root's, read-only
        (tmp_path / "progress" / "progress.sqlite3-go").touch()

    helper = threading.Thread(target=make_foreign_shm)
    helper.start()
    try:
        out = _run_as_unprivileged(tmp_path, between=code_between)
    finally:
        helper.join()
    assert "read_only: True" in out and "progress.sqlite3-shm is not writable" in out
