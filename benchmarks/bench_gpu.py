"""Tokens per second and model FLOPs utilisation (MFU) of MiniGPT on a GPU, as one timed script.

    python benchmarks/bench_gpu.py --time-limit 420 --json $OUT/gpu.json   # a CUDA machine
    python benchmarks/bench_gpu.py --smoke    # anywhere: tiny models, a few steps, the same code

Two model shapes, each in fp32 (TF32 matmuls), bf16 autocast and bf16 autocast + torch.compile:

- ``small``: nanoGPT's Shakespeare-character size (d 384, 6 layers, 6 heads, context 256);
- ``gpt2``: GPT-2 small's shape (d 768, 12 layers, 12 heads, context 1024; ~85M parameters with
  a character vocabulary), built directly, past the app's 50M-parameter cap for training runs.

Both train on the tutor's own lessons as one character text. Each variant runs warm-up steps
first (compilation included, reported, excluded from tokens/s), then times steps with the device
synchronised; MFU counts 6·N + 12·L·d·T FLOPs per token (``minigpt.training.flops``) against the
device's data-sheet peak for the dtype (TF32's for fp32 with TF32 matmuls). ``--time-limit``
bounds the whole script: a variant that would start past it is skipped, and says so.
Without CUDA (and without ``--smoke``) it stops with a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from minigpt import paths  # noqa: E402
from minigpt.models.config import GPTConfig  # noqa: E402
from minigpt.models.gpt import MiniGPT  # noqa: E402
from minigpt.text_data import load_text_dataset  # noqa: E402
from minigpt.training import flops  # noqa: E402
from minigpt.training.devices import autocast_for  # noqa: E402
from minigpt.training.options import TrainConfig  # noqa: E402
from minigpt.training.schedule import make_optimizer  # noqa: E402

# name: (d_model, layers, heads, context, batch)
SHAPES = {"small": (384, 6, 6, 256, 64), "gpt2": (768, 12, 12, 1024, 16)}
SMOKE_SHAPES = {"small": (32, 2, 2, 32, 8), "gpt2": (48, 2, 4, 64, 4)}
VARIANTS = [("fp32 (TF32 matmuls on CUDA)", "float32", False), ("bf16 autocast", "bfloat16", False),
            ("bf16 autocast + torch.compile", "bfloat16", True)]


def lessons_text(dest: Path) -> Path:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((paths.lessons_dir() / "chapters").glob("*.md")))
    dest.write_text(text * 4, encoding="utf-8")
    return dest


def run_variant(ds, device, dtype: str, compile_model: bool, d: int, layers: int, heads: int, batch: int,
                warmup: int, steps: int, optimizer: str) -> dict:
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=ds.vocab.size, block_size=ds.block_size, d_model=d, n_heads=heads,
                    n_layers=layers, dropout=0.0)
    model = MiniGPT(cfg).to(device)  # directly: the app's parameter cap is for training runs
    cost = flops.cost_of(model)
    opt = make_optimizer(model, TrainConfig(device=device.type, optimizer=optimizer), device)
    net = torch.compile(model) if compile_model else model
    gen = torch.Generator().manual_seed(0)

    def step() -> None:
        x, y = ds.train.batch(torch.randint(len(ds.train), (batch,), generator=gen))
        if device.type == "cuda":
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        with autocast_for(device, dtype):
            _, loss = net(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    t = time.perf_counter()
    for _ in range(warmup):
        step()
    sync()
    warm_s = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    tok_s = steps * batch * ds.block_size / (time.perf_counter() - t)
    peak_dtype = "bfloat16" if dtype == "bfloat16" else ("tf32" if device.type == "cuda" else "float32")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = flops.peak_flops(name, peak_dtype)
    memory = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    return {"tokens_per_s": tok_s, "mfu": flops.mfu(tok_s, cost, peak), "warmup_s": warm_s,
            "params": sum(p.numel() for p in model.parameters()), "peak_tflops": peak and peak / 1e12,
            "peak_dtype": peak_dtype, "max_memory_gib": memory}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny models and few steps (any machine, CPU included)")
    ap.add_argument("--models", default="small,gpt2", help="comma-separated: small, gpt2 (default both)")
    ap.add_argument("--steps", type=int, default=30, help="timed steps per variant")
    ap.add_argument("--warmup", type=int, default=8, help="untimed steps per variant (compilation happens here)")
    ap.add_argument("--optimizer", default="adamw", choices=("adamw", "muon"),
                    help="adamw (as nanoGPT's MFU figures) or muon (the tutor's default recipe)")
    ap.add_argument("--time-limit", type=float, default=480, help="seconds for the whole script; variants "
                    "that would start after it are skipped")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()
    started = time.monotonic()
    cuda = torch.cuda.is_available()
    if not cuda and not args.smoke:
        print("bench_gpu.py: no CUDA device here (torch.cuda.is_available() is False); nothing measured. "
              "--smoke runs the same code on the CPU with tiny models.", file=sys.stderr)
        return 2
    device = torch.device("cuda" if cuda else "cpu")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    name = torch.cuda.get_device_name(device) if cuda else "CPU (no CUDA device)"
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in SHAPES]
    if unknown:
        ap.error(f"unknown model shape(s) {', '.join(unknown)}; choose from {', '.join(SHAPES)}")
    steps, warmup = (3, 2) if args.smoke else (args.steps, args.warmup)
    print(f"device: {name}; torch {torch.__version__}; optimizer {args.optimizer}; {steps} timed steps after "
          f"{warmup} warm-up; time limit {args.time_limit:g} s", flush=True)
    results = {"device": name, "torch": torch.__version__, "optimizer": args.optimizer, "runs": []}
    for model_name in models:
        d, layers, heads, block, batch = (SMOKE_SHAPES if args.smoke else SHAPES)[model_name]
        with tempfile.TemporaryDirectory() as tmp:
            ds = load_text_dataset(lessons_text(Path(tmp) / "lessons.txt"), block_size=block)
        print(f"\n[{model_name}] d={d} L={layers} H={heads} T={block}, batch {batch} ({batch * block:,} tokens a step)",
              flush=True)
        for label, dtype, comp in VARIANTS:
            row = {"model": model_name, "variant": label, "d_model": d, "n_layers": layers, "n_heads": heads,
                   "context": block, "batch": batch}
            if comp and not cuda:  # inductor's CPU compile takes minutes here: not what a smoke run checks
                print(f"  {label:<32} skipped on the CPU", flush=True)
                continue
            if time.monotonic() - started > args.time_limit:
                print(f"  {label:<32} skipped: the {args.time_limit:g} s time limit is spent", flush=True)
                results["runs"].append({**row, "skipped": "time limit"})
                continue
            try:
                r = run_variant(ds, device, dtype, comp, d, layers, heads, batch, warmup, steps, args.optimizer)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                print(f"  {label:<32} out of GPU memory at batch {batch}", flush=True)
                results["runs"].append({**row, "skipped": "out of memory"})
                continue
            util = f"MFU {r['mfu'] * 100:.1f}% of {r['peak_tflops']:g} TFLOP/s ({r['peak_dtype']})" if r["mfu"] \
                else "MFU n/a (no data-sheet peak for this device)"
            print(f"  {label:<32} {r['tokens_per_s']:>12,.0f} tokens/s  {util}  ({r['params']:,} params; "
                  f"warm-up {r['warmup_s']:.1f} s, excluded)", flush=True)
            results["runs"].append({**row, **r})
            if cuda:
                torch.cuda.reset_peak_memory_stats(device)
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
