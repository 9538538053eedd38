"""Peak memory of a short training run against the estimate the trainer refuses by, for a large
vocabulary and for the course's names.

The large case is a ~114 KB file of 16,000 distinct CJK characters shuffled into short names (the
round-four hostile finding: it peaked at 6.3 GB while the bigram reference loss was counted in a
V×V table). Each run is ``minigpt train --data FILE --steps 2 -q`` in a fresh process; its peak
resident memory comes from the kernel (its VmHWM as it exits), less the peak of a process that only
imports torch (the baseline). The figures to read: the peak above the baseline, 3× the file plus
the estimate (docs/reliability.md's bound), and measured / estimate (within 2× either way).

    nice -n 10 python benchmarks/bench_memory.py [--chars 16000] [--bytes 114000]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def wide_vocabulary_names(path: Path, chars: int = 16_000, size: int = 114_000, seed: int = 0) -> Path:
    """``chars`` distinct CJK characters (each used at least once), shuffled into names of 2 to 5
    characters, about ``size`` bytes of UTF-8 in all."""
    rng = random.Random(seed)
    alphabet = [chr(0x4E00 + i) for i in range(chars)]
    pool = list(alphabet)
    while len(pool) * 3 + len(pool) // 3 < size:  # 3 bytes a character, a newline every ~3.5
        pool.append(rng.choice(alphabet))
    rng.shuffle(pool)
    names, i = [], 0
    while i < len(pool):
        n = rng.randint(2, 5)
        names.append("".join(pool[i:i + n]))
        i += n
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return path


# Runs a module (or `-c CODE`) and prints its own peak resident KiB as it exits: VmHWM, the peak of
# this program's memory alone (ru_maxrss would also count the parent's, copied by the fork before
# exec: a test process of 340 MB made `import torch` look 340 MB).
_PEAK_OF = """
import atexit, resource, runpy, sys

def peak_kib():
    try:
        with open("/proc/self/status") as f:
            return int(next(line for line in f if line.startswith("VmHWM:")).split()[1])
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

atexit.register(lambda: print("peak-kib", peak_kib(), file=sys.stderr))
if sys.argv[1] == "-c":
    exec(sys.argv[2])
else:
    sys.argv = sys.argv[1:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def _child_peak(args: list[str]) -> int:
    """Peak resident bytes of ``python ARGS`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _PEAK_OF, *args], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    line = [x for x in done.stderr.splitlines() if x.startswith("peak-kib ")][-1]
    return int(line.split()[1]) * 1024


@dataclass(frozen=True)
class MemoryFigures:
    file_bytes: int
    baseline: int  # peak of `import torch`
    peak: int  # peak of the training run
    estimate: int  # minigpt.models.build.training_memory_bytes for this run

    @property
    def above_baseline(self) -> int:
        return self.peak - self.baseline

    @property
    def bound(self) -> int:
        return 3 * self.file_bytes + self.estimate

    @property
    def ratio(self) -> float:
        return self.above_baseline / self.estimate


def run_estimate(data: Path) -> int:
    """What the trainer estimates for ``minigpt train --data FILE`` (its default options)."""
    from minigpt.models.build import check_model_size, training_memory_bytes
    from minigpt.training.options import TrainConfig, load_data_for
    from minigpt.training.session import _tokens_per_item

    cfg = TrainConfig(data=str(data), steps=2)
    loaded = load_data_for(cfg)
    model_config = cfg.model_config(loaded.vocab.size, loaded.block_size)
    n_params = check_model_size(cfg.model, model_config)
    return training_memory_bytes(cfg.model, model_config, cfg.batch_size, n_params, _tokens_per_item(loaded))


def measure(data: Path, baseline: int) -> MemoryFigures:
    with tempfile.TemporaryDirectory() as tmp:
        peak = _child_peak(["minigpt.cli", "train", "--data", str(data), "--steps", "2", "-q",
                            "--out", str(Path(tmp) / "run")])
    return MemoryFigures(data.stat().st_size, baseline, peak, run_estimate(data))


def torch_baseline() -> int:
    return _child_peak(["-c", "import torch"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=16_000)
    parser.add_argument("--bytes", type=int, default=114_000)
    args = parser.parse_args()
    mib = 2**20
    with tempfile.TemporaryDirectory() as tmp:
        wide = wide_vocabulary_names(Path(tmp) / "wide.txt", args.chars, args.bytes)
        baseline = torch_baseline()
        print(f"baseline (import torch): {baseline / mib:,.0f} MiB")
        for label, data in (("names", REPO / "data" / "names.txt"), (f"{args.chars:,} characters", wide)):
            f = measure(data, baseline)
            print(f"{label}: file {f.file_bytes / 1000:,.0f} KB · peak {f.peak / mib:,.0f} MiB · above the baseline "
                  f"{f.above_baseline / mib:,.0f} MiB · estimate {f.estimate / mib:,.0f} MiB · 3× file + estimate "
                  f"{f.bound / mib:,.0f} MiB ({'within' if f.above_baseline <= f.bound else 'OVER'}) · "
                  f"measured / estimate {f.ratio:.2f}")


if __name__ == "__main__":
    main()
