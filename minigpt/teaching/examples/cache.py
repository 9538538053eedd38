"""Worked examples' output kept on disk, so a lesson shows its numbers at once after the first time.

An entry is keyed by the example's id, the source of the module that registers it, the library's
files (name, size and time: a change to the maths it calls recomputes) and the bundled checkpoints
the examples read (and the fetched GPT-2 folders, for the examples computed on one). Lab-job
examples show a result that changes while the lesson is open: they are never cached. Each entry
carries its key and a digest of its text; one that does not match (stale, damaged, written by
hand) is recomputed, and a good one is only ever shown as Markdown text.

``python -m minigpt.teaching.examples.cache ID...`` (started by the app through ``minigpt.spawn``, read from a thread:
BPE and friends are pure Python, which a thread would run holding the app's GIL) computes each
example, stores it and prints one JSON line per example, in order, as each is ready.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from subprocess import DEVNULL  # (a constant: the child is started by minigpt.spawn)

from minigpt import guarded, paths, spawn
from minigpt.errors import UnsafeFileError
from minigpt.runs.files import write_text_atomic
from minigpt.runs.lab import JOBS
from minigpt.teaching.examples.catalog import EXAMPLES, render_example

ENTRY_FORMAT = "minigpt-example 1"
ENTRY_LIMIT = 1 << 20   # an example is a few KiB of Markdown: a larger entry is not one of ours
SOURCE_LIMIT = 4 << 20
_PACKAGE = Path(__file__).resolve().parents[2]
_IMPORT_ROOT = _PACKAGE.parent


def is_cacheable(example_id: str) -> bool:
    """Not a lab job's example (its text follows a job folder that changes)."""
    return example_id in EXAMPLES and example_id not in {job.example for job in JOBS.values()}


def _stamp_of_files(root: Path, pattern: str) -> list[str]:
    rows = []
    for path in sorted(root.rglob(pattern)):
        try:
            st = path.stat()
        except OSError:
            continue
        if path.is_file():
            rows.append(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    return rows


@functools.cache
def _environment_stamp() -> str:
    """The library's sources and the bundled checkpoints, as names, sizes and times (read once)."""
    rows = _stamp_of_files(_PACKAGE, "*.py") + _stamp_of_files(paths.checkpoints_dir(), "*")
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


@functools.cache
def _module_digest(module_name: str) -> str:
    module = sys.modules.get(module_name)
    source = guarded.read_bytes(module.__file__, SOURCE_LIMIT) if module is not None and module.__file__ else b""
    return hashlib.sha256(source).hexdigest()


def cache_key(example_id: str) -> str:
    """The example's id, its module's source, the library and the checkpoints (and the fetched GPT-2
    folders, for an example computed on them), hashed together."""
    module = EXAMPLES[example_id].build.__module__
    parts = [example_id, _module_digest(module), _environment_stamp()]
    if EXAMPLES[example_id].reads_models:  # (looked at every time: a fetch happens while the app runs)
        parts.append("\n".join(_stamp_of_files(paths.user_data_dir() / "models", "*")))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def entry_path(example_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", example_id)
    return paths.cache_dir() / "examples" / f"{safe}.md"


def cached(example_id: str) -> str | None:
    """The stored text of a cacheable example under its current key; None when there is none, it
    is stale, or it fails its digest."""
    if not is_cacheable(example_id):
        return None
    try:
        head, _, body = guarded.read_bytes(entry_path(example_id), ENTRY_LIMIT).partition(b"\n")
        fields = head.decode("ascii").rsplit(" ", 2)
        text = body.decode("utf-8")
    except (OSError, UnicodeDecodeError, UnsafeFileError):
        return None
    if fields != [ENTRY_FORMAT, cache_key(example_id), hashlib.sha256(body).hexdigest()]:
        return None
    return text


def store(example_id: str, text: str) -> None:
    """Keep ``text`` for the example (atomically); a cache that cannot be written is only slower."""
    if not is_cacheable(example_id):
        return
    body = text.encode("utf-8")
    head = f"{ENTRY_FORMAT} {cache_key(example_id)} {hashlib.sha256(body).hexdigest()}\n"
    path = entry_path(example_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, head + text)
    except OSError:
        pass


def compute(example_id: str) -> str:
    """The example rendered by the library now, and stored when it may be."""
    text = render_example(example_id)
    store(example_id, text)
    return text


class ChildComputation:
    """Examples computed in a child process, read back one answer at a time (from a thread: the
    reads block). ``stop`` kills the child from any thread; the answers then end."""

    def __init__(self, example_ids: list[str]):
        self.example_ids = list(example_ids)
        self.proc = spawn.popen([sys.executable, "-m", "minigpt.teaching.examples.cache", *self.example_ids],
                                env=spawn.child_env(import_root=_IMPORT_ROOT, threads=1), new_session=True,
                                stdout=spawn.PIPE, stderr=DEVNULL, niceness=5)

    def answers(self) -> Iterator[tuple[str, str | None, str | None]]:
        """(id, text, error) for each example, as soon as it is ready; then an error for any the
        child did not answer (it died, or was stopped)."""
        answered = set()
        try:
            for line in self.proc.stdout:
                try:
                    row = json.loads(line)
                    example_id, text, error = str(row["id"]), row.get("text"), row.get("error")
                except (ValueError, KeyError, TypeError):
                    continue  # a stray line (a library's own print) is not an answer
                answered.add(example_id)
                yield example_id, text, error
            status = self.proc.wait()
            for example_id in self.example_ids:
                if example_id not in answered:
                    yield example_id, None, f"the process computing it ended early (status {status})"
        finally:
            self.stop()
            self.proc.wait()
            self.proc.stdout.close()

    def stop(self) -> None:
        """Kill the child if it still runs (from any thread: the reading thread then ends)."""
        if self.proc.poll() is None:
            self.proc.kill()


def main(argv: list[str]) -> int:
    for example_id in argv:
        try:
            row = {"id": example_id, "text": compute(example_id)}
        except Exception as e:  # one broken example never loses the others
            row = {"id": example_id, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(row) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main(sys.argv[1:]))
