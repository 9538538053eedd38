"""Download a GPT-2-family checkpoint's four files from the Hugging Face hub (``minigpt hf fetch``).

Plain HTTPS through the standard library, nothing to install. For each of config.json,
model.safetensors, vocab.json and merges.txt: a HEAD request (redirects not followed) reads the
hub's checksum, the ``X-Linked-Etag`` of a large file stored in LFS (its SHA-256) or the
``ETag`` of a small one (its git blob SHA-1); the GET streams the file into ``NAME.part`` beside
its place, counting bytes for the progress bar, refusing past ``guarded.WEIGHTS_BYTES``; the
checksum is compared and only then is the file renamed into place. A file already there with
the right checksum is kept (a second fetch downloads nothing). Everything else in the tutor
works offline from the folder; ``HF_ENDPOINT`` points at a mirror (and the tests at a local
server). Never a pickle: ``pytorch_model.bin`` is not fetched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from minigpt import guarded
from minigpt.errors import CheckpointError
from minigpt.pretrained.gpt2 import FILES

DEFAULT_ENDPOINT = "https://huggingface.co"
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")
CHUNK = 1 << 20
TIMEOUT_S = 60


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the hub's own answer carries the checksum; the redirect's target does not


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")


def file_url(repo: str, name: str) -> str:
    return f"{endpoint()}/{repo}/resolve/main/{name}"


def expected_checksum(repo: str, name: str) -> str:
    """The hub's checksum of ``name``: 64 hex digits (SHA-256) or 40 (git blob SHA-1)."""
    request = urllib.request.Request(file_url(repo, name), method="HEAD")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        response = opener.open(request, timeout=TIMEOUT_S)
        headers = response.headers
    except urllib.error.HTTPError as e:  # a 302 to the file's storage ends here, its headers kept
        if e.code not in (301, 302, 303, 307, 308):
            raise CheckpointError(f"{file_url(repo, name)}: the hub answered {e.code} ({e.reason})") from None
        headers = e.headers
    except (urllib.error.URLError, OSError) as e:
        raise CheckpointError(f"{endpoint()}: cannot be reached ({getattr(e, 'reason', e)}); "
                              f"copy the four files into a folder by hand instead") from None
    tag = (headers.get("X-Linked-Etag") or headers.get("ETag") or "").removeprefix("W/").strip('"').lower()
    if not re.fullmatch(r"[0-9a-f]{64}|[0-9a-f]{40}", tag):
        raise CheckpointError(f"{file_url(repo, name)}: the hub gave no checksum to verify the download against")
    return tag


def checksum_of(path: Path, kind: int) -> str:
    """SHA-256 of the file (``kind`` 64) or its git blob SHA-1 (``kind`` 40), as the hub states them."""
    with guarded.open_file(path, guarded.WEIGHTS_BYTES) as f:
        size = os.fstat(f.fileno()).st_size
        h = hashlib.sha256() if kind == 64 else hashlib.sha1(f"blob {size}\0".encode())
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(url: str, part: Path, progress: Callable[[int, int | None], None]) -> None:
    try:
        response = urllib.request.urlopen(url, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as e:
        raise CheckpointError(f"{url}: the hub answered {e.code} ({e.reason})") from None
    except (urllib.error.URLError, OSError) as e:
        raise CheckpointError(f"{url}: cannot be downloaded ({getattr(e, 'reason', e)})") from None
    length = response.headers.get("Content-Length")
    total = int(length) if length and length.isdigit() else None
    if total is not None and total > guarded.WEIGHTS_BYTES:
        raise CheckpointError(f"{url}: {guarded.size_text(total)}, more than the {guarded.size_text(guarded.WEIGHTS_BYTES)} "
                              f"the tutor loads")
    done = 0
    with response, open(part, "wb") as out:
        for chunk in iter(lambda: response.read(CHUNK), b""):
            done += len(chunk)
            if done > guarded.WEIGHTS_BYTES:
                raise CheckpointError(f"{url}: grew past {guarded.size_text(guarded.WEIGHTS_BYTES)} while downloading")
            out.write(chunk)
            progress(done, total)
        out.flush()
        os.fsync(out.fileno())


def fetch(repo: str, folder: Path, progress: Callable[[str, int, int | None], None] = lambda *a: None) -> list[str]:
    """The four files of ``repo`` in ``folder``, each checked against the hub's checksum; the
    names actually downloaded (the others were there already, whole). CheckpointError: one line."""
    if not REPO_ID.fullmatch(repo) or ".." in repo:
        raise CheckpointError(f"{repo!r:.60}: not a hub model name such as gpt2 or openai-community/gpt2")
    folder.mkdir(parents=True, exist_ok=True)
    fetched = []
    for name in FILES:
        target, part = folder / name, folder / f"{name}.part"
        expected = expected_checksum(repo, name)
        if guarded.is_regular(target) and checksum_of(target, len(expected)) == expected:
            continue
        try:
            with guarded.disk_full_guard(f"{target}", "the files already downloaded are kept"):
                _download(file_url(repo, name), part, lambda done, total, name=name: progress(name, done, total))
            if checksum_of(part, len(expected)) != expected:
                raise CheckpointError(f"{file_url(repo, name)}: the download does not match the hub's checksum "
                                      f"(cut short or changed on the way); nothing was kept, fetch again")
            os.replace(part, target)
            guarded.fsync_dir(folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
        fetched.append(name)
    return fetched
