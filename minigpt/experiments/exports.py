"""The results as files: CSV and Markdown tables, the plot as text, and JSON (``--json``).

The scheduler rewrites them in the experiment folder as runs finish; ``minigpt sweep --export``
and the app's export key produce the same text.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from minigpt import guarded
from minigpt.experiments import folder, plots
from minigpt.experiments.results import ExperimentResults, collect, table_header, table_rows
from minigpt.runs.files import write_json_atomic

EXPORTS = ("results.csv", "results.md", "plot.txt", "results.json")


def to_json(results: ExperimentResults) -> dict:
    plot = plots.plot_data(results)
    return {"experiment": results.experiment.name, "path": str(results.experiment.dir), "state": results.state,
            "spec": results.experiment.spec.to_dict(), "runs": [r.to_dict() for r in results.runs],
            "plot": {"title": plot.title, "notes": plot.notes, **plot.numbers}}


def to_csv(results: ExperimentResults) -> str:
    buf = io.StringIO()
    rows = [r.to_dict() for r in results.runs]
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["name"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def to_markdown(results: ExperimentResults) -> str:
    spec = results.experiment.spec
    header = table_header(results)
    lines = [f"# {results.experiment.name}: {spec.title or spec.kind}", "",
             f"{spec.description}".strip(), "", f"Budget: {spec.budget.describe()}. State: {results.state}.", "",
             "| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(results)]
    notes = plots.plot_data(results).notes
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def write_exports(exp: folder.Experiment, results: ExperimentResults | None = None) -> list[Path]:
    """results.csv, results.md, plot.txt and results.json in the experiment folder (atomic each)."""
    results = results or collect(exp)
    texts = {"results.csv": to_csv(results), "results.md": to_markdown(results),
             "plot.txt": plots.render(plots.plot_data(results), width=78, height=22) + "\n"}
    written = []
    kept = "the exports written before stay as they were"
    with guarded.disk_full_guard(f"the results of {exp.dir.name}", kept):
        for name, text in texts.items():
            path = exp.dir / name
            tmp = path.with_name(f".{name}.tmp")
            try:
                tmp.write_text(text, encoding="utf-8")
            except BaseException:
                tmp.unlink(missing_ok=True)  # a half-written copy only takes room
                raise
            tmp.replace(path)
            written.append(path)
        write_json_atomic(exp.dir / "results.json", to_json(results))
    return written + [exp.dir / "results.json"]
