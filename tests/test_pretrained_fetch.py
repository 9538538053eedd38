"""``minigpt hf fetch`` against a local HTTP server standing in for the Hugging Face hub.

The server answers as the hub does: a small file's HEAD carries its git blob SHA-1 as the ETag;
model.safetensors (stored in LFS) answers its HEAD with a redirect whose X-Linked-Etag is the
file's SHA-256, and its GET is redirected to the storage that serves the bytes.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from minigpt.cli import main
from minigpt.errors import CheckpointError
from minigpt.pretrained.fetch import fetch
from minigpt.pretrained.gpt2 import FILES

CONTENT = {
    "config.json": b'{"model_type": "gpt2"}\n',
    "model.safetensors": bytes(range(256)) * 4096,  # 1 MiB: more than one read of the stream
    "vocab.json": '{"Ġthé": 0}'.encode(),
    "merges.txt": b"#version: 0.2\nh e\n",
}


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub(BaseHTTPRequestHandler):
    files: dict[str, bytes] = CONTENT
    wrong_checksum: set[str] = set()
    requests: list[tuple[str, str]] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _file(self) -> str | None:
        prefix = "/gpt2/resolve/main/"
        return self.path.removeprefix(prefix) if self.path.startswith(prefix) else None

    def do_HEAD(self) -> None:
        self.requests.append(("HEAD", self.path))
        name = self._file()
        if name not in self.files:
            self.send_response(404)
            self.end_headers()
            return
        data = self.files[name] + (b"!" if name in self.wrong_checksum else b"")
        if name == "model.safetensors":
            self.send_response(302)
            self.send_header("Location", f"/lfs/{name}")
            self.send_header("X-Linked-Etag", f'"{hashlib.sha256(data).hexdigest()}"')
        else:
            self.send_response(200)
            self.send_header("ETag", f'"{git_blob_sha1(data)}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path))
        name = self._file()
        if name == "model.safetensors":
            self.send_response(302)
            self.send_header("Location", f"/lfs/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        name = name or self.path.removeprefix("/lfs/")
        data = self.files[name]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def hub(monkeypatch):
    Hub.wrong_checksum, Hub.requests = set(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    yield Hub
    server.shutdown()
    server.server_close()
    thread.join()


def test_fetch_downloads_the_four_files_checked_and_keeps_what_is_whole(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path / "user"))
    result = CliRunner().invoke(main, ["hf", "fetch", "gpt2", "--dir", str(tmp_path / "gpt2")])
    assert result.exit_code == 0, result.output
    assert {name: (tmp_path / "gpt2" / name).read_bytes() for name in FILES} == CONTENT
    assert "4 file(s) downloaded" in result.output
    assert not list((tmp_path / "gpt2").glob("*.part"))
    hub.requests.clear()
    assert fetch("gpt2", tmp_path / "gpt2") == []  # all there, whole: only the checksums are asked
    assert {method for method, _ in hub.requests} == {"HEAD"}


def test_a_download_that_does_not_match_its_checksum_is_not_kept(hub, tmp_path):
    hub.wrong_checksum = {"vocab.json"}
    with pytest.raises(CheckpointError, match="does not match the hub's checksum"):
        fetch("gpt2", tmp_path / "gpt2")
    assert not (tmp_path / "gpt2" / "vocab.json").exists()
    assert not list((tmp_path / "gpt2").glob("*.part"))
    assert (tmp_path / "gpt2" / "model.safetensors").read_bytes() == CONTENT["model.safetensors"]  # fetched before


def test_an_unknown_model_or_a_bad_name_is_one_line(hub, tmp_path):
    with pytest.raises(CheckpointError, match="answered 404"):
        fetch("nobody/nothing", tmp_path / "x")
    result = CliRunner().invoke(main, ["hf", "fetch", "../etc", "--dir", str(tmp_path / "y")])
    assert result.exit_code == 2 and "not a hub model name" in result.output
