"""Lab jobs' folders: a lesson's longer measurement (a LoRA fine-tune, a memory benchmark, induction heads grown) runs in
the background and leaves one ``result.json`` that the lesson shows once it is there.

One folder per job under the user's data folder (``lab/<job>/``): ``trainer.lock`` held by the
running job (the run folders' lock, so a second start is refused and a killed job leaves no stale
lock), ``result.json`` written atomically at the end. The result is versioned and read through
``read_result`` only, which refuses a damaged or foreign file instead of showing it.

Each job is declared once, in ``JOBS``: its id (what a lesson's front matter ``lab = [...]`` names),
its title and the worked example that shows its result. Its runner is bound to the same id in
``minigpt.control.lab_jobs``; tests/test_lab_jobs.py checks every job has a runner, an example and
a lesson.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import RunError
from minigpt.runs.files import write_json_atomic
from minigpt.runs.lock import is_locked

RESULT_FORMAT, RESULT_VERSION = "minigpt-lab-result", 1
RESULT_FILE = "result.json"
RUN_DIR = "run"  # a job that trains keeps its run folder here, for the explorers and compare


@dataclass(frozen=True)
class LabJob:
    id: str        # the job's folder, ``minigpt lab run ID`` and the lessons' ``lab = [...]``
    title: str     # the line in the lesson's choice of which job to start
    example: str   # the worked example (minigpt.teaching.examples) that shows the result


JOBS: dict[str, LabJob] = {job.id: job for job in (
    LabJob("lora", "LoRA fine-tune on one letter's names", "lora.lab"),
    LabJob("checkpointing", "Activation checkpointing: memory and time of a step", "checkpointing.lab"),
    LabJob("induction", "Induction heads: train the attention-only model, score its heads", "induction.lab"),
    LabJob("ptq", "Post-training quantization: GPTQ, FP8, MXFP4 and NF4 on the shipped model", "formats.ptq_lab"),
    LabJob("self-speculation", "Self-speculation: a MiniGPT drafts with its own MTP head", "self_speculation.lab"),
    LabJob("test-time", "Test-time compute on names: pass@k, best-of-n, majority vote", "test_time.lab"),
    LabJob("mup", "μP: sweep learning rates at three widths, SP against μP", "train_scale.mup_lab"),
    LabJob("stability", "Stability at a high learning rate: QK-norm, z-loss, soft-capping", "train_scale.stability_lab"),
)}


def job_dir(job: str, root: Path | str | None = None) -> Path:
    if job not in JOBS:
        raise RunError(f"no lab job called {job!r} (jobs: {', '.join(JOBS)})")
    folder = Path(root) if root is not None else paths.user_data_dir() / "lab"
    return folder / job


def bundled_dir(job: str) -> Path:
    """The result the project measured once and ships beside the lessons (``lessons/lab/<job>/``):
    what a lesson shows until the learner's own run finishes. Read with ``read_result``."""
    if job not in JOBS:
        raise RunError(f"no lab job called {job!r} (jobs: {', '.join(JOBS)})")
    return paths.lessons_dir() / "lab" / job


def write_result(folder: Path, values: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with guarded.disk_full_guard(f"the lab result in {folder}", "the measurement was not saved"):
        write_json_atomic(folder / RESULT_FILE, {"format": RESULT_FORMAT, "format_version": RESULT_VERSION,
                                                 **values})


def read_result(folder: Path) -> dict | None:
    """The job's result without the version fields; None when it has not finished yet. A file that
    is not a result of this format (damaged, newer) raises RunError."""
    path = folder / RESULT_FILE
    if not path.exists():
        return None
    try:
        raw = json.loads(guarded.read_text(path, guarded.SMALL_JSON_BYTES))
    except (OSError, ValueError) as e:
        raise RunError(f"{path}: unreadable lab result ({e})") from None
    if not isinstance(raw, dict) or raw.get("format") != RESULT_FORMAT:
        raise RunError(f"{path}: not a lab result")
    if raw.get("format_version") != RESULT_VERSION:
        raise RunError(f"{path}: lab result format {raw.get('format_version')!r:.20}, this minigpt reads "
                       f"{RESULT_VERSION}")
    return {k: v for k, v in raw.items() if k not in ("format", "format_version")}


def lab_runs(root: Path | str | None = None) -> list[tuple[str, Path]]:
    """(job, run folder) of each job that kept the run it trained (``lab/<job>/run``)."""
    from minigpt.runs.listing import is_run_folder

    found = []
    for job in JOBS:
        run = job_dir(job, root) / RUN_DIR
        if is_run_folder(run):
            found.append((job, run))
    return found


def is_running(folder: Path) -> bool:
    return is_locked(folder)
