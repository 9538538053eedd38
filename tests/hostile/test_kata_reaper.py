"""Learner code that turns on the grader: signals its parent, starts programs, reads the reference.

Round four (§3 rows 2 and 3): a kata draft calling ``os.kill(os.getppid(), signal.SIGKILL)`` ended
the app and the CLI (the grader's parent was the tutor itself), and a draft could run the kata's
``solution.py`` from disk or reach ``grading.reference()`` through the call stack. Now a reaper
stands between the tutor and the learner's code, an audit hook refuses the easy spellings of
escaping, and the harness is sent cases only.

The default tier checks each guard alone, fast: the audit hook in a bare interpreter, the reaper
with a plain child, the verdict from a killed reaper. The soak tier runs the whole path: the CLI
with the audit hook off (so the reaper alone must hold), and one case per class through the real
grader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from minigpt import processes, spawn
from minigpt.katas.catalogue import load_katas
from tests.helpers.hostile import REPO


def _gone(pid: int) -> bool:
    return processes.start_time(pid) is None or processes.is_zombie(pid)


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.02)
    return _gone(pid)


# Each attempt aims at a bystander process (never this test's own), in a bare interpreter where the
# harness's guard is installed as the real harness installs it (ctypes already imported, as torch does).
ATTEMPTS = """
import ctypes, io, json, os, signal, subprocess, sys, threading
from pathlib import Path
from minigpt.katas.harness import refuse_escapes
target, secret, link, other = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
st = os.stat(secret)
refused = []
refuse_escapes({(st.st_dev, st.st_ino)}, refused)
kill = ["kill", "-9", str(target)]
def reimport():
    del sys.modules["_posixsubprocess"]
    import _posixsubprocess
def spawn_process():
    import multiprocessing
    multiprocessing.get_context("spawn").Process(target=os.getpid).start()
attempts = {
    "os.kill": lambda: os.kill(target, signal.SIGKILL),
    "os.killpg": lambda: os.killpg(target, signal.SIGKILL),
    "signal.pthread_kill": lambda: signal.pthread_kill(threading.main_thread().ident, 0),
    "signal.pidfd_send_signal": lambda: signal.pidfd_send_signal(os.pidfd_open(target), signal.SIGKILL),
    "subprocess.run": lambda: subprocess.run(kill),
    "os.system": lambda: os.system(" ".join(kill)),
    "os.popen": lambda: os.popen(" ".join(kill)).read(),
    "os.execv": lambda: os.execv("/bin/kill", kill),
    "os.fork": lambda: os.fork() or os._exit(0),
    "os.posix_spawn": lambda: os.posix_spawn("/bin/kill", kill, dict(os.environ)),
    "os.spawnv": lambda: os.spawnv(os.P_WAIT, "/bin/kill", kill),
    "multiprocessing fork": lambda: __import__("multiprocessing").get_context("fork").Process(target=os.getpid).start(),
    "multiprocessing spawn": spawn_process,
    "_posixsubprocess again": reimport,
    "ctypes.CDLL kill": lambda: ctypes.CDLL(None).kill(target, 9),
    "ctypes.pythonapi kill": lambda: ctypes.pythonapi.kill(target, 9),
    "open the solution": lambda: open(secret).read(),
    "open a hard link to it": lambda: open(link).read(),
    "os.open": lambda: os.open(secret, os.O_RDONLY),
    "pathlib read_text": lambda: Path(secret).read_text(),
    "io.open_code": lambda: io.open_code(secret).read(),
    "an ordinary file": lambda: open(other).read(),
}
outcome = {}
for label, attempt in attempts.items():
    try:
        attempt()
        outcome[label] = "ran"
    except BaseException as e:
        outcome[label] = type(e).__name__
print(json.dumps({"outcome": outcome, "refused": refused}))
"""


def test_the_audit_hook_refuses_each_easy_way_to_signal_start_or_read_the_reference(tmp_path):
    secret = tmp_path / "solution.py"
    secret.write_text("def softmax(x, dim=-1):\n    return x\n")
    link = tmp_path / "copy.py"
    os.link(secret, link)
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        done = subprocess.run([sys.executable, "-c", ATTEMPTS, str(bystander.pid), str(secret), str(link), str(other)],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert bystander.poll() is None, "the bystander was killed"
    finally:
        bystander.kill()
        bystander.wait()
    outcome = result["outcome"]
    assert outcome.pop("an ordinary file") == "ran"
    stripped = {"signal.pidfd_send_signal", "multiprocessing spawn"}  # entry points without an event: removed
    for label, what in outcome.items():
        expected = {"PermissionError", "AttributeError"} if label in stripped else {"PermissionError"}
        assert what in expected, f"{label}: {what}"
    assert len(result["refused"]) >= len(outcome) - len(stripped)
    assert "reading a kata's reference solution" in result["refused"]


def test_the_reaper_takes_the_signal_meant_for_its_caller_and_its_child_dies_with_it(tmp_path):
    from minigpt.snippets import run_bounded

    pid_file = tmp_path / "pid"
    child = ("import os, signal, time\n"
             f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
             "os.kill(os.getppid(), signal.SIGKILL)\n"
             "time.sleep(30)\n")
    started = time.monotonic()
    run = run_bounded(spawn.behind_reaper([sys.executable, "-c", child]), timeout=20, cwd=tmp_path)
    assert run.returncode is not None and run.returncode < 0, run  # the reaper died by the signal
    assert time.monotonic() - started < 15, "the orphaned child kept the run open"
    assert _wait_gone(int(pid_file.read_text())), "the reaper's child outlived it"


def test_the_reapers_status_is_its_childs(tmp_path):
    from minigpt.snippets import run_bounded

    assert run_bounded(spawn.behind_reaper([sys.executable, "-c", "raise SystemExit(3)"]), cwd=tmp_path).returncode == 3
    killed_itself = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    assert run_bounded(spawn.behind_reaper([sys.executable, "-c", killed_itself]), cwd=tmp_path).returncode == 128 + 9


KILLS_ITS_PARENT = textwrap.dedent("""
    import os, signal, time

    def softmax(x, dim=-1):
        open({pid_file!r}, "w").write(str(os.getpid()))
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)  # the reaper's death kills this process meanwhile (the next case never starts)
        return x
""")


def test_the_grader_starts_a_reaper_and_reads_its_death_as_your_code_ending_the_grader(monkeypatch):
    """The verdict, from what the bounded runner returns when the reaper was killed (the real run of
    this is the soak test below, with the CLI)."""
    from minigpt.katas import sandbox
    from minigpt.katas.catalogue import kata_by_name
    from minigpt.snippets import SnippetResult

    started = []

    def reaper_killed(argv, **options):
        started.append(argv)
        return SnippetResult("", "", -9, False, seconds=0.1)

    monkeypatch.setattr("minigpt.snippets.run_bounded", reaper_killed)
    report = sandbox.grade_source(kata_by_name("softmax"), KILLS_ITS_PARENT.format(pid_file="/nonexistent"))
    assert started and started[0][:5] == spawn.behind_reaper([])
    assert report.error == sandbox.ENDED_BY_YOUR_CODE and report.error.startswith("your code ended the grader")
    assert "Traceback" not in report.summary()


@pytest.mark.soak
def test_the_cli_outlives_code_that_kills_its_parent(tmp_path):
    """The whole path, with the audit hook off so that the reaper alone stands in the way."""
    pid_file = tmp_path / "pid"
    draft = tmp_path / "softmax.py"
    draft.write_text(KILLS_ITS_PARENT.format(pid_file=str(pid_file)))
    driver = ("import minigpt.katas.sandbox as sandbox\nsandbox.AUDIT_GUARD = False\n"
              "from minigpt.cli.main import main\n"
              f"main(['--data-dir', {str(tmp_path / 'data')!r}, 'kata', 'check', 'softmax', {str(draft)!r}])\n")
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)  # not -9: the CLI lived
    assert "your code ended the grader" in done.stdout and "Traceback" not in done.stdout + done.stderr
    assert _wait_gone(int(pid_file.read_text())), "the learner's process outlived the grader"


# ------------------------------------------------------------------------------------- soak: the real grader

SOLUTION = Path(REPO) / "lessons" / "katas" / "010-softmax" / "solution.py"
MANUAL = "    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n"


def _real_grader_cases(tmp_path: Path) -> list[tuple[str, str, str, str]]:
    """(class, kata, the learner's module, what the verdict must say)."""
    link = tmp_path / "linked_solution.py"
    link.symlink_to(SOLUTION)
    return [
        ("import-time capture", "softmax", "import torch\n_f = getattr(torch, 'soft' + 'max')\n\n"
         "def softmax(x, dim=-1):\n    return _f(x, dim)\n", "your code called torch.softmax"),
        ("private spelling", "softmax", "import torch\n\ndef softmax(x, dim=-1):\n    return torch._softmax(x, dim, False)\n",
         "your code called softmax (through torch.ops.aten._softmax)"),
        ("dispatcher spelling", "layer_norm", "import torch\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
         "    return torch.ops.aten.layer_norm(x, x.shape[-1:], gamma, beta, eps)\n", "your code called layer_norm"),
        ("Tensor method", "softmax", "import torch\n\ndef softmax(x, dim=-1):\n"
         "    return getattr(torch._C.TensorBase, 'soft' + 'max')(x, dim)\n", "your code called softmax"),
        ("math fallback", "attention", "import torch\n\ndef attention(q, k, v, causal=False):\n"
         "    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, is_causal=causal)[0]\n",
         "your code called scaled_dot_product_attention"),
        ("the reference from disk", "softmax", "from pathlib import Path\nimport minigpt\n\ndef softmax(x, dim=-1):\n"
         "    ns = {}\n    exec((Path(minigpt.__file__).parent.parent / 'lessons/katas/010-softmax/solution.py').read_text(), ns)\n"
         "    return ns['softmax'](x, dim)\n", "reading a kata's reference solution"),
        ("the reference through a link", "softmax", f"def softmax(x, dim=-1):\n    ns = {{}}\n"
         f"    exec(open({str(link)!r}).read(), ns)\n    return ns['softmax'](x, dim)\n", "reading a kata's reference solution"),
        ("the catalogue", "softmax", "from minigpt.katas.catalogue import kata_by_name\n\ndef softmax(x, dim=-1):\n"
         "    ns = {}\n    exec(kata_by_name('softmax').solution, ns)\n    return ns['softmax'](x, dim)\n",
         "reading a kata's reference solution"),
        ("the grader through the call stack", "softmax", "import sys\n\ndef softmax(x, dim=-1):\n"
         "    from minigpt.katas.grading import reference\n    frame = sys._getframe(1)\n"
         "    while frame is not None and 'kata' not in frame.f_locals:\n        frame = frame.f_back\n"
         "    return reference(frame.f_locals['kata'])(x, dim)\n", "AttributeError"),
        ("signalling the parent", "softmax", KILLS_ITS_PARENT.format(pid_file=str(tmp_path / "pid")),
         "your code tried os.kill (signalling a process)"),
        ("starting the CLI for the solution", "softmax", "import subprocess, sys\n\ndef softmax(x, dim=-1):\n"
         "    subprocess.run([sys.executable, '-m', 'minigpt.cli', 'kata', 'solution', 'softmax'])\n" + MANUAL,
         "your code tried subprocess (starting a program)"),
    ]


@pytest.mark.soak
def test_each_class_through_the_real_grader(tmp_path):
    from minigpt.katas.catalogue import kata_by_name
    from minigpt.katas.sandbox import grade_source

    for label, kata_name, source, verdict in _real_grader_cases(tmp_path):
        report = grade_source(kata_by_name(kata_name), source)
        said = report.error or report.summary()
        assert not report.passed and verdict in said, f"{label}: {said}"


@pytest.mark.soak
def test_correct_code_passes_the_real_grader_whose_child_never_imported_the_grader(tmp_path):
    from minigpt.katas.catalogue import kata_by_name
    from minigpt.katas.sandbox import grade_source

    probe = ("import sys\n\ndef softmax(x, dim=-1):\n"
             "    assert not {'minigpt.katas.grading', 'minigpt.katas.catalogue', 'minigpt.katas.checkers'} & set(sys.modules)\n"
             + MANUAL)
    report = grade_source(kata_by_name("softmax"), probe)
    assert report.passed, report.summary()


@pytest.mark.soak
def test_the_cli_refuses_code_that_signals_its_parent_and_says_so(tmp_path):
    draft = tmp_path / "softmax.py"
    draft.write_text(KILLS_ITS_PARENT.format(pid_file=str(tmp_path / "pid")))
    done = subprocess.run([sys.executable, "-m", "minigpt.cli", "--data-dir", str(tmp_path / "data"), "kata", "check",
                           "softmax", str(draft)], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 1 and "your code tried os.kill" in done.stdout, (done.stdout, done.stderr)
    assert _wait_gone(int((tmp_path / "pid").read_text()))  # the harness ran the draft, then ended


@pytest.mark.soak
@pytest.mark.parametrize("kata_name", [k.name for k in load_katas()])
def test_every_reference_passes_the_real_grader_under_its_guards(kata_name):
    """The audit hook and the ban in the child refuse nothing a correct solution needs."""
    from minigpt.katas.catalogue import kata_by_name
    from minigpt.katas.sandbox import grade_source

    kata = kata_by_name(kata_name)
    report = grade_source(kata, kata.solution)
    assert report.passed, report.summary()
