"""The child side of grading: run the learner's function on the cases it is sent, write what it returned.

Started by :mod:`minigpt.katas.sandbox` behind a reaper (:func:`minigpt.spawn.behind_reaper`) in the
bounded runner (time, output and memory limits), in a private temporary folder. It is sent a job
file (the function's name, the learner's code, the cases' inputs as JSON: never pickle, never the
kata's folder) and imports neither the grader nor the kata catalogue: the expected values exist only
in the parent. It writes no verdict, only outputs, to a file named by the parent with a random
token. So printing "PASS", exiting with status 0 or writing a fake file cannot pass a case: only
returning the right values can.

Before the learner's code is even loaded, :func:`refuse_escapes` installs a Python audit hook that
refuses the easy spellings of signalling or starting a process, loading native code, and opening
any kata's ``solution.py`` (by device and inode, so a link to it is refused too); and the kata's
banned operators are refused at torch's dispatcher (:class:`minigpt.katas.ban.Ban`) and its
forbidden names replaced (:func:`minigpt.katas.forbidden.guard`), so a reference taken at import
time is already the refusing one. These stop accidents and easy tricks, not a learner set on
fooling their own tutor as the same user (docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import sys

# Audit events (https://docs.python.org/3/library/audit_events.html) the learner's code may not
# raise, with what they mean in the learner's terms.
REFUSED_EVENTS = {
    "os.kill": "os.kill (signalling a process)", "os.killpg": "os.killpg (signalling a process group)",
    "signal.pthread_kill": "signal.pthread_kill (signalling a thread)",
    "subprocess.Popen": "subprocess (starting a program)", "os.system": "os.system (starting a program)",
    "os.exec": "os.exec* (replacing the grader)", "os.fork": "os.fork (starting a process)",
    "os.forkpty": "os.forkpty (starting a process)", "os.posix_spawn": "os.posix_spawn (starting a program)",
    "os.spawn": "os.spawn* (starting a program)", "os.startfile": "os.startfile (starting a program)",
    "ctypes.dlopen": "ctypes (loading native code)", "ctypes.dlsym": "ctypes (calling native code)",
    "ctypes.dlsym/handle": "ctypes (calling native code)",
}
READING_A_SOLUTION = "reading a kata's reference solution"


def refuse_escapes(solution_files: set[tuple[int, int]], refused: list[str]) -> None:
    """From now on, in this process: the events above and opening a file whose (device, inode) is
    in ``solution_files`` raise PermissionError, and each is appended to ``refused``. (An audit hook
    cannot be removed; the entry points that raise no event are removed instead, and importing
    their modules afresh is refused.)"""
    import _posixsubprocess
    import _signal
    import signal

    def hook(event: str, args) -> None:
        what = REFUSED_EVENTS.get(event)
        if what is None and event == "open" and solution_files and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                st = os.stat(args[0])
            except (OSError, ValueError):
                return
            if (st.st_dev, st.st_ino) in solution_files:
                what = READING_A_SOLUTION
        elif what is None and event == "import" and args[0] in _STRIPPED_MODULES:
            what = f"importing {args[0]} again (starting or signalling a process)"
        if what is not None:
            refused.append(what)
            raise PermissionError(f"the kata grader refuses {what}")

    sys.addaudithook(hook)
    # Signalling by pidfd and the fork helper behind subprocess raise no audit event.
    for module, name in ((signal, "pidfd_send_signal"), (_signal, "pidfd_send_signal"), (_posixsubprocess, "fork_exec")):
        if hasattr(module, name):
            delattr(module, name)


_STRIPPED_MODULES = {"_posixsubprocess", "_signal", "signal"}


def load(source: str, function_name: str):
    """Run the learner's module and return its function (KataCodeError when it cannot)."""
    from minigpt.errors import KataCodeError

    namespace: dict = {"__name__": "kata_attempt"}
    try:
        exec(compile(source, "your code", "exec"), namespace)
    except Exception as e:
        raise KataCodeError(f"your code failed while loading: {type(e).__name__}: {e}") from None
    function = namespace.get(function_name)
    if not callable(function):
        raise KataCodeError(f"no function called {function_name}() in your code")
    return function


def run_job(job: dict) -> dict:
    """The result of one job (see :mod:`minigpt.katas.sandbox` for its fields)."""
    import torch  # noqa: F401  (imported before the hook: torch's start opens and loads what it needs)

    from minigpt.errors import KataCodeError
    from minigpt.katas import values
    from minigpt.katas.ban import Ban
    from minigpt.katas.forbidden import guard

    cases = [([values.decode(a) for a in args], {k: values.decode(v) for k, v in kwargs.items()})
             for args, kwargs in job["cases"]]
    refused: list[str] = []
    if job.get("audit", True):
        refuse_escapes({(int(d), int(i)) for d, i in job.get("solution_files", [])}, refused)
    calls: list[str] = []
    outcomes = []
    try:
        with Ban(job.get("banned_ops", {}), calls), guard(job.get("forbidden", []), calls):
            function = load(job["source"], job["function"])
            if job.get("adapter"):  # the kata's function is called through a harness of its own
                from minigpt.katas.fast_memory import ADAPTERS

                adapter, learners = ADAPTERS[job["adapter"]], function
                function = lambda *args, **kwargs: adapter(learners, *args, **kwargs)  # noqa: E731
            for args, kwargs in cases:
                try:
                    outcomes.append(("value", function(*args, **kwargs)))
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # SystemExit included: exiting is not an answer
                    outcomes.append(("error", f"{type(e).__name__}: {e}".strip()[:300]))
    except KataCodeError as e:
        return {"error": str(e), "forbidden_calls": calls, "refused": refused}
    return {"forbidden_calls": calls, "refused": refused,
            "outcomes": [[kind, values.encode(v) if kind == "value" else v] for kind, v in outcomes]}


def main(job_path: str) -> None:
    from minigpt import guarded

    job = json.loads(guarded.read_text(job_path, guarded.TEXT_FILE_BYTES))
    os.unlink(job_path)  # what the learner's code may look for on disk: nothing
    result = {"token": job["token"], **run_job(job)}
    tmp = f"{job['out']}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, job["out"])
