"""The attention stepper's model: stages, the matrices each stage shows, and every number explained.

``StepperState`` holds the editable inputs (X and the weight matrices); ``compute`` runs
``minigpt.teaching.attention.multi_head_attention`` on them, and ``stage_panels`` lists what each stage
shows. ``explain_cell`` writes one cell's computation out term by term from the same trace, so
the explanation and the printed number can never disagree. Export (Markdown/CSV) and the
predict-then-reveal questions live here too, so the Textual screen only displays.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from minigpt.numbers import number_text, parse_number
from minigpt.teaching.attention import (
    BUGS,
    COURSE_EXAMPLE,
    FIVE_TOKEN_EXAMPLE,
    MultiHeadTrace,
    Preset,
    multi_head_attention,
    random_preset,
)

BUG_ORDER = ("mask_after_softmax", "mask_with_zero", "no_scaling", "softmax_wrong_axis", "k_not_transposed")
assert set(BUG_ORDER) == set(BUGS)

EDITABLE = ("X", "W_Q", "W_K", "W_V", "W_O")


def _rows(m) -> list[list[float]]:
    return [[float(v) for v in row] for row in m]


@dataclass
class StepperState:
    name: str
    tokens: list[str]
    X: list[list[float]]
    W_Q: list[list[float]]
    W_K: list[list[float]]
    W_V: list[list[float]]
    W_O: list[list[float]] | None
    n_heads: int = 1
    seed: int | None = None
    causal: bool = False
    bugs: set[str] = field(default_factory=set)
    dim_labels: list[str] | None = None  # X's columns (a trained model's folded bias reads "1")

    @classmethod
    def from_preset(cls, p: Preset) -> StepperState:
        return cls(p.name, list(p.tokens), _rows(p.X), _rows(p.W_q), _rows(p.W_k), _rows(p.W_v),
                   _rows(p.W_o) if p.W_o is not None else None, p.n_heads, p.seed)

    @property
    def multi_head(self) -> bool:
        return self.n_heads > 1 or self.W_O is not None

    def matrix(self, name: str) -> list[list[float]]:
        return getattr(self, name)

    def set_entry(self, name: str, i: int, j: int, value: float) -> None:
        if name not in EDITABLE or self.matrix(name) is None:
            raise ValueError(f"{name} is computed, not an input: edit X or a weight matrix")
        if not math.isfinite(value):
            raise ValueError("enter a finite number")
        self.matrix(name)[i][j] = float(value)

    def compute(self) -> MultiHeadTrace:
        d = len(self.X[0])
        W_O = self.W_O if self.W_O is not None else torch.eye(d, dtype=torch.float64)
        return multi_head_attention(self.X, self.W_Q, self.W_K, self.W_V, W_O, self.n_heads,
                                    causal=self.causal, bugs=frozenset(self.bugs))


def preset_state(index: int, seed: int = 0, shape: tuple[int, int, int] = (5, 4, 2)) -> StepperState:
    """0: the course's example, 1: five tokens d=4, 2: seeded random with shape (T, d, heads)."""
    if index == 0:
        return StepperState.from_preset(COURSE_EXAMPLE)
    if index == 1:
        return StepperState.from_preset(FIVE_TOKEN_EXAMPLE)
    return StepperState.from_preset(random_preset(seed, *shape))


@dataclass
class Panel:
    """One matrix as a stage shows it."""

    name: str
    values: list[list[float]]
    scale: str  # "diverging" (centred at 0) or "unit" (fixed 0–1)
    row_labels: list[str]
    col_labels: list[str]
    editable: bool = False

    @property
    def shape(self) -> str:
        return f"{len(self.values)}×{len(self.values[0]) if self.values else 0}"


class _View:
    """What every stage's panels are built from: the trace of one head and the labels."""

    def __init__(self, state: StepperState, mh: MultiHeadTrace, head: int):
        self.state, self.mh, self.head = state, mh, head
        self.toks = state.tokens
        d = len(state.X[0])
        self.dims = state.dim_labels or [f"d{j}" for j in range(d)]
        self.tr = mh.heads[head]
        dh = self.tr.Q.shape[1]
        self.hd = [f"d{head * dh + j}" for j in range(dh)]
        self.sfx = f"_{head}" if state.multi_head else ""
        n_cols = self.tr.scores.shape[1]
        self.keys = self.toks[:n_cols] if n_cols <= len(self.toks) else [f"c{j}" for j in range(n_cols)]

    @staticmethod
    def panel(name, m, labels_r, labels_c, scale="diverging", editable=False) -> Panel:
        return Panel(name, _rows(m), scale, labels_r, labels_c, editable)


def _input_panels(v: _View) -> list[Panel]:
    st = v.state
    out = [v.panel(n, st.matrix(n), v.toks if n == "X" else v.dims, v.dims, editable=True)
           for n in ("X", "W_Q", "W_K", "W_V")]
    if st.W_O is not None:
        out.append(v.panel("W_O", st.W_O, v.dims, v.dims, editable=True))
    return out


@dataclass(frozen=True)
class Stage:
    """One stage of the stepper: everything about it is defined here, once."""

    id: str
    title: str  # what the stage computes, shown beside the path
    label: str  # its short name on the path of stages
    panels: Callable[[_View], list[Panel]]
    multi_head_only: bool = False  # split, concat and W_O exist only with heads or a W_O
    uses_scores: bool = False  # shows the trace's error when the scores cannot be computed
    row_sums: bool = False  # its rows are distributions: show their sums


# In order. Adding a stage: a row here, and its cell explanation in ``explain_cell``.
STAGES: tuple[Stage, ...] = (
    Stage("input", "X and the weights", "X", _input_panels),
    Stage("qkv", "Q = XW_Q, K = XW_K, V = XW_V", "QKV",
          lambda v: [v.panel("Q", v.mh.Q, v.toks, v.dims), v.panel("K", v.mh.K, v.toks, v.dims),
                     v.panel("V", v.mh.V, v.toks, v.dims)]),
    Stage("split", "split into heads", "split",
          lambda v: [v.panel("Q" + v.sfx, v.tr.Q, v.toks, v.hd), v.panel("K" + v.sfx, v.tr.K, v.toks, v.hd),
                     v.panel("V" + v.sfx, v.tr.V, v.toks, v.hd)], multi_head_only=True),
    Stage("scores", "scores QKᵀ", "QKᵀ", lambda v: [v.panel("S" + v.sfx, v.tr.scores, v.toks, v.keys)],
          uses_scores=True),
    Stage("scaled", "÷ √d_k", "÷√d", lambda v: [v.panel("S/√d" + v.sfx, v.tr.scaled, v.toks, v.keys)],
          uses_scores=True),
    Stage("masked", "causal mask (−∞)", "mask", lambda v: [v.panel("M" + v.sfx, v.tr.masked, v.toks, v.keys)],
          uses_scores=True),
    Stage("weights", "softmax", "softmax",
          lambda v: [v.panel("A" + v.sfx, v.tr.weights, v.toks, v.keys, scale="unit")],
          uses_scores=True, row_sums=True),
    Stage("output", "weights · V", "·V", lambda v: [v.panel("out" + v.sfx, v.tr.output, v.toks, v.hd)],
          uses_scores=True),
    Stage("concat", "concat heads", "concat", lambda v: [v.panel("concat", v.mh.concat, v.toks, v.dims)],
          multi_head_only=True),
    Stage("wo", "· W_O", "W_O",
          lambda v: [v.panel("out", v.mh.output, v.toks, v.dims), v.panel("W_O", v.mh.W_o, v.dims, v.dims)],
          multi_head_only=True),
)
STAGE = {s.id: s for s in STAGES}


def stages_for(state: StepperState) -> list[str]:
    """The ids of the stages this state goes through (heads add split, concat and W_O)."""
    return [s.id for s in STAGES if state.multi_head or not s.multi_head_only]


def stage_panels(state: StepperState, mh: MultiHeadTrace, stage: str, head: int = 0) -> list[Panel]:
    return STAGE[stage].panels(_View(state, mh, head))


# ---------------------------------------------------------------------------------------------
# Numbers as text


def fmt(v: float, decimals: int = 3) -> str:
    """A cell's printed number: fixed decimals, −∞ and +∞ spelled out, NaN named; a tiny negative
    keeps its minus (-0.000), which a lesson's tables drop (``examples.registry.fmt``)."""
    return number_text(v, decimals=decimals, signed_zero=True)


def term(v: float) -> str:
    """A factor in a written-out sum: short (1.0, 0.5, 0.707), never misleadingly rounded to 0."""
    s = fmt(v).rstrip("0")
    return s + "0" if s.endswith(".") else s


def _dot(a, b, most: int = 8) -> str:
    """a·b as its products; a long one (a trained model's 64 dimensions) as its first and last few."""
    products = [f"{term(x)}×{term(y)}" for x, y in zip(a.tolist(), b.tolist())]
    if len(products) > most:
        products = [*products[:3], f"… {len(products) - 5} more …", *products[-2:]]
    return " + ".join(products)


def explain_cell(state: StepperState, mh: MultiHeadTrace, stage: str, panel: str, i: int, j: int,
                 head: int = 0) -> str:
    """One cell's computation, term by term, from the same trace the screen prints."""
    tr = mh.heads[head]
    tok = state.tokens
    sub = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
    ii, jj = str(i).translate(sub), str(j).translate(sub)
    X = mh.X
    if stage == "input":
        if panel == "X":
            return f"X[{i},{j}] = {term(X[i, j].item())}: dimension {j} of token {i} ({tok[i]!r}). e edits it."
        return f"{panel}[{i},{j}] = {term(state.matrix(panel)[i][j])}: a learned weight. e edits it."
    if stage == "qkv":
        W = {"Q": state.W_Q, "K": state.W_K, "V": state.W_V}[panel]
        W = torch.tensor(W, dtype=torch.float64)
        val = X[i] @ W[:, j]
        return f"{panel}[{i},{j}] = x{ii}·W_{panel}[:,{j}] = {_dot(X[i], W[:, j])} = {fmt(val.item(), 2)}"
    if stage == "split":
        dh = tr.Q.shape[1]
        src = panel.split("_")[0]
        v = {"Q": tr.Q, "K": tr.K, "V": tr.V}[src][i, j].item()
        return (f"{panel}[{i},{j}] = {src}[{i},{head * dh + j}] = {fmt(v, 2)}: a reshape "
                f"(T×d → heads×T×d_h), no new numbers")
    if stage == "scores":
        if tr.error:
            return f"S cannot be computed: {tr.error}"
        if "k_not_transposed" in tr.bugs:
            return (f"S[{i},{j}] = q{ii}·K[:,{j}] = {_dot(tr.Q[i], tr.K[:, j])} = "
                    f"{fmt(tr.scores[i, j].item(), 2)}  (bug: K not transposed mixes positions with dims)")
        return f"S[{i},{j}] = q{ii}·k{jj} = {_dot(tr.Q[i], tr.K[j])} = {fmt(tr.scores[i, j].item(), 2)}"
    if stage == "scaled":
        s = tr.scores[i, j].item()
        if tr.scale == 1.0 and tr.Q.shape[1] != 1:
            return f"S[{i},{j}] / 1 = {fmt(s)}  (bug: no √d_k; should be ÷ √{tr.Q.shape[1]})"
        return f"S[{i},{j}] / √{tr.Q.shape[1]} = {term(s)} / {tr.scale:.3f} = {fmt(tr.scaled[i, j].item())}"
    if stage == "masked":
        m = tr.masked[i, j].item()
        if tr.mask is None:
            return f"M[{i},{j}] = {fmt(m)}: no causal mask (m turns it on), scores pass through"
        if tr.mask[i, j]:
            return f"M[{i},{j}] = {fmt(m)}: key {j} ≤ query {i}, visible, unchanged"
        if "mask_after_softmax" in tr.bugs:
            return f"M[{i},{j}] = {fmt(m)}: bug: the mask waits until after the softmax"
        return f"M[{i},{j}] = {fmt(m)}: key {j} is in the future of query {i}, so it is masked"
    if stage == "weights":
        return _explain_weight(tr, i, j)
    if stage == "output":
        terms = " + ".join(f"{term(tr.weights[i, k].item())}×{term(tr.V[k, j].item())}"
                           for k in range(tr.weights.shape[1]))
        return f"out[{i},{j}] = Σₖ A[{i},k]·V[k,{j}] = {terms} = {fmt(tr.output[i, j].item())}"
    if stage == "concat":
        dh = tr.Q.shape[1]
        h = j // dh
        return f"concat[{i},{j}] = head {h}'s out[{i},{j - h * dh}] = {fmt(mh.concat[i, j].item())}"
    if stage == "wo":
        if panel == "W_O":
            return f"W_O[{i},{j}] = {term(mh.W_o[i, j].item())}: mixes the heads' outputs"
        return (f"out[{i},{j}] = concat{ii}·W_O[:,{j}] = {_dot(mh.concat[i], mh.W_o[:, j])} = "
                f"{fmt(mh.output[i, j].item())}")
    raise KeyError(stage)


def _explain_weight(tr, i: int, j: int) -> str:
    w = tr.weights[i, j].item()
    if "mask_after_softmax" in tr.bugs and tr.mask is not None and not tr.mask[i, j]:
        return f"A[{i},{j}] = 0 set after the softmax (bug): row {i} no longer sums to 1"
    column = "softmax_wrong_axis" in tr.bugs
    vec = tr.masked[:, j] if column else tr.masked[i]
    if not torch.isfinite(vec.max()):
        return f"A[{i},{j}] = {fmt(w)}"
    shift = vec.max().item() if vec.max().item() > 20 else 0.0  # keep exp() printable
    ex = torch.exp(vec - shift)
    m = f"m[{i},{j}]" + (f" − {term(shift)}" if shift else "")
    parts = " + ".join(term(e) for e in ex.tolist())
    where = f"down column {j} (bug: wrong axis)" if column else f"along row {i}"
    if not math.isfinite(tr.masked[i, j].item()):
        return f"A[{i},{j}] = e^(−∞) / Σ = 0: masked, exactly zero ({where})"
    return (f"A[{i},{j}] = e^({m}) / Σ {where} = {term(ex[i if column else j].item())} / "
            f"({parts}) = {fmt(w)}")


def row_sums(values: list[list[float]]) -> list[float]:
    return [sum(r) for r in values]


ROUNDING_NOTE = ("Σ adds the full-precision weights; the 3-decimal cells you see may add to "
                 "0.999 or 1.001: that is display rounding.")


def stage_note(state: StepperState, stage: str) -> str:
    """A remark for this stage, e.g. where the course's printed numbers are wrong."""
    if (stage == "weights" and state.name == COURSE_EXAMPLE.name and not state.causal
            and not state.bugs and _is_course(state)):
        return ("Note: the course prints row 3 as .218 .218 .346 .218; softmax([.354 .354 .707 .354]) "
                "is .226 .226 .322 .226, shown here.")
    if stage == "weights":
        return ROUNDING_NOTE
    return ""


def _is_course(state: StepperState) -> bool:
    p = COURSE_EXAMPLE
    return (state.X, state.W_Q, state.W_K, state.W_V) == (_rows(p.X), _rows(p.W_q), _rows(p.W_k),
                                                        _rows(p.W_v))


# ---------------------------------------------------------------------------------------------
# Export


def export_markdown(panel: Panel, stage: str = "", decimals: int = 3) -> str:
    title = f"**{panel.name}** ({panel.shape}){' — ' + (STAGE[stage].title if stage in STAGE else stage) if stage else ''}"
    head = "| | " + " | ".join(panel.col_labels) + " |"
    rule = "|---|" + "---:|" * len(panel.col_labels)
    body = ["| " + r + " | " + " | ".join(fmt(v, decimals) for v in row) + " |"
            for r, row in zip(panel.row_labels, panel.values)]
    return "\n".join([title, "", head, rule, *body]) + "\n"


def export_csv(panel: Panel) -> str:
    """Full precision (repr), −∞ as -inf, so a spreadsheet or numpy reads it back exactly."""
    lines = [",".join([""] + panel.col_labels)]
    for r, row in zip(panel.row_labels, panel.values):
        lines.append(",".join([r] + [repr(v) if math.isfinite(v) else str(v) for v in row]))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Predict, then reveal


@dataclass
class Question:
    prompt: str
    kind: str  # "cell" (a number) or "argmax" (which key gets the most weight)
    expected: float | int  # the value, or for argmax the first of the winning keys
    row: int
    col: int
    winners: tuple[int, ...] = ()  # argmax: every key that shares the largest weight


def make_question(panel: Panel, i: int, j: int) -> Question:
    """For weights: which key wins row i; otherwise: the value of the selected cell."""
    if panel.scale == "unit":
        row = panel.values[i]
        top = max(row)
        # Weights that agree to 12 digits are a tie (the course's row 3 has three equal keys):
        # every one of them is a right answer.
        winners = tuple(k for k, w in enumerate(row) if abs(w - top) <= 1e-12 * max(1.0, abs(top)))
        return Question(f"Row {i} ({panel.row_labels[i]}): which key gets the largest weight? "
                        f"(index 0–{len(row) - 1} or token)", "argmax", winners[0], i, winners[0], winners)
    return Question(f"Predict {panel.name}[{i},{j}] (2 decimals are enough)", "cell",
                    panel.values[i][j], i, j)


def check_answer(q: Question, text: str, labels: list[str]) -> tuple[bool, str]:
    """(correct?, message). Raises ValueError with a readable reason when the text is not an answer."""
    text = text.strip()
    if q.kind == "argmax":
        if text in labels and labels.count(text) == 1:
            k = labels.index(text)
        else:
            try:
                k = int(text)
            except ValueError:
                raise ValueError(f"answer with a key index 0–{len(labels) - 1} or a token name") from None
            if not 0 <= k < len(labels):
                raise ValueError(f"index {k} is out of range 0–{len(labels) - 1}")
        winners = q.winners or (int(q.expected),)
        ok = k in winners
        named = " and ".join(f"{w} ({labels[w]})" for w in winners)
        verb = "tie for" if len(winners) > 1 else "gets"
        return ok, f"{'Right' if ok else 'Not quite'}: key{'s' if len(winners) > 1 else ''} {named} {verb} the most weight"
    v = _predicted_value(text)
    exp = float(q.expected)
    if math.isinf(exp):
        ok = math.isinf(v) and (v > 0) == (exp > 0)
    else:
        ok = abs(v - exp) <= 0.01 + 0.01 * abs(exp)
    return ok, f"{'Right' if ok else 'Not quite'}: the value is {fmt(exp)} (you said {text})"


def _predicted_value(text: str) -> float:
    """A predicted cell: any number a learner may type (``minigpt.numbers.parse_number``: 0.2, 1/5,
    20%), or an infinity, which the typed-number reader refuses but a masked score is (-inf, −∞)."""
    spelled = text.lower().replace("\u2212", "-").replace(" ", "")
    if spelled.lstrip("+-") in ("inf", "infinity", "∞"):
        return -math.inf if spelled.startswith("-") else math.inf
    return parse_number(text)
