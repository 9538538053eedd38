"""Questions from the learner's own experiments, for the mock interview and the chapter quiz.

A sweep over dropout (an axis ``dropout`` with 0.0 among its values) gives one question per model
size it trained (the runs sharing every other axis but the seed): its finished runs' final
validation losses per dropout, the best setting against 0.0, asked by
:func:`minigpt.study.run_questions.dropout_question` (a presumed difference only when the t-test
says it is real). :func:`learner_run_questions` adds them to the questions about single runs and
seed groups; an unreadable runs or experiments folder gives none, never an error.
"""

from __future__ import annotations

import math
from pathlib import Path

from minigpt.errors import TutorError
from minigpt.experiments import folder
from minigpt.experiments.results import ExperimentResults, collect
from minigpt.study.run_questions import RunQuestion, dropout_question, questions_for_runs

MAX_SWEEPS = 2  # the latest dropout sweeps asked about


def _size(runs) -> str:
    params = runs[0].n_params
    return f"{params:,} parameters" if params else "this size"


def _mean_gap(runs) -> float | None:
    gaps = [r.gap for r in runs if r.gap is not None]
    return sum(gaps) / len(gaps) if gaps else None


def dropout_questions(results: ExperimentResults) -> list[RunQuestion]:
    """One question per size of a dropout sweep whose best finished setting is not 0.0."""
    if "dropout" not in results.axes:
        return []
    by_size: dict[tuple, dict[float, list]] = {}
    for run in results.finished:
        rate = run.values.get("dropout")
        if not isinstance(rate, (int, float)) or run.val_loss is None or not math.isfinite(run.val_loss):
            continue
        size = tuple(sorted((k, str(v)) for k, v in run.values.items() if k not in ("dropout", "seed")))
        by_size.setdefault(size, {}).setdefault(float(rate), []).append(run)
    out = []
    for settings in by_size.values():
        if 0.0 not in settings or len(settings) < 2:
            continue
        means = {rate: sum(r.val_loss for r in runs) / len(runs) for rate, runs in settings.items()}
        best = min(means, key=means.get)
        if best == 0.0:
            continue
        out.append(dropout_question(results.experiment.name, _size(settings[best]), best,
                                    [r.val_loss for r in settings[best]], [r.val_loss for r in settings[0.0]],
                                    (_mean_gap(settings[best]), _mean_gap(settings[0.0]))))
    return out


def sweep_questions(root: Path | str | None = None) -> list[RunQuestion]:
    """Questions about the latest dropout sweeps under the experiments folder."""
    out = []
    for exp_dir in folder.list_experiments(root):
        try:
            found = dropout_questions(collect(exp_dir))
        except (TutorError, OSError, ValueError):
            continue  # an experiment that cannot be read is reported on its own screen
        out += found
        if len({q.id.split(":")[2] for q in out}) >= MAX_SWEEPS:
            break
    return out


def learner_run_questions() -> list[RunQuestion]:
    """Every question the learner's runs, seed groups and sweeps give (none when unreadable)."""
    from minigpt.runs.listing import list_runs

    out: list[RunQuestion] = []
    try:
        out += questions_for_runs(list_runs())
    except (TutorError, OSError):
        pass
    try:
        out += sweep_questions()
    except (TutorError, OSError):
        pass
    return out
