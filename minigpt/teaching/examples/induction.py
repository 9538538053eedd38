"""Worked examples for "Induction heads": the bundled two-layer attention-only model
(checkpoints/induction, made by scripts/make_induction_checkpoint.py) scored head by head, and its
loss on the repeated half against an untrained copy."""

from __future__ import annotations

import functools
import math

import torch

from minigpt.runs.lab import JOBS
from minigpt.teaching import induction
from minigpt.teaching.examples.registry import example, fmt, table

CHUNK = 10  # letters in each copy of the scoring rows


@functools.lru_cache(maxsize=1)
def bundled():
    """The bundled induction checkpoint, loaded once per process."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import checkpoints_dir

    ck = load_checkpoint(checkpoints_dir() / "induction")
    ck.model.eval()
    return ck


def untrained_twin(ck):
    """The same architecture at its initial weights (seeded), for the comparison."""
    from minigpt.models.build import build_model

    torch.manual_seed(0)
    return build_model(ck.kind, ck.model_config).eval()


@example("induction.scores", "Each head's previous-token and induction score")
def _scores() -> str:
    from minigpt.training.cpu_policy import one_thread

    ck = bundled()
    with one_thread():
        trained = induction.head_scores(ck.model, CHUNK)
        fresh = induction.head_scores(untrained_twin(ck), CHUNK)
    rows = []
    L, H = trained.previous.shape
    for layer in range(L):
        for head in range(H):
            rows.append([f"L{layer}H{head}", fmt(trained.previous[layer, head].item(), 2),
                         fmt(trained.induction[layer, head].item(), 2), fmt(fresh.previous[layer, head].item(), 2),
                         fmt(fresh.induction[layer, head].item(), 2)])
    pl, ph, ps = trained.best("previous")
    il, ih, iscore = trained.best("induction")
    return (table(["head", "previous", "induction", "untrained prev.", "untrained ind."], rows)
            + f"\n\nScores on 8 rows of {CHUNK} random letters written twice (heads named as in "
              f"the attention view, from 0). The best previous-token score is L{pl}H{ph}'s "
              f"{fmt(ps, 2)} of its attention on the position just before; the best induction "
              f"score is L{il}H{ih}'s {fmt(iscore, 2)} on the letter after the earlier copy of the "
              "current one. Untrained heads spread their weight, near 1/t over t keys.")


@example("induction.losses", "Loss on the repeats against the first copy, trained and untrained")
def _losses() -> str:
    from minigpt.repeat_data import load_repeat_dataset
    from minigpt.training.cpu_policy import one_thread

    ck = bundled()
    data = load_repeat_dataset(block_size=ck.model_config.block_size, seed=ck.train_config.get("split_seed", 42),
                               vocab=ck.vocab, sizes={"train": 1, "val": 1, "test": 512})
    with one_thread():
        trained = induction.repeat_losses(ck.model, data.test)
        fresh = induction.repeat_losses(untrained_twin(ck), data.test)
    rows = [["untrained", fmt(fresh.first, 3), fmt(fresh.repeated, 3)],
            ["trained", fmt(trained.first, 3), fmt(trained.repeated, 3)]]
    return (table(["model", "first copy", "repeats"], rows)
            + f"\n\nMean cross-entropy (nats) on 512 test rows: {trained.n_first:,} targets in a first "
              f"copy, {trained.n_repeated:,} in the repeats (from the second letter of the second copy "
              f"on). A random letter costs ln 26 = {fmt(math.log(26), 3)} at best; on the repeats the "
              f"trained model pays {fmt(trained.repeated, 3)}, a probability of about "
              f"{fmt(math.exp(-trained.repeated), 2)} on the right letter.")


NOT_RUN = ("Not run yet. Press **x** in this lesson to start it in the background (under a minute "
           "on a laptop), or run `minigpt lab run induction` in a terminal; the result appears here "
           "when it is done.")


@example(JOBS["induction"].example, "Your induction run: the heads you grew")
def _lab() -> str:
    from minigpt.errors import RunError
    from minigpt.runs.lab import is_running, job_dir, read_result

    try:
        result = read_result(job_dir("induction"))
    except RunError as e:
        return f"The saved result cannot be read ({e}); press **x** to run the job again."
    if result is None:
        if is_running(job_dir("induction")):
            return "Running in the background now; the result appears here when it is done."
        return NOT_RUN
    prev, ind = result["best"]["previous"], result["best"]["induction"]
    rows = [["first copy (loss)", fmt(result["loss_first_copy"], 3)],
            ["repeats (loss)", fmt(result["loss_repeated"], 3)],
            [f"previous-token score, L{prev['layer']}H{prev['head']}", fmt(prev["score"], 2)],
            [f"induction score, L{ind['layer']}H{ind['head']}", fmt(ind["score"], 2)]]
    return (table(["your run", "value"], rows)
            + f"\n\n{result['steps']:,} steps from seed {result['seed']}, in "
              f"{result['seconds']:.0f} s at load average {result['load_average']:.1f}: the bundled "
              "model's recipe and seed, so on the same PyTorch and CPU it matches the tables above "
              "(another build can move the last digits). `minigpt lab show induction` prints every "
              "head's scores." + _kept_run(result))


def _kept_run(result: dict) -> str:
    """Where the job's run is kept and how to open it (results saved before it was kept have none)."""
    if not result.get("run"):
        return ""
    return (f"\n\nThe run is kept in `{result['run']}`: **x** here opens it in the attention explorer "
            "or in compare beside your runs, and `minigpt watch` with that folder opens its training panel.")
