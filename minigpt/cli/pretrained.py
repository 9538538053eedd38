"""``minigpt sample`` and ``minigpt eval`` on a GPT-2-family folder, and ``eval --text`` on any model.

A folder in the Hugging Face layout (``minigpt.pretrained``) is told apart from the tutor's own
checkpoints by its tokenizer files. What it costs is bounded before any work: a continuation
must fit the model's context (so the KV cache serves every step), a few rows at once, and an
evaluated text at most ``MAX_EVAL_TOKENS`` tokens (``PretrainedCheckpoint.check_continuation``).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from minigpt import guarded
from minigpt.cli.support import _fail
from minigpt.errors import SamplingError, TutorError, UnsafeFileError
from minigpt.text import printable

DEFAULT_TOKENS = 50


def pretrained_folder(checkpoint: str | None):
    """The loaded GPT-2 when ``checkpoint`` is a Hugging Face folder, else None."""
    if not checkpoint:
        return None
    from minigpt.pretrained.gpt2 import is_pretrained_folder, load_gpt2

    path = Path(checkpoint).expanduser()
    return load_gpt2(path) if is_pretrained_folder(path) else None


def sample_pretrained(ckpt, *, n: int | None, prefix: str, max_len: int | None, temperature: float,
                      top_k: int | None, top_p: float | None, seed: int | None, as_json: bool) -> None:
    """Continue ``prefix`` ``n`` times (1 unless asked) by ``max_len`` tokens (50 unless asked)."""
    from minigpt.sampling import continue_text
    from minigpt.training.cpu_policy import idle_core_threads

    rows, tokens = 1 if n is None else n, DEFAULT_TOKENS if max_len is None else max_len
    if not prefix:
        raise SamplingError("a pretrained model continues a text: give it with --prefix")
    ckpt.check_continuation(prefix, tokens, rows)
    with idle_core_threads():
        outs = continue_text(ckpt.model, ckpt.tokenizer, prefix, tokens, n=rows, temperature=temperature,
                             top_k=top_k, top_p=top_p, seed=seed)
    if as_json:
        click.echo(json.dumps([{"prompt": o.prompt, "text": o.text, "logprob": round(o.logprob, 4)} for o in outs],
                              indent=2))
    else:
        click.echo("\n---\n".join(printable(o.prompt + o.text, keep="\n\t") for o in outs))


def read_text_file(path: Path) -> str:
    """A text to evaluate, through the guarded reader; SamplingError for what cannot be read."""
    try:
        return guarded.read_text(path, guarded.TEXT_FILE_BYTES)
    except FileNotFoundError:
        raise SamplingError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise SamplingError(f"{path}: not UTF-8 text") from None
    except UnsafeFileError as e:
        raise SamplingError(f"{path}: {e.strerror}") from None
    except OSError as e:
        raise SamplingError(f"{path}: cannot be read ({e.strerror or e})") from None


def eval_text(model, tokenizer, checkpoint_path, text_file: Path, as_json: bool) -> None:
    """The mean next-token loss over ``text_file``'s tokens, as one line or as JSON."""
    from minigpt.text_scoring import text_loss

    loss, tokens = text_loss(model, tokenizer, read_text_file(text_file))
    if as_json:
        click.echo(json.dumps({"checkpoint": str(checkpoint_path), "text": str(text_file), "loss": loss,
                               "tokens": tokens}, indent=2))
        return
    click.echo(f"checkpoint {printable(checkpoint_path)}  text {printable(text_file)}")
    click.echo(f"loss {loss:.4f} over {tokens:,} tokens")


@click.group()
def hf() -> None:
    """GPT-2-family checkpoints from the Hugging Face hub (the only command that goes online)."""


@hf.command(name="fetch")
@click.argument("repo", default="gpt2")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the four files (default: models/REPO in the data folder).")
def hf_fetch(repo: str, folder: Path | None) -> None:
    """Download REPO's config.json, model.safetensors, vocab.json and merges.txt, checksums checked.

    Then: minigpt sample --checkpoint FOLDER --prefix "Once upon a time"."""
    from minigpt import paths
    from minigpt.pretrained.fetch import fetch
    from minigpt.pretrained.gpt2 import FILES

    folder = folder or paths.user_data_dir() / "models" / repo.replace("/", "--")
    shown: dict[str, int] = {}

    def progress(name: str, done: int, total: int | None) -> None:
        step = (total or 0) // 20 or 8 << 20  # a line per twentieth (per 8 MiB when the size is unknown)
        if done // step != shown.get(name, -1) or done == total:
            shown[name] = done // step
            of = f" of {guarded.size_text(total)}" if total else ""
            click.echo(f"\r{name}: {guarded.size_text(done)}{of}", err=True, nl=done == total)

    try:
        fetched = fetch(repo, folder.expanduser(), progress)
    except TutorError as e:
        raise _fail(e) from None
    kept = len(FILES) - len(fetched)
    click.echo(f"{printable(folder)}: {len(fetched)} file(s) downloaded" + (f", {kept} already there" if kept else ""))
