"""Speed and quality benchmarks, each measured in this one process. Prints ratios.

    python benchmarks/bench.py            # full: ~4–5 minutes on two cores
    python benchmarks/bench.py --quick    # smoke run: ~1 minute, figures indicative only
    python benchmarks/bench.py --only-quality --seeds 1337,7,11               # 120 s of training, 3 seeds
    python benchmarks/bench.py --only-quality --seeds 1337,7,11 --set optimizer=adamw   # a candidate
    python benchmarks/bench.py --only-speed   # throughput, model FLOP/s against the matmul peak, sampling
    python benchmarks/bench.py --race         # time to quality: makemore's loop 120 s vs ours 10-30 s (~3.5 min)
    python benchmarks/bench.py --data PATH    # the names file; the figures in docs/benchmarks.md use the course's
                                              # 32,033 names (default: ../shared/data/names.txt when present,
                                              # else the repository's data/names.txt, 29,910 names, higher losses)

1. Training throughput: our trainer (fused QKV + scaled_dot_product_attention, 128 names a step
   packed several to a row, fused AdamW, a weight average) against two references on the same
   model size (benchmarks/references.py): one written in the course's style (one module per head,
   a Python loop over heads, an explicit causal mask, loss over every padded position of the
   block, batch 32, plain AdamW) and makemore's own Transformer and training loop. All count real
   (non-padding) target characters per second, best of two alternating rounds. Also: packing's own gain over
   batches trimmed to their longest name, and the weight average's update timed alone.
2. Sampling: 1000 names in one batch with the KV cache, against the course's loop (one name at a
   time, re-running the whole context for every character); and the KV cache's own gain at the
   same batch size.
3. Quality: the default recipe trained for 120 s on the canonical course names with makemore's
   split (seed 3407 permutation, last 1000 names as test; 1000 more held out of the training
   part for validation/best-checkpoint selection), reporting its test loss.
4. The race (``--race``, benchmarks/race.py): makemore's own loop for 120 s against our default
   recipe for 10, 15, 20 and 30 s, taking turns, each scored on makemore's test split.

Timings on a shared machine vary: the load average is printed alongside.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# Spinning OpenMP threads (the default) are fastest on idle cores; on a busy machine set
# OMP_WAIT_POLICY=PASSIVE in the environment (minigpt's CLI does it by itself; see minigpt/cli/train.py).
import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.references import course_tokens_per_s, makemore_tokens_per_s  # noqa: E402
from minigpt.data import Dataset, EncodedSplit, Splits, Vocab, load_words  # noqa: E402
from minigpt.models.gpt import MiniGPT  # noqa: E402
from minigpt.sampling import generate  # noqa: E402
from minigpt.training.cpu_policy import physical_cores  # noqa: E402
from minigpt.training.loop import train  # noqa: E402
from minigpt.training.options import TrainConfig  # noqa: E402
from minigpt.training.schedule import evaluate  # noqa: E402

# The course's names file. The project does not need it: --data names any copy, and without one
# the repository's own data/names.txt (the same names) is used.
CANONICAL = REPO.parent / "shared" / "data" / "names.txt"


def ours_tokens_per_s(dataset: Dataset, steps: int, pack: bool = True, optimizer: str = "adamw") -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        records = []
        cfg = TrainConfig(steps=steps, eval_interval=steps, log_interval=10, data=None, pack=pack,
                          optimizer=optimizer)
        status = train(cfg, Path(d) / "run", on_log=records.append, dataset=dataset)
    timed = [r for r in records if r["step"] > 10 and "val_loss" not in r]
    return sum(r["tokens_per_s"] for r in timed) / len(timed), status["n_params"]


# ----------------------------------------------------------------------------- sampling


@torch.no_grad()
def course_sample_one(model, max_new: int, gen: torch.Generator) -> str:
    idx = torch.zeros((1, 1), dtype=torch.long)
    for _ in range(max_new):
        logits, _ = model(idx)  # the whole context, every time
        probs = F.softmax(logits[:, -1, :], dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if nxt.item() == 0:
            break
        idx = torch.cat((idx, nxt), dim=1)
    return idx


def measured_matmul_peak(n: int = 2048) -> float:
    """FLOP/s of a large fp32 matrix product on the threads in use: the ceiling a model could reach."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    return 2 * n**3 / timed(lambda: a @ b, repeat=5)


def timed(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


# ----------------------------------------------------------------------------- quality


def makemore_dataset(path: Path) -> Dataset:
    words = load_words(path)
    torch.manual_seed(3407)
    rp = torch.randperm(len(words)).tolist()
    test = [words[i] for i in rp[-1000:]]
    rest = [words[i] for i in rp[:-1000]]
    val, tr = rest[-1000:], rest[:-1000]
    vocab = Vocab.from_words(words)
    block = max(len(w) for w in words) + 1
    return Dataset(words=words, vocab=vocab, splits=Splits(tr, val, test), block_size=block,
                   train=EncodedSplit(tr, vocab, block), val=EncodedSplit(val, vocab, block),
                   test=EncodedSplit(test, vocab, block), source=str(path))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--quality-seconds", type=float, default=None, help="time budget of the quality run (120)")
    ap.add_argument("--quality-steps", type=int, default=None,
                    help="a step budget instead (independent of machine load; 4000 ≈ 120 s on two idle cores)")
    ap.add_argument("--seed", type=int, default=1337, help="training seed of the quality run")
    ap.add_argument("--seeds", default=None, help="comma-separated seeds: one quality run each, then their mean "
                    "(e.g. 1337,7,11; overrides --seed)")
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                    help="a training option changed from the default recipe for the quality runs "
                         "(repeatable; e.g. --set norm=rmsnorm --set lr=0.006): how candidates are raced")
    ap.add_argument("--only-quality", action="store_true", help="skip the speed measurements")
    ap.add_argument("--only-speed", action="store_true", help="skip the quality runs")
    ap.add_argument("--race", action="store_true", help="only the time-to-quality race against makemore's loop")
    ap.add_argument("--data", type=Path, default=None, help="the names file (default: the course's canonical "
                    "names when present, else data/names.txt)")
    args = ap.parse_args()
    quick = args.quick
    torch.set_num_threads(physical_cores())
    data_path = args.data or (CANONICAL if CANONICAL.exists() else REPO / "data" / "names.txt")
    ds = makemore_dataset(data_path)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}, load average "
          f"{os.getloadavg()[0]:.2f}, data {data_path} ({len(ds.words)} names)")

    if args.race:
        from benchmarks.race import race
        budgets = (3.0, 5.0) if quick else (10.0, 15.0, 20.0, 30.0)
        race(ds, seed=args.seed, changes=recipe_changes(args.set), budgets=budgets,
             makemore_seconds=10.0 if quick else 120.0)
        return
    if not args.only_quality:
        speed(ds, quick)
    if not args.only_speed:
        quality(ds, args, quick)


def speed(ds: Dataset, quick: bool) -> None:
    # 1. training throughput. The three trainers take turns, twice, and each keeps its best round:
    # this VM's speed drifts by 10-30% between minutes, which a single pass would put into the ratios.
    ref_seconds = 5 if quick else 10
    ref_runs, mm_runs, our_runs = [], [], []
    for _ in range(1 if quick else 2):
        ref_runs.append(course_tokens_per_s(ds.train, ds.vocab.size, ds.block_size, ref_seconds))
        mm_runs.append(makemore_tokens_per_s(list(ds.splits.train), ds.vocab.stoi, ds.block_size, ref_seconds))
        our_runs.append(ours_tokens_per_s(ds, 60 if quick else 250))
    (ref_tps, ref_n), (mm_tps, mm_n), (our_tps, our_n) = (max(runs) for runs in (ref_runs, mm_runs, our_runs))
    print(f"\n[training] same model size: course-style reference {ref_n:,} params, makemore-style {mm_n:,}, "
          f"ours {our_n:,}")
    print(f"  course-style reference (head loop, explicit mask, full block, batch 32): {ref_tps:,.0f} tokens/s")
    print(f"  makemore-style reference (fused q/k/v, written-out softmax and GELU, a loader encoding 32 names "
          f"a step, AdamW): {mm_tps:,.0f} tokens/s")
    print(f"  our trainer with AdamW (fused QKV + SDPA, 128 names packed into rows, fused AdamW): {our_tps:,.0f} tokens/s")
    print(f"  ratio: {our_tps / ref_tps:.1f}x the course-style reference (target >= 3x), "
          f"{our_tps / mm_tps:.1f}x the makemore-style one (goal >= 5x)")
    muon_tps, _ = ours_tokens_per_s(ds, 60 if quick else 250, optimizer="muon")
    print(f"  the same with Muon for the block matrices (the default recipe; each step costs more, "
          f"each step learns more): {muon_tps:,.0f} tokens/s, {muon_tps / ref_tps:.1f}x the reference")
    # Model FLOP/s against this machine's measured fp32 matmul peak (no data sheet for a CPU).
    from minigpt.training.flops import cost_of, mfu
    peak = measured_matmul_peak()
    cost = cost_of(MiniGPT(TrainConfig().model_config(ds.vocab.size, ds.block_size)))
    for label, tps in (("AdamW", our_tps), ("Muon", muon_tps)):
        print(f"  model FLOP/s with {label}: {cost.model_flops(tps) / 1e9:.1f} GFLOP/s (6N + 12·L·d·T per token) = "
              f"{100 * mfu(tps, cost, peak):.1f}% of the measured fp32 matmul peak, {peak / 1e9:.0f} GFLOP/s "
              f"(2048² on {torch.get_num_threads()} threads)")
    trim_tps, _ = ours_tokens_per_s(ds, 60 if quick else 250, pack=False)
    print(f"  packing's own gain: batches trimmed to their longest name instead (--no-pack) "
          f"{trim_tps:,.0f} tokens/s, so packing gives {our_tps / trim_tps:.2f}x")
    # The weight average's cost, timed on its own: whole-run throughput drifts more than it costs.
    from minigpt.training.ema import WeightAverage
    model = MiniGPT(TrainConfig().model_config(ds.vocab.size, ds.block_size))
    average = WeightAverage(model, 0.999)
    t_update = timed(lambda: [average.update(model, 10**6) for _ in range(200)], repeat=3) / 200
    step_s = 128 * 7.1 / our_tps  # a batch of 128 names holds ~7.1 real tokens per name
    print(f"  the weight average's update: {t_update * 1000:.2f} ms per step, {100 * t_update / step_s:.1f}% "
          f"of a {step_s * 1000:.0f} ms step")

    # 2. sampling
    default = REPO / "checkpoints" / "default"
    if (default / "config.json").exists():
        from minigpt.checkpoint import load_checkpoint
        shipped = load_checkpoint(default)
        model, vocab, what = shipped.model, shipped.vocab, "the shipped default MiniGPT (204,544 params)"
    else:
        torch.manual_seed(0)
        model = MiniGPT(TrainConfig().model_config(ds.vocab.size, ds.block_size)).eval()
        vocab, what = ds.vocab, "an untrained default-size MiniGPT"
    block = model.config.block_size
    n_slow = 30 if quick else 150
    gen = torch.Generator().manual_seed(0)
    t_slow = timed(lambda: [course_sample_one(model, block - 1, gen) for _ in range(n_slow)])
    per_name_slow = t_slow / n_slow
    t_batched = timed(lambda: generate(model, vocab, 1000, seed=0), repeat=1 if quick else 3)
    t_nocache = timed(lambda: generate(model, vocab, 1000, seed=0, use_cache=False), repeat=1 if quick else 3)
    t1_cache = timed(lambda: generate(model, vocab, 1, seed=0), repeat=5)
    t1_nocache = timed(lambda: generate(model, vocab, 1, seed=0, use_cache=False), repeat=5)
    print(f"\n[sampling] {what}")
    print(f"  course loop, one name at a time, whole context each character: {per_name_slow * 1000:.1f} ms/name "
          f"(measured on {n_slow} names) -> {per_name_slow * 1000:.2f} s for 1000")
    print(f"  1000 names batched with KV cache: {t_batched:.3f} s   ratio: {per_name_slow * 1000 / t_batched:.0f}x "
          f"(target >= 20x)")
    print(f"  KV cache's own gain at equal batch: batch 1000 {t_nocache / t_batched:.1f}x, "
          f"batch 1 {t1_nocache / t1_cache:.1f}x")



def recipe_changes(pairs: list[str]) -> dict:
    """``--set`` pairs → TrainConfig values, each parsed as its option's type."""
    from minigpt.training.options import OPTIONS_BY_NAME

    out = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        opt = OPTIONS_BY_NAME.get(name.strip())
        if opt is None:
            raise SystemExit(f"--set {pair}: no training option {name!r}")
        text = text.strip()
        if opt.optional and text.lower() in ("none", ""):
            out[opt.name] = None
        elif opt.kind is bool:
            out[opt.name] = text.lower() in ("1", "true", "on", "yes")
        else:
            out[opt.name] = opt.kind(text)
    return out


def quality(ds: Dataset, args, quick: bool) -> None:
    # 3. quality
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else [args.seed]
    changes = recipe_changes(args.set)
    what = ", ".join(f"{k}={v}" for k, v in changes.items()) or "default recipe"
    results = [quality_run(ds, args, quick, seed, changes, what) for seed in seeds]
    if len(results) > 1:
        mean = [sum(r[i] for r in results) / len(results) for i in range(3)]
        print(f"\n[quality] {what}: mean over seeds {','.join(map(str, seeds))}: steps {mean[0]:.0f}, "
              f"best val {mean[1]:.4f}, test {mean[2]:.4f} (target <= 1.90)")


def quality_run(ds: Dataset, args, quick: bool, seed: int, changes: dict, what: str) -> tuple[int, float, float]:
    if args.quality_steps:
        cfg = TrainConfig(**{"steps": args.quality_steps, "eval_interval": 250, "seed": seed, **changes})
        budget = f"{args.quality_steps} steps"
    else:
        seconds = args.quality_seconds or (15 if quick else 120)
        cfg = TrainConfig(**{"steps": None, "time_s": seconds, "eval_interval": 250, "seed": seed, **changes})
        budget = f"{seconds:g} s"
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        st = train(cfg, Path(d) / "run", dataset=ds)
        wall = time.perf_counter() - t0
        from minigpt.checkpoint import load_checkpoint, load_training_weights
        best = load_checkpoint(Path(d) / "run" / "checkpoint")
        test = evaluate(best.model, ds.test)
        # The same run's raw weights at the end, for the weight average's own gain (paired).
        last = load_checkpoint(Path(d) / "run" / "last")
        raw = load_training_weights(last.path, last.model)
        raw_val, raw_test = evaluate(last.model, ds.val), evaluate(last.model, ds.test)
    print(f"\n[quality] {what}, seed {seed}, {budget} ({wall:.0f} s wall) on {torch.get_num_threads()} threads, makemore split "
          f"(test = last 1000 of the seed-3407 permutation; val = 1000 held out of train)")
    print(f"  steps {st['step']}, best val {st['best_val']:.4f}, test loss {test:.4f} (target <= 1.90 as a three-seed mean; "
          f"makemore's long run ~1.92)")
    if raw:
        print(f"  the same run's raw weights at the end, without the average: val {raw_val:.4f}, "
              f"test {raw_test:.4f}")
    print(f"  load average at the end {os.getloadavg()[0]:.2f}")
    return st["step"], st["best_val"], test


if __name__ == "__main__":
    main()
