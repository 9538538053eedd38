"""A mock interview paused to resume later with its time left (the ``interview_pause`` table,
migration 6).

One interview is paused at a time (pausing another replaces it). Its questions, the answers so far
(with what was typed), the answer being typed and the seconds left are kept as JSON; :func:`resume`
reads them back and removes the row in one transaction, so a pause is resumed once. A row that no
longer reads (edited by hand, or from a newer tutor) is dropped rather than resumed half-way.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from minigpt.store import Store
from minigpt.study.interview import Answer, Question, Report


@dataclass
class Paused:
    started_at: str
    paused_at: str
    seconds_left: float
    report: Report                 # minutes, titles, readiness and the answers so far
    questions: list[Question] = field(default_factory=list)
    index: int = 0                 # the question being asked when paused
    draft: str = ""                # what was typed for it so far

    def line(self) -> str:
        """One line for the setup: "12:30 left · question 4 of 12 · paused 2026-12-03"."""
        m, s = divmod(max(0, int(self.seconds_left)), 60)
        return (f"{m:02d}:{s:02d} left · question {self.index + 1} of {len(self.questions)} · "
                f"paused {self.paused_at[:10]}")


def _question(data: dict) -> Question:
    return Question(**{**data, "rubric": tuple(data.get("rubric", ())), "params": dict(data.get("params", {}))})


def _answer(data: dict) -> Answer:
    return Answer(**{**data, "question": _question(data["question"]), "missed": tuple(data.get("missed", ()))})


def to_json(p: Paused) -> str:
    r = p.report
    return json.dumps({"minutes": r.minutes, "titles": r.titles, "readiness": r.readiness,
                       "answers": [asdict(a) for a in r.answers], "index": p.index, "draft": p.draft,
                       "questions": [asdict(q) for q in p.questions]})


def from_row(row) -> Paused:
    """A paused interview from its row; ValueError/TypeError/KeyError when the state does not read."""
    state = json.loads(row["state"])
    report = Report(float(state["minutes"]), [_answer(a) for a in state["answers"]], dict(state["titles"]),
                    state.get("readiness"))
    questions = [_question(q) for q in state["questions"]]
    index = int(state["index"])
    if not 0 <= index < len(questions):
        raise ValueError(f"question {index + 1} of {len(questions)}")
    return Paused(row["started_at"], row["paused_at"], float(row["seconds_left"]), report, questions,
                  index, str(state.get("draft", "")))


def pause(store: Store, paused: Paused) -> None:
    """Keep this interview to resume later (replacing any other paused one)."""
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO interview_pause(id, started_at, paused_at, seconds_left, state)"
                     " VALUES (1, ?, ?, ?, ?)",
                     (paused.started_at, paused.paused_at, paused.seconds_left, to_json(paused)))


def _read(conn) -> Paused | None:
    row = conn.execute("SELECT * FROM interview_pause WHERE id = 1").fetchone()
    if row is None:
        return None
    try:
        return from_row(row)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def paused(store: Store) -> Paused | None:
    """The paused interview, if there is one that reads."""
    return _read(store.conn)


def resume(store: Store) -> Paused | None:
    """The paused interview, taken out of the table (resumed once); None when there is none."""
    with store.transaction() as conn:
        found = _read(conn)
        conn.execute("DELETE FROM interview_pause")
    return found


def discard(store: Store) -> None:
    """Forget the paused interview (a new one was started instead)."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM interview_pause")
