"""Looking inside a model from the playground: one character at a time (every stage of the
next-character distribution), the probability of each character of a typed name, and the
bigram / MLP / MiniGPT comparison of chapter 9 under the same sampling settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from minigpt.data import BOUNDARY
from minigpt.errors import CheckpointError, DatasetError
from minigpt.models.config import MODEL_LABELS as KIND_LABELS
from minigpt.playground.checkpoint_choices import CheckpointChoice
from minigpt.playground.generation import (
    Batch,
    Loaded,
    Settings,
    fit_case,
    load_for_playground,
    run_batch,
)
from minigpt.sampling import Distribution, SamplingError, greedy_continuation, next_distribution, score_word
from minigpt.training.schedule import evaluate

MODEL_ORDER = ("bigram", "mlp", "gpt")  # chapter 9's comparison, simplest first


# ------------------------------------------------------------------ step mode
class Stepper:
    """One name built a character at a time; the learner may sample or choose each one."""

    def __init__(self, loaded: Loaded, settings: Settings):
        refuse_text_model(loaded, "Step mode")
        self.loaded, self.settings = loaded, settings
        self.gen = torch.Generator().manual_seed(settings.seed)
        self.reset(settings.prefix)

    def reset(self, prefix: str = "") -> None:
        self.text = prefix
        self.logprob = 0.0
        self.history: list[tuple[str, float]] = []  # (chosen char, its final probability)
        self.finished = False
        self.distribution = None if self._full() else self._dist()

    def _full(self) -> bool:
        limit = self.loaded.model.config.block_size - 1
        if self.settings.max_len is not None:
            limit = min(limit, self.settings.max_len)
        return len(self.text) >= limit

    def _dist(self) -> Distribution:
        s = self.settings
        return next_distribution(self.loaded.model, self.loaded.vocab, self.text, s.temperature, s.top_k, s.top_p)

    def refresh(self) -> None:
        """Recompute the distribution after the settings changed (e.g. a new temperature)."""
        if not self.finished:
            self.distribution = None if self._full() else self._dist()

    def sample(self) -> str:
        if self.finished or self.distribution is None:
            raise SamplingError("this name is complete: start a new one")
        i = int(torch.multinomial(self.distribution.probs, 1, generator=self.gen))
        return self._take(i)

    def choose(self, char: str) -> str:
        if self.finished or self.distribution is None:
            raise SamplingError("this name is complete: start a new one")
        vocab = self.loaded.vocab
        if char not in vocab.stoi:
            raise SamplingError(f"{char!r} is not in the model's vocabulary ({''.join(vocab.chars)})")
        i = vocab.stoi[char]
        if self.distribution.probs[i] <= 0:
            raise SamplingError(f"{char!r} is ruled out by top-k / top-p (probability 0 after filtering)")
        return self._take(i)

    def _take(self, i: int) -> str:
        p = float(self.distribution.probs[i])
        char = self.loaded.vocab.chars[i]
        self.history.append((char, p))
        self.logprob += math.log(p)
        if i == 0:
            self.finished, self.distribution = True, None
        else:
            self.text += char
            if self._full():
                self.finished, self.distribution = True, None
            else:
                self.distribution = self._dist()
        return char

    def undo(self) -> bool:
        if not self.history:
            return False
        char, p = self.history.pop()
        self.logprob -= math.log(p)
        if char != BOUNDARY:
            self.text = self.text[:-1]
        self.finished = False
        self.distribution = self._dist()
        return True

    @property
    def membership(self) -> str | None:
        ds = self.loaded.dataset
        return ds.membership(self.text) if ds is not None else None


# ------------------------------------------------------------------ scoring
@dataclass
class ScoreRow:
    prefix: str  # what the model had seen
    char: str  # the character of the name ('.' = the end)
    prob: float
    best: str
    best_prob: float
    continuation: str  # the greedy (top-k = 1) name from this prefix


@dataclass
class Score:
    word: str
    rows: list[ScoreRow]
    total_logprob: float
    membership: str | None
    note: str = ""  # what was left out (a text longer than the model's context)

    @property
    def mean_logprob(self) -> float:
        return self.total_logprob / len(self.rows)


def refuse_text_model(loaded: Loaded, what: str) -> None:
    """Step mode and scoring build names between start and end tokens; a text model has neither
    (its ``.`` is an ordinary character), so their numbers would be wrong for it."""
    if loaded.is_text:
        raise SamplingError(f"{what} works on names; this is a text model, which continues a prompt: "
                            f"set a prefix (f) and generate (r)")


def score_name(loaded: Loaded, word: str) -> Score:
    refuse_text_model(loaded, "Scoring")
    word = fit_case(loaded.vocab, word.strip())
    if not word:
        raise SamplingError("type a name to score")
    if BOUNDARY in word:
        raise SamplingError(f"{BOUNDARY!r} is the start/end token; type the name without it")
    chars, total = score_word(loaded.model, loaded.vocab, word)
    rows = [ScoreRow(word[:i], c.char, c.prob, c.best, c.best_prob,
                     greedy_continuation(loaded.model, loaded.vocab, word[:i]))
            for i, c in enumerate(chars)]
    ds = loaded.dataset
    return Score(word, rows, total, ds.membership(word) if ds is not None else None)


def is_pretrained(loaded: Loaded) -> bool:
    """A GPT-2 folder (minigpt.pretrained): it continues text, and scores a typed text per token."""
    return hasattr(loaded.checkpoint, "check_continuation")


def score_text(loaded: Loaded, text: str) -> Score:
    """Per-token surprise of a typed text on a pretrained model: each BPE token's probability
    after the tokens before it, and the model's own first choice there (``prefix``: the end of
    the text so far, as pieces)."""
    from minigpt.text_scoring import encode_text, ids_surprise

    if not text.strip():
        raise SamplingError("type a text to score")
    ids, block, note = encode_text(loaded.vocab, text), loaded.model.config.block_size, ""
    if len(ids) > block:  # (a long continuation from the table): what one pass reads, said so
        note = f"its first {block:,} of {len(ids):,} tokens, the model's context"
        ids = ids[:block]
    surprise = ids_surprise(loaded.model, loaded.vocab, ids)
    if not surprise:
        raise SamplingError("type a longer text: its first token is only context, there is nothing to score yet")
    pieces = [loaded.vocab.piece(i) for i in ids]
    rows = [ScoreRow("".join(pieces[: t + 1])[-16:], s.piece, s.prob, s.best, s.best_prob, "")
            for t, s in enumerate(surprise)]
    return Score(text, rows, sum(math.log(s.prob) for s in surprise), None, note)


# ------------------------------------------------------------------ comparing models
@dataclass
class ModelColumn:
    kind: str
    label: str
    val_loss: float | None = None
    test_loss: float | None = None
    batch: Batch | None = None
    note: str | None = None  # why there is nothing to show, or where the model came from
    slot: str = ""  # which column: the kind for the three reference models, "yours" for the learner's

    def __post_init__(self) -> None:
        self.slot = self.slot or self.kind


def fit_bigram(loaded: Loaded):
    """A bigram counted from ``loaded``'s training split (milliseconds: nothing to train)."""
    from minigpt.models.bigram import Bigram
    from minigpt.models.config import BigramConfig

    ds = loaded.dataset
    model = Bigram(BigramConfig(vocab_size=ds.vocab.size, block_size=ds.block_size))
    model.fit(ds.train.x, ds.train.y)
    return model.eval()


def _best(choices: list[CheckpointChoice]) -> dict[str, CheckpointChoice]:
    by_kind: dict[str, CheckpointChoice] = {}
    for c in choices:  # the best validation loss of each kind
        best = by_kind.get(c.kind)
        if best is None or (c.val_loss is not None and (best.val_loss is None or c.val_loss < best.val_loss)):
            by_kind[c.kind] = c
    return by_kind


def learners_model(choices: list[CheckpointChoice], current: CheckpointChoice | None = None) -> CheckpointChoice | None:
    """The learner's own model to set beside the references: the one open in the playground if it
    is a run's, else their run with the best validation loss (None when they have no run)."""
    if current is not None and current.source == "run":
        return current
    runs = [c for c in choices if c.source == "run"]
    scored = [c for c in runs if c.val_loss is not None]
    return min(scored, key=lambda c: c.val_loss) if scored else (runs[0] if runs else None)


def _sample_column(col: ModelColumn, choice: CheckpointChoice, settings: Settings,
                   reference: Loaded | None) -> None:
    same = reference is not None and Path(reference.checkpoint.path) == Path(choice.path)
    loaded = reference if same else load_for_playground(choice.path)
    who = "yours" if choice.source == "run" else "shipped"
    col.label = f"{KIND_LABELS.get(choice.kind, choice.kind)} · {who}"
    col.note = choice.details
    col.val_loss, col.test_loss = loaded.loss
    col.batch = run_batch(loaded, settings)


def compare_models(choices: list[CheckpointChoice], settings: Settings,
                   reference: Loaded | None = None, current: CheckpointChoice | None = None) -> list[ModelColumn]:
    """One column per model kind (bigram, MLP, GPT), each sampled with the same settings, then one
    for the learner's own model (``learners_model``) when they have trained one.

    The three reference columns take the shipped checkpoints (a run of that kind when nothing of
    it was shipped). A kind with no checkpoint gets a note saying how to train one, except the
    bigram, which is counted on the spot from ``reference``'s training split when none was saved.
    """
    shipped = _best([c for c in choices if c.source != "run"])
    runs = _best([c for c in choices if c.source == "run"])
    columns, used = [], set()
    for kind in MODEL_ORDER:
        col = ModelColumn(kind, KIND_LABELS[kind])
        choice = shipped.get(kind) or runs.get(kind)
        used.add(choice.path if choice is not None else None)
        try:
            if choice is not None:
                _sample_column(col, choice, settings, reference)
            elif kind == "bigram" and reference is not None and reference.dataset is not None:
                from minigpt.checkpoint import Checkpoint

                model = fit_bigram(reference)
                ckpt = Checkpoint(Path("-"), "bigram", model, reference.vocab, model.config)
                loaded = Loaded(ckpt, reference.dataset)
                col.label = "Bigram (counted now)"
                col.val_loss = evaluate(model, reference.dataset.val)
                col.test_loss = evaluate(model, reference.dataset.test)
                col.batch = run_batch(loaded, settings)
            else:
                col.note = (f"no {KIND_LABELS[kind]} checkpoint yet: train one with "
                            f"`minigpt train --model {kind} --time 60`")
        except (CheckpointError, SamplingError, DatasetError) as e:
            col.note = str(e)
        columns.append(col)
    mine = learners_model(choices, current)
    if mine is not None and mine.path not in used:
        col = ModelColumn(mine.kind, mine.label, slot="yours")
        try:
            _sample_column(col, mine, settings, reference)
        except (CheckpointError, SamplingError, DatasetError) as e:
            col.note = str(e)
        columns.append(col)
    return columns
