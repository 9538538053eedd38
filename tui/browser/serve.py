"""``minigpt serve``: the tutor in a browser tab, through textual-serve, safe by default.

Defaults keep a served tutor as private as the terminal one: it listens on the loopback address
only (another address needs ``--public``, and then a warning), edited code does not run
(``--allow-code``), typed paths stay inside the data folder and the bundled content
(``--allow-files``), and at most 8 tabs and 1 training run started from them at a time. The rules
themselves live in ``minigpt.serving_policy`` (what a session may do) and ``tui.browser.serve_server``
(who may connect).
"""

from __future__ import annotations

import ipaddress
import shutil
import socket
from pathlib import Path

import click

from minigpt import extras
from minigpt.cli.support import UserError

PUBLIC_WARNING = ("WARNING: --public: anyone who can reach {where} can use this tutor: read and change the "
                  "progress in its data folder, start training runs on this machine{extra}. Serve it on a "
                  "network you trust, or put it behind a proxy that asks for a password.")


def is_loopback_host(host: str) -> bool:
    """Whether binding ``host`` listens on this machine only (every address it resolves to is loopback)."""
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def public_warning(host: str, port: int, allow_code: bool, allow_files: bool) -> str:
    extra = ""
    if allow_code:
        extra += ", run any Python code as this user (--allow-code)"
    if allow_files:
        extra += ", read and write any file this user can (--allow-files)"
    return PUBLIC_WARNING.format(where=f"{host}:{port}", extra=extra)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but a loopback address needs --public.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for progress, settings and runs, shared by every tab (default: the per-user folder).")
@click.option("--public", is_flag=True, help="Allow a --host that other machines can reach.")
@click.option("--allow-code", is_flag=True, help="Let browser sessions run edited code, not only the lessons' snippets.")
@click.option("--allow-files", is_flag=True,
              help="Let browser sessions open files outside the data folder and the bundled content.")
@click.option("--guest", is_flag=True,
              help="Each tab gets a fresh temporary data folder, removed (its runs stopped) when it closes.")
@click.option("--max-sessions", type=click.IntRange(1), default=8, show_default=True,
              help="Browser tabs served at once.")
@click.option("--max-runs", type=click.IntRange(0), default=1, show_default=True,
              help="Training runs started from browser tabs that may train at once.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, data_dir: Path | None, public: bool, allow_code: bool,
          allow_files: bool, guest: bool, max_sessions: int, max_runs: int) -> None:
    """Serve the tutor to a web browser (open the printed address); needs the serve extra."""
    if not extras.installed("serve"):
        raise UserError(extras.hint("serve", "minigpt serve"))
    if not public and not is_loopback_host(host):
        raise UserError(f"--host {host} can be reached from other machines: add --public if that is what you "
                        f"want (anyone who reaches it can use the tutor), or keep the default 127.0.0.1")
    if guest and data_dir is not None:
        raise UserError("--guest gives every tab its own temporary folder: leave out --data-dir")
    from tui.browser.serve_server import ServeOptions, TutorServer
    if public and not is_loopback_host(host):
        click.echo(public_warning(host, port, allow_code, allow_files), err=True)
    options = ServeOptions(host=host, port=port, data_dir=data_dir.expanduser() if data_dir else None,
                           public=public, guest=guest, allow_code=allow_code, allow_files=allow_files,
                           max_sessions=max_sessions, max_runs=max_runs)
    server = TutorServer(options)
    try:
        server.serve()
    except OSError as e:  # the port is taken, the address is not this machine's
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(server.state_dir, ignore_errors=True)  # emptied on a clean stop already
