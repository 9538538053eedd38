"""The one way the tutor writes a file a user names or reaches (an export, a report, ``--out``):
never onto the tutor's own files, never through a link, never half-written.

A report written over ``progress.sqlite3`` destroys every review the learner made, and the next
start moves the Markdown aside as a damaged database. So before anything is written,
:func:`check_output` refuses a target that is, by device and inode (the name itself and what a
link at it points to), the progress database or one of its ``-wal``/``-shm``/``-journal``
companions; a name the tutor owns in its data folder, whether it exists yet or not (anything in
its subfolders but the output folders ``exports/`` and ``playground/``, the database's files and
backups, the log); anything in a run, checkpoint or experiment folder wherever it lies, or in the
bundled content; a hard link to a file of the data folder; and a folder, a pipe, a device or a
socket, at once. (A learner's own file at the top of the data folder, ``flags.md``, is theirs.)

:func:`write_output` then writes a temporary file in the target's folder and renames it over
the name: a rename replaces a link at the final name instead of following it, a reader never
sees half a file, and a full disk leaves the previous file whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import UnsafeFileError

# The data folder's own output folders: the app writes its exports and saved names there.
OUTPUT_FOLDERS = ("exports", "playground")
DATABASE_COMPANIONS = ("", "-wal", "-shm", "-journal")  # SQLite's files beside the database
# A folder holding all the files of one of these is a run, a checkpoint or an experiment the
# tutor wrote, wherever it lies (run and checkpoint files: minigpt.runs.files, minigpt.checkpoint).
TUTOR_FOLDER_MARKERS = (("config.json", "status.json"), ("config.json", "model.safetensors"), ("experiment.json",))
TUTOR_FILES = ("app.log",)  # the data folder's own files beside the database (the app's log)
HARD_LINK_SEARCH_LIMIT = 200_000  # entries of the data folder compared when a target has other links


def _stat(path: Path, follow: bool) -> os.stat_result | None:
    try:
        return os.stat(path, follow_symlinks=follow)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # a link loop, a name too long: what a link points to is unknown, so not a tutor file
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _refuse_kind(path: Path, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise UnsafeFileError(path, "a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFileError(path, f"{guarded.special_kind(info.st_mode)}, not a regular file")


def _database_ids() -> dict[tuple[int, int], str]:
    db = paths.database_path()
    found = {}
    for suffix in DATABASE_COMPANIONS:
        info = _stat(db.with_name(db.name + suffix), follow=True)
        if info is not None:
            found[(info.st_dev, info.st_ino)] = "the tutor's progress database" + (f" ({suffix} file)" if suffix else "")
    return found


def _owned_in_data_folder(parts: tuple[str, ...]) -> bool:
    """Whether a name in the data folder (its parts below it) is the tutor's, existing or not yet:
    anything in a subfolder (runs, lab, serve-state), the database's files and backups, the log."""
    return len(parts) != 1 or parts[0].startswith(paths.database_path().name) or parts[0] in TUTOR_FILES


def _refuse_place(path: Path, where: Path) -> None:
    """Refuse ``where`` (``path`` with its folders' links resolved) as a place the tutor owns."""
    data = Path(os.path.realpath(paths.user_data_dir()))
    if _inside(where, data) and not any(_inside(where, data / name) for name in OUTPUT_FOLDERS) and (
            _owned_in_data_folder(where.relative_to(data).parts)):
        raise UnsafeFileError(path, f"a name the tutor keeps for its own files in its data folder ({data}): "
                                    f"write it elsewhere, or in {data / OUTPUT_FOLDERS[0]}")
    for bundled in (paths.lessons_dir(), paths.checkpoints_dir(), paths.data_dir()):
        if _inside(where, Path(os.path.realpath(bundled))):
            raise UnsafeFileError(path, "inside the tutor's bundled content: write it elsewhere")
    for folder in (where.parent, where.parent.parent):
        if any(all(os.path.lexists(folder / name) for name in names) for names in TUTOR_FOLDER_MARKERS):
            raise UnsafeFileError(path, f"inside a run, checkpoint or experiment folder ({folder}): "
                                        f"write it elsewhere")


def _refuse_hard_link(path: Path, info: os.stat_result) -> None:
    """A file with other names: refused when one is a tutor's file of the data folder (walked, bounded)."""
    data, seen = paths.user_data_dir(), 0
    for root, _folders, files in os.walk(data):
        for name in files:
            seen += 1
            other = _stat(Path(root) / name, follow=False)
            if (other is not None and (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)
                    and _owned_in_data_folder((Path(root) / name).relative_to(data).parts)):
                raise UnsafeFileError(path, f"a hard link to {Path(root) / name}, a file of the tutor's data "
                                            f"folder: write it elsewhere")
        if seen > HARD_LINK_SEARCH_LIMIT:
            return


def check_output(path: Path | str) -> Path:
    """``path`` if the tutor may write a file there; else ``UnsafeFileError`` saying why."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    named, pointed = _stat(path, follow=False), _stat(path, follow=True)
    for info in (named, pointed):
        if info is not None and not stat.S_ISLNK(info.st_mode):
            _refuse_kind(path, info)
    owned = _database_ids()
    for info in (named, pointed):
        if info is not None and (info.st_dev, info.st_ino) in owned:
            raise UnsafeFileError(path, f"{owned[(info.st_dev, info.st_ino)]}: a report written there would "
                                        f"destroy your progress; write it elsewhere")
    _refuse_place(path, Path(os.path.realpath(path.parent)) / path.name)
    if pointed is not None:
        _refuse_place(path, Path(os.path.realpath(path)))
        if pointed.st_nlink > 1:
            _refuse_hard_link(path, pointed)
    return path


def write_output_with(path: Path | str, write: Callable[[Path], None], what: str | None = None) -> Path:
    """Check ``path`` (:func:`check_output`), let ``write`` fill a new temporary file beside it
    (given its path), then rename that over ``path``. Returns the path written."""
    path = check_output(path)
    what = what or path.name
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide an export from the learner's other tools
        os.close(fd)
        with guarded.disk_full_guard(what, f"{path.name} stays as it was"):
            write(tmp)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        check_output(path)  # what was checked may have been swapped while the file was written
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    guarded.fsync_dir(path.parent)
    return path


def write_output(path: Path | str, content: str | bytes, what: str | None = None) -> Path:
    """Write ``content`` (text as UTF-8) to ``path`` as :func:`write_output_with` does."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return write_output_with(path, lambda tmp: tmp.write_bytes(data), what)
