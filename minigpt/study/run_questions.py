"""Interview questions about the learner's own runs, with the run's numbers (torch-free).

Each question carries a rubric and a worked answer computed from the run folder (status.json and
metrics.jsonl, read through :mod:`minigpt.runs`): the final loss in bits per character (nats / ln 2),
why the loss started near ln V (a uniform guess over V characters), and the gap between the
training and the validation loss at a step where both were measured. Two seed groups (``minigpt
train --seeds N``) give one more: when Welch's t-test (:mod:`minigpt.significance`) says their final losses
differ (p < ``ALPHA``) the question asks what the difference means; otherwise it asks whether they
differ at all, and the worked answer says why the answer is "not shown". A sweep over dropout
(gathered by :mod:`minigpt.experiments.sweep_questions`) gives the same pair: why its best dropout beat
0.0 at its size when the t-test over the seeds of the two settings says so, else whether it did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from minigpt.runs.listing import RunInfo
from minigpt.runs.metrics import RunMetrics
from minigpt.runs.schema import RunState
from minigpt.significance import welch_t_test
from minigpt.study.cards import StudyCard

ALPHA = 0.05          # the t-test's threshold for "the groups differ"
GAP_NOISE = 0.02      # nats: a train/val gap smaller than this is read as no gap
MAX_RUNS = 3          # the latest finished or stopped runs asked about


@dataclass(frozen=True)
class RunQuestion:
    id: str            # "run:<folder>:<what>", never asked twice in one interview
    lesson: str        # the lesson the question practises
    prompt: str
    answer: str        # the worked answer, with the run's numbers
    rubric: tuple[str, ...]


def _title(run: RunInfo) -> str:
    return f"“{run.label}”" if run.label and run.label != run.name else run.name


def bits_question(run: RunInfo, loss: float) -> RunQuestion:
    bits = loss / math.log(2)
    return RunQuestion(
        f"run:{run.name}:bits", "the-loss",
        f"Your run {_title(run)} ended with a validation loss of {loss:.3f} nats per character. "
        "What is that in bits per character, and what does the number say?",
        f"Divide by ln 2: {loss:.3f} / {math.log(2):.4f} = {bits:.3f} bits per character. On average the model "
        f"needs about {bits:.2f} yes/no answers to pin down the next character; a perfect model would need 0.",
        ("divides the loss in nats by ln 2 (≈ 0.693) to get bits",
         f"gets about {bits:.2f} bits per character",
         "reads it as the average number of yes/no answers (or bits of code) per character"))


def start_question(run: RunInfo, first_step: int, first_loss: float, uniform: float) -> RunQuestion:
    vocab = round(math.exp(uniform))
    return RunQuestion(
        f"run:{run.name}:start", "the-loss",
        f"At step {first_step} your run {_title(run)} logged a training loss of {first_loss:.3f}, and ln V for its "
        f"V = {vocab} characters is {uniform:.3f}. Why does the loss start near ln V?",
        f"A freshly initialised model has small logits, so its softmax is close to uniform: each of the {vocab} "
        f"characters gets about 1/{vocab}, and the cross-entropy of that guess is −ln(1/{vocab}) = ln {vocab} = "
        f"{uniform:.3f}. The first logged loss, {first_loss:.3f}, is {first_loss - uniform:+.3f} from it; far above "
        "it would mean a confident wrong start (init too large).",
        ("the logits start small (near zero) at initialisation",
         "so the softmax is close to uniform over the V characters",
         f"and the cross-entropy of a uniform guess is ln V = {uniform:.3f}",
         "a start far above ln V would mean logits too large at init"))


def gap_question(run: RunInfo, step: int, train: float, val: float) -> RunQuestion:
    gap = val - train
    if gap > GAP_NOISE:
        meaning = (f"the model does {gap:.3f} nats better on text it trained on than on unseen text: it is starting "
                   "to fit the training set's particulars (overfitting).")
        point = "val above train: it is starting to overfit (memorise the training text)"
    elif gap < -GAP_NOISE:
        meaning = (f"the validation loss is {-gap:.3f} nats below the training loss: the training loss is logged "
                   "with dropout on and on a few batches, so it can sit above an eval-mode loss; no overfitting yet.")
        point = "val below train: dropout is on while the training loss is logged, not overfitting"
    else:
        meaning = "the two agree within noise: the model generalises as well as it fits, no overfitting yet."
        point = "no real gap: no overfitting yet"
    return RunQuestion(
        f"run:{run.name}:gap", "training",
        f"At step {step} of your run {_title(run)} the training loss was {train:.3f} and the validation loss "
        f"{val:.3f}. What does the gap of {gap:+.3f} mean, and what would you do if it grew?",
        f"val − train = {val:.3f} − {train:.3f} = {gap:+.3f}: {meaning} If it grew: more data, more dropout or "
        "weight decay, a smaller model, or stop at the best validation loss.",
        (f"computes the gap val − train = {gap:+.3f}", point,
         "names a remedy if it grew: more data, dropout, weight decay, a smaller model or early stopping"))


def group_question(name_a: str, a: list[float], name_b: str, b: list[float]) -> RunQuestion:
    """Whether two seed groups differ, asked only as a given when the t-test says they do."""
    test = welch_t_test(a, b)
    better = name_a if test.difference < 0 else name_b
    figures = f"{len(a)} and {len(b)} seeds; mean final validation loss differs by {test.describe(' nats')}"
    if test.p < ALPHA:
        return RunQuestion(
            f"run:groups:{name_a}:{name_b}", "model-comparison",
            f"Your seed groups {name_a} and {name_b} ({figures}). {better} is better beyond its seed noise: "
            "what does the test establish, and what does it not?",
            f"With p = {test.p:.3g} < {ALPHA}, a difference this large would rarely come from seed noise alone, so "
            f"{better}'s setting is better on this data and size. It says nothing about the size of the effect "
            "elsewhere (other sizes, other data), and with few seeds the estimate of the difference is rough.",
            (f"p = {test.p:.3g} is below {ALPHA}: the difference is unlikely to be seed noise",
             f"{better} is the better setting here",
             "it does not say the difference holds at other sizes or on other data"))
    return RunQuestion(
        f"run:groups:{name_a}:{name_b}", "model-comparison",
        f"Your seed groups {name_a} and {name_b} ({figures}). Does one setting beat the other?",
        f"Not shown: p = {test.p:.3g} is above {ALPHA}, so a difference this size comes often from the seeds alone. "
        "More seeds per group, or a larger effect, would be needed before calling either better.",
        (f"p = {test.p:.3g} is above {ALPHA}: the difference could be seed noise",
         "so neither setting is shown better",
         "more seeds per group would settle it"))


def questions_for_run(run: RunInfo) -> list[RunQuestion]:
    """The questions one run's folder can answer (none when it logged nothing)."""
    metrics = RunMetrics(run.path)
    metrics.poll()
    out = []
    final = metrics.val_loss[-1] if metrics.val_loss else run.val_loss
    if final is not None and math.isfinite(final):
        out.append(bits_question(run, final))
    if run.uniform_loss and metrics.train_loss and math.isfinite(metrics.train_loss[0]):
        out.append(start_question(run, metrics.steps[0], metrics.train_loss[0], run.uniform_loss))
    train_at = {s: x for s, x in zip(metrics.steps, metrics.train_loss) if math.isfinite(x)}
    both = [s for s, x in zip(metrics.val_steps, metrics.val_loss) if s in train_at and math.isfinite(x)]
    if both:
        step = both[-1]
        out.append(gap_question(run, step, train_at[step], metrics.val_loss[metrics.val_steps.index(step)]))
    return out


def questions_for_runs(runs: list[RunInfo]) -> list[RunQuestion]:
    """Questions about the latest finished or stopped runs, and about the two latest seed groups."""
    done = [r for r in runs if r.status in (RunState.FINISHED, RunState.STOPPED)]
    done.sort(key=lambda r: r.started_at or "", reverse=True)
    out = [q for run in done[:MAX_RUNS] for q in questions_for_run(run)]
    groups: dict[str, list[float]] = {}
    for run in done:
        final = run.val_loss if run.val_loss is not None else run.best_val
        if run.group and final is not None and math.isfinite(final):
            groups.setdefault(run.group, []).append(final)
    full = [(name, losses) for name, losses in groups.items() if len(losses) >= 2][:2]
    if len(full) == 2:
        out.append(group_question(full[0][0], full[0][1], full[1][0], full[1][1]))
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def dropout_question(sweep: str, size: str, best: float, best_losses: list[float], zero_losses: list[float],
                     gaps: tuple[float | None, float | None] = (None, None)) -> RunQuestion:
    """Why the sweep's best dropout beat 0.0, asked as a given only when Welch's t-test over the
    seeds of the two settings says the difference is real (p < ALPHA); otherwise whether it is.
    ``gaps``: the val − train gap of the best setting and of 0.0, when the sweep measured them."""
    a, b = _mean(best_losses), _mean(zero_losses)
    figures = (f"dropout {best:g} ended at a validation loss of {a:.3f}, dropout 0.0 at {b:.3f} "
               f"({len(best_losses)} and {len(zero_losses)} run{'s' * (len(zero_losses) != 1)})")
    test = welch_t_test(best_losses, zero_losses) if min(len(best_losses), len(zero_losses)) >= 2 else None
    ident = f"run:sweep:{sweep}:dropout:{size}"
    if test is not None and test.p < ALPHA:
        gap_best, gap_zero = gaps
        gap_text = (f" The gaps say so: val − train is {gap_zero:.3f} without dropout and {gap_best:.3f} with it."
                    if gap_best is not None and gap_zero is not None else "")
        return RunQuestion(
            ident, "training",
            f"In your sweep {sweep} at {size}, {figures}; the difference is beyond seed noise (p = {test.p:.3g}). "
            f"Why did dropout {best:g} beat 0.0 at this size?",
            f"At {size} on this data the model without dropout fits the training text more closely than it "
            f"generalises, so its validation loss suffers.{gap_text} Dropout zeroes a random share of activations "
            "in training, so no unit can lean on a particular other one: it regularises, trading a little fit for "
            f"less overfitting, here {b - a:.3f} nats of validation loss (p = {test.p:.3g} < {ALPHA}). With more "
            "data per parameter, or a smaller model, the benefit shrinks and 0.0 can win.",
            ("without dropout the model overfits at this size: a wider train/val gap",
             "dropout zeroes random activations in training, a regulariser against memorising",
             f"the difference is beyond seed noise (p = {test.p:.3g} < {ALPHA})",
             "it depends on size and data: with more data per parameter the benefit shrinks"))
    why = (f"p = {test.p:.3g} is above {ALPHA}, so a difference this size comes often from the seeds alone"
           if test is not None else
           "with one run per setting there is no seed spread to compare the difference with: the seed alone "
           "moves a final loss by about as much")
    return RunQuestion(
        ident, "training",
        f"In your sweep {sweep} at {size}, {figures}. Is dropout {best:g} really better than 0.0 here?",
        f"Not shown: {why}. Run each setting over several seeds (minigpt train --seeds N, or a seed axis) and "
        "compare them with the t-test before explaining the difference.",
        (f"{'p is above ' + str(ALPHA) if test is not None else 'one run per setting'}: "
         "the difference could be seed noise",
         "so dropout is not shown better yet",
         "more seeds per setting, compared with a t-test, would settle it"))


def as_card(question: RunQuestion) -> StudyCard:
    """The question as an explain card (the chapter quiz asks it beside the deck's questions)."""
    return StudyCard(question.id, "question", question.lesson, question.prompt, question.answer,
                     checklist=question.rubric)
