"""Helpers for the name-generation playground: its settings (read from the fields' text with
``parse_settings``), loading a checkpoint with its data split, batch statistics, the temperature
sweep and saving names. The checkpoints to choose from are in
``minigpt.playground.checkpoint_choices``; stepping, scoring and comparing models are in
``minigpt.playground.inspection``.

Everything here is plain library code (no Textual) so the screens stay free of maths and the
numbers they show can be checked in unit tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from minigpt import paths
from minigpt.checkpoint import load_checkpoint
from minigpt.data import load_dataset
from minigpt.errors import DatasetError, SamplingError
from minigpt.outputs import write_output
from minigpt.pretrained.gpt2 import is_pretrained_folder, load_gpt2
from minigpt.sampling import Sample, continue_text, generate, is_text_model, next_distribution
from minigpt.training.cpu_policy import one_thread

TEXT_CHARS = 120  # a text model's continuation when no length is set
SWEEP_TEMPERATURES = tuple(t / 10 for t in (5, 8, 10, 12, 15))  # the course's exercise 3: 0.5 … 1.5


# ------------------------------------------------------------------ settings and checkpoints
@dataclass
class Settings:
    """Every control of the playground; ``check`` says in words what is wrong with a value."""

    n: int = 50
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    prefix: str = ""
    seed: int = 42
    max_len: int | None = None

    def check(self) -> None:
        if self.n < 1 or self.n > 500:
            raise SamplingError(f"number of names must be between 1 and 500, got {self.n}")
        if self.max_len is not None and self.max_len < 1:
            raise SamplingError(f"max length must be at least 1, got {self.max_len}")
        if self.max_len is not None and len(self.prefix) > self.max_len:
            raise SamplingError(f"prefix {self.prefix!r} is longer than max length {self.max_len}")

    def describe(self) -> str:
        k = "off" if self.top_k is None else str(self.top_k)
        p = "off" if self.top_p is None else f"{self.top_p:g}"
        m = "model's" if self.max_len is None else str(self.max_len)
        pre = f" prefix {self.prefix!r}" if self.prefix else ""
        return f"T {self.temperature:g} · top-k {k} · top-p {p} · seed {self.seed} · max len {m}{pre}"


def fit_case(vocab, text: str) -> str:
    """``text`` in lower case when the vocabulary has no capital letters (names typed "Xavier"
    mean "xavier" to a model trained on lower-case names); unchanged otherwise."""
    if text != text.lower() and hasattr(vocab, "chars") and not any(c.isupper() for c in vocab.chars):
        return text.lower()
    return text


def _int_or_none(text: str, name: str, low: int) -> int | None:
    text = text.strip().lower()
    if text in ("", "off", "-", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise SamplingError(f"{name}: {text!r} is not a whole number (leave empty for off)") from None
    if value < low:
        raise SamplingError(f"{name} must be at least {low}, got {value}")
    return value


def parse_settings(fields: dict[str, str], vocab=None) -> Settings:
    """The fields' text → Settings; the error names the field and says what would be valid."""
    try:
        n = int(fields["n"].strip())
    except ValueError:
        raise SamplingError(f"names: {fields['n']!r} is not a whole number") from None
    try:
        temperature = float(fields["temperature"].strip())
    except ValueError:
        raise SamplingError(f"temperature: {fields['temperature']!r} is not a number (try 1.0)") from None
    if not temperature > 0:
        raise SamplingError(f"temperature must be > 0, got {temperature:g}")
    top_p_text = fields["top_p"].strip().lower()
    top_p = None
    if top_p_text not in ("", "off", "-", "none"):
        try:
            top_p = float(top_p_text)
        except ValueError:
            raise SamplingError(f"top-p: {top_p_text!r} is not a number in (0, 1]") from None
        if not 0 < top_p <= 1:
            raise SamplingError(f"top-p must be in (0, 1], got {top_p:g}")
        top_p = None if top_p == 1 else top_p
    try:
        seed = int(fields["seed"].strip())
    except ValueError:
        raise SamplingError(f"seed: {fields['seed']!r} is not a whole number") from None
    s = Settings(n=n, temperature=temperature, top_k=_int_or_none(fields["top_k"], "top-k", 1),
                 top_p=top_p, prefix=fields["prefix"].strip(), seed=seed,
                 max_len=_int_or_none(fields["max_len"], "max length", 1))
    if vocab is not None:
        s.prefix = fit_case(vocab, s.prefix)  # "Ma" means "ma" to a lower-case model
    s.check()
    missing = vocab.unknown(s.prefix) if vocab is not None and hasattr(vocab, "unknown") else []  # (BPE: none)
    if missing:
        raise SamplingError(f"prefix {s.prefix!r}: {', '.join(repr(c) for c in missing)} not in the model's "
                            f"vocabulary ({''.join(vocab.chars[1:])})")
    return s


@dataclass
class Loaded:
    """A checkpoint ready to sample, with the split that says which names are new."""

    checkpoint: object  # minigpt.checkpoint.Checkpoint
    dataset: object | None
    dataset_note: str | None = None  # why membership is unknown, when it is

    @property
    def model(self):
        return self.checkpoint.model

    @property
    def vocab(self):
        return self.checkpoint.vocab

    @property
    def kind(self) -> str:
        return self.checkpoint.kind

    @property
    def is_text(self) -> bool:
        """Trained on one long text: it continues a prompt instead of making names."""
        return is_text_model(self.checkpoint.train_config)

    @property
    def loss(self) -> tuple[float | None, float | None]:
        m = self.checkpoint.metrics or {}
        return m.get("val_loss"), m.get("test_loss")


def dataset_for(checkpoint):
    """The words the checkpoint was trained on, split the way its training split them."""
    tc = checkpoint.train_config or {}
    stored = tc.get("data")
    data = paths.default_dataset() if stored in (None, "embedded") else Path(stored)
    seed = tc.get("split_seed", 42)  # "seed" is the training seed, not the split's
    return load_dataset(data, seed=int(seed), vocab=checkpoint.vocab,
                        block_size=checkpoint.model_config.block_size)


def load_for_playground(path: Path | str) -> Loaded:
    if is_pretrained_folder(path):  # GPT-2 continues text, with its own BPE and the KV cache
        return Loaded(load_gpt2(path), None, "a pretrained model: it continues the prefix as a prompt")
    ckpt = load_checkpoint(path)
    if is_text_model(ckpt.train_config):  # a text model continues prompts: no names to mark
        return Loaded(ckpt, None, "a text model: it continues the prefix as a prompt")
    try:
        return Loaded(ckpt, dataset_for(ckpt))
    except (DatasetError, ValueError, OSError) as e:
        return Loaded(ckpt, None, f"training data not found, names are not marked ({e})")


# ------------------------------------------------------------------ generating and summarising
@dataclass
class Summary:
    count: int
    new: int
    mean_length: float
    mean_logprob_per_char: float  # per predicted token, end token included, as sampled (filtered)
    unfinished: int
    known: bool  # membership was checked against the training data
    mean_model_logprob_per_char: float | None = None  # the same tokens under the model itself

    @property
    def share_new(self) -> float:
        return self.new / self.count if self.count else 0.0

    @property
    def filtered(self) -> bool:
        """The sampling settings changed the probabilities (so the two log p differ)."""
        m = self.mean_model_logprob_per_char
        return m is not None and abs(m - self.mean_logprob_per_char) > 5e-4

    def line(self, unit: str = "char") -> str:
        """One line under the table; ``unit``: what a model's token is (GPT-2's: a BPE token)."""
        new = f"new {self.share_new:.0%} ({self.new}/{self.count})" if self.known else "new: unknown"
        cut = f" · {self.unfinished} cut at max len (…)" if self.unfinished else ""
        if self.filtered:
            lp = (f"log p/{unit} {self.mean_model_logprob_per_char:.3f} "
                  f"(as sampled {self.mean_logprob_per_char:.3f})")
        else:
            lp = f"log p/{unit} {self.mean_logprob_per_char:.3f}"
        return f"{new} · length {self.mean_length:.1f} · {lp}{cut}"


def summarize(samples: list[Sample], known: bool = True, model_logprob: list[float] | None = None) -> Summary:
    n = len(samples)
    tokens = sum(s.n_tokens for s in samples)
    return Summary(
        count=n,
        new=sum(s.membership == "new" for s in samples),
        mean_length=sum(len(s.text) for s in samples) / n if n else 0.0,
        mean_logprob_per_char=sum(s.logprob for s in samples) / tokens if tokens else 0.0,
        unfinished=sum(not s.finished for s in samples),
        known=known,
        mean_model_logprob_per_char=(sum(model_logprob) / tokens if tokens else 0.0)
        if model_logprob is not None else None,
    )


@dataclass
class Batch:
    samples: list[Sample]
    summary: Summary
    seconds: float
    model_logprob: list[float] | None = None  # each name under the model itself (T = 1, no filter)


def _device(model) -> torch.device:
    for t in list(model.parameters()) + list(model.buffers()):
        return t.device
    return torch.device("cpu")


@torch.no_grad()
def model_logprobs(model, vocab, samples: list[Sample], prefix: str = "") -> list[float]:
    """Each sample's log-probability under the model itself: temperature 1, no top-k or top-p.

    ``Sample.logprob`` is measured under the distribution it was drawn from; with top-k 1 that is
    0.00 for every name, which says nothing about the model. Here the same tokens (the sampled
    characters after ``prefix``, and the end token where the name finished) are scored by one
    batched forward pass.
    """
    if not samples:
        return []
    rows = []
    for s in samples:
        full = [0] + vocab.encode(s.text) + ([0] if s.finished else [])
        rows.append(full)
    width = max(len(r) for r in rows) - 1
    inputs = torch.zeros((len(rows), max(width, 1)), dtype=torch.long)
    for i, r in enumerate(rows):
        inputs[i, : len(r) - 1] = torch.tensor(r[:-1])
    model.eval()
    logits, _ = model(inputs.to(_device(model)))
    logp = torch.log_softmax(logits.float().cpu(), dim=-1)
    out = []
    for i, r in enumerate(rows):
        first = len(prefix)  # the prefix was given, not sampled: its characters are not counted
        positions = range(first, len(r) - 1)
        out.append(float(sum(logp[i, t, r[t + 1]] for t in positions)))
    return out


def run_batch(loaded: Loaded, s: Settings) -> Batch:
    s.check()
    t0 = time.perf_counter()
    if loaded.is_text:
        return _continue_prompt(loaded, s, t0)
    with one_thread():
        samples = generate(loaded.model, loaded.vocab, s.n, temperature=s.temperature, top_k=s.top_k,
                           top_p=s.top_p, prefix=s.prefix, max_len=s.max_len, seed=s.seed,
                           dataset=loaded.dataset)
        model_lp = model_logprobs(loaded.model, loaded.vocab, samples, s.prefix)
    return Batch(samples, summarize(samples, loaded.dataset is not None, model_lp), time.perf_counter() - t0,
                 model_lp)


def text_prompt(loaded: Loaded, prefix: str) -> str:
    """What a text model continues: the prefix, or with none a line break (a space if its text had
    no line breaks): a text model has no start token to begin from."""
    if prefix:
        return prefix
    if not hasattr(loaded.vocab, "stoi"):  # a byte-level BPE spells anything
        return "\n"
    for start in ("\n", " "):
        if start in loaded.vocab.stoi:
            return start
    raise SamplingError("a text model continues a prompt: type a prefix (f)")


def _continue_prompt(loaded: Loaded, s: Settings, t0: float) -> Batch:
    """A text model's batch: ``n`` continuations of the prefix (see ``text_prompt``)."""
    prompt = text_prompt(loaded, s.prefix)
    length = s.max_len or TEXT_CHARS
    if hasattr(loaded.checkpoint, "check_continuation"):  # a pretrained model: bounded before any work
        length = s.max_len or min(TEXT_CHARS, loaded.model.config.block_size - len(loaded.vocab.encode(prompt)))
        loaded.checkpoint.check_continuation(prompt, length, s.n)
    with one_thread():
        outs = continue_text(loaded.model, loaded.vocab, prompt, length, n=s.n,
                             temperature=s.temperature, top_k=s.top_k, top_p=s.top_p, seed=s.seed)
    samples = [Sample(s.prefix + o.text, o.logprob, len(o.text), True) for o in outs]
    model_lp = [o.logprob for o in outs]
    return Batch(samples, summarize(samples, False, model_lp), time.perf_counter() - t0, model_lp)


@dataclass
class SweepColumn:
    temperature: float
    entropy: float  # of the first next-character distribution (after the prefix), in nats
    batch: Batch


def temperature_sweep(loaded: Loaded, s: Settings, temperatures=SWEEP_TEMPERATURES) -> list[SweepColumn]:
    """The same seed and options at each temperature: only T changes between columns."""
    out = []
    # A text model's first distribution follows its prompt as it is, with no start token before it.
    context = text_prompt(loaded, s.prefix) if loaded.is_text else s.prefix
    for t in temperatures:
        st = Settings(s.n, t, s.top_k, s.top_p, s.prefix, s.seed, s.max_len)
        dist = next_distribution(loaded.model, loaded.vocab, context, t, s.top_k, s.top_p,
                                 start_token=not loaded.is_text)
        out.append(SweepColumn(t, dist.entropy, run_batch(loaded, st)))
    return out


# ------------------------------------------------------------------ saving
def save_names(samples: list[Sample], settings: Settings, source: str, folder: Path | None = None) -> Path:
    """Write the names (one a line, with a comment header) under the user's data folder."""
    folder = folder if folder is not None else paths.user_data_dir() / "playground"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"names-{stamp}.txt"
    i = 1
    while path.exists():
        i += 1
        path = folder / f"names-{stamp}-{i}.txt"
    header = [f"# {len(samples)} names from {source}", f"# {settings.describe()}"]
    lines = [f"{s.text}\t{s.membership}\t{s.logprob:.4f}" for s in samples]
    return write_output(path, "\n".join(header + lines) + "\n", f"the names {path.name}")
