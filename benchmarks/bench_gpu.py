"""Tokens per second and model FLOPs utilisation (MFU) of a GPU-sized MiniGPT on character text.

    python benchmarks/bench_gpu.py            # on a CUDA machine: fp32/TF32, bf16, bf16 + compile
    python benchmarks/bench_gpu.py --smoke    # anywhere: a tiny model, a few steps, the same code

The model is nanoGPT's Shakespeare-character size (d 384, 6 layers, 6 heads, context 256) trained
on the tutor's own lessons as one text. Each variant runs warm-up steps first (compilation
included), then times steps with the device synchronised; MFU counts 6·N + 12·L·d·T FLOPs per
token (``minigpt.training.flops``) against the device's data-sheet peak for the dtype.
"""

from __future__ import annotations

import argparse
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


def lessons_text(dest: Path) -> Path:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((paths.lessons_dir() / "chapters").glob("*.md")))
    dest.write_text(text * 4, encoding="utf-8")
    return dest


def run_variant(ds, device, dtype: str, compile_model: bool, d: int, layers: int, heads: int, batch: int,
                warmup: int, steps: int) -> tuple[float, float | None, float]:
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=ds.vocab.size, block_size=ds.block_size, d_model=d, n_heads=heads,
                    n_layers=layers, dropout=0.0)
    model = MiniGPT(cfg).to(device)
    cost = flops.cost_of(model)
    opt = make_optimizer(model, TrainConfig(device=device.type), device)
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
    return tok_s, flops.mfu(tok_s, cost, flops.peak_flops(name, peak_dtype)), warm_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny model and few steps (any machine)")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    d, layers, heads, block = (32, 2, 2, 32) if args.smoke else (384, 6, 6, 256)
    steps, batch = (5, 8) if args.smoke else (args.steps, args.batch)
    with tempfile.TemporaryDirectory() as tmp:
        ds = load_text_dataset(lessons_text(Path(tmp) / "lessons.txt"), block_size=block)
    name = torch.cuda.get_device_name(device) if cuda else "CPU (no CUDA device)"
    print(f"device: {name}; model d={d} L={layers} H={heads} T={block}; batch {batch}; {steps} timed steps")
    variants = [("float32" + (" (TF32 matmuls)" if cuda else ""), "float32", False)]
    if cuda or args.smoke:
        variants += [("bf16 autocast", "bfloat16", False)]
    if cuda:
        variants += [("bf16 autocast + torch.compile", "bfloat16", True)]
    for label, dtype, comp in variants:
        tok_s, util, warm = run_variant(ds, device, dtype, comp, d, layers, heads, batch,
                                        warmup=3 if args.smoke else 10, steps=steps)
        util_text = f"MFU {util * 100:.1f}%" if util is not None else "MFU n/a (peak unknown for this device)"
        print(f"{label:<32} {tok_s:>12,.0f} tokens/s  {util_text}  (warm-up {warm:.1f} s, excluded)")


if __name__ == "__main__":
    main()
