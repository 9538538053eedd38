"""Worked examples for "Number formats": FP8 ranges from their bit patterns, scaling per tensor
and per block, microscaling, NF4 and double quantization, SmoothQuant's migration, GPTQ on the
shipped model's layers, a quantized KV cache, and the ``ptq`` lab job's result."""

from __future__ import annotations

import functools
import math

import torch

from minigpt.errors import RunError
from minigpt.runs.lab import JOBS, bundled_dir, is_running, job_dir, read_result
from minigpt.teaching import number_formats
from minigpt.teaching.examples.registry import example, fmt, table

SCALING_TENSOR = "blocks.0.ffn.up.weight"  # a shipped matrix of 256 × 64
OUTLIERS = (1e3, 1e5)
BLOCK = 32  # the scaling example's block  # the seeded tensor's one large value, in standard deviations
SMOOTH_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
OUTLIER_CHANNEL, OUTLIER_FACTOR = 3, 40.0  # the SmoothQuant example's activation outlier
GPTQ_NAMES = 128  # calibration names for the lesson's per-layer table


def one_thread_only(build):
    """Run an example's tensor work on one thread: these tensors are small, and two threads on
    busy cores wait on each other for seconds."""

    @functools.wraps(build)
    def run() -> str:
        from minigpt.training.cpu_policy import one_thread

        with one_thread():
            return build()

    return run


def _power(v: float) -> str:
    """448 as 1.75 × 2^8: the significand and the power of two of a format's value."""
    m, e = math.frexp(v)
    return f"{fmt(2 * m, 3).rstrip('0').rstrip('.')} × 2^{e - 1}"


def _two_to(v: float) -> str:
    """0.015625 as 2^-6 (exact for the powers of two a format's smallest values are)."""
    return f"2^{math.log2(v):.0f}"


@example("formats.fp8_ranges", "FP8 and FP4, decoded from every bit pattern")
def _ranges() -> str:
    rows = []
    for f in (number_formats.E4M3, number_formats.E5M2, number_formats.E2M1):
        r = number_formats.format_range(f)
        after_one = min(v for v in number_formats.values(f) if v > 1)
        rows.append([f"{f.name} ({f.bits} bits)", f"{r.largest:,g}", _two_to(r.smallest_normal),
                     _two_to(r.smallest_subnormal), fmt(after_one - 1, 3), r.finite_values])
    e4, e5 = number_formats.format_range(number_formats.E4M3), number_formats.format_range(number_formats.E5M2)
    low, high = number_formats.e8m0_range()
    return (table(["format", "largest", "min normal", "min subnormal", "step at 1", "numbers"], rows)
            + f"\n\nE4M3's largest is {_power(e4.largest)}: its top exponent still holds numbers, "
              "and only the pattern with every exponent and mantissa bit set is not a number, so "
              "the top mantissa is 110. E5M2 keeps IEEE's rule (the top exponent means infinity "
              f"or not a number): "
              f"{_power(e5.largest)}. E4M3 spans {e4.binades:.1f} powers of two with one more "
              f"mantissa bit, E5M2 {e5.binades:.1f} with one fewer. MX's scale format E8M0 is a "
              f"bare power of two from 2^{math.log2(low):.0f} to 2^{math.log2(high):.0f}.")


@functools.lru_cache(maxsize=2)
def shipped_matrix(name: str = SCALING_TENSOR) -> torch.Tensor:
    """One weight matrix of the shipped checkpoint (its weights only: no dataset to load)."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint

    model = load_checkpoint(default_checkpoint()).model
    return dict(model.named_parameters())[name].detach().double().clone()


def outlier_tensor(size: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """64 × 256 standard normal values with one set to ``size``; and the mask of the others."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 256, generator=g, dtype=torch.float64)
    x[5, 17] = size
    others = torch.ones_like(x, dtype=torch.bool)
    others[5, 17] = False
    return x, others


def others_error(size: float, round_trip, block: int | None) -> float:
    """The relative error of every value but the outlier, after ``round_trip(x, block)``."""
    x, others = outlier_tensor(size)
    return number_formats.relative_error(x[others], round_trip(x, block)[others])


SCALED = (("E4M3", lambda x, b: number_formats.scaled_round_trip(x, number_formats.E4M3, b)),
          ("E5M2", lambda x, b: number_formats.scaled_round_trip(x, number_formats.E5M2, b)),
          ("E2M1 (FP4)", lambda x, b: number_formats.scaled_round_trip(x, number_formats.E2M1, b)),
          ("int8", lambda x, b: number_formats.int_round_trip(x, 8, b)),
          ("int4", lambda x, b: number_formats.int_round_trip(x, 4, b)))


@example("formats.scaling", f"One scale per tensor or one per block of {BLOCK}: relative error")
@one_thread_only
def _scaling() -> str:
    w = shipped_matrix()
    rows = []
    for label, rt in SCALED:
        cells = [label, f"{100 * number_formats.relative_error(w, rt(w, None)):.1f}%",
                 f"{100 * number_formats.relative_error(w, rt(w, BLOCK)):.1f}%"]
        for size in OUTLIERS:
            cells += [f"{100 * others_error(size, rt, None):.1f}%", f"{100 * others_error(size, rt, BLOCK):.1f}%"]
        rows.append(cells)
    a, b = (f"{s:.0e}".replace("e+0", "e") for s in OUTLIERS)
    return (table(["format", "W, t", "W, b", f"{a}, t", f"{a}, b", f"{b}, t", f"{b}, b"], rows)
            + f"\n\nt: one scale for the tensor; b: one per block of {BLOCK} consecutive values. "
              f"W is the shipped model's `{SCALING_TENSOR}` ({' × '.join(map(str, w.shape))}); "
              f"the other columns are "
              f"{' × '.join(map(str, outlier_tensor(1.0)[0].shape))} seeded normal values with one set to {OUTLIERS[0]:,.0f} or "
              f"{OUTLIERS[1]:,.0f}, and the error is that of every value but the large one. "
              "Each scale maps its tensor's or block's largest magnitude onto the format's "
              "largest value. An integer grid's steps are even, so one outlier rounds the rest "
              "of its scale's values to 0; a float's steps grow with the value, so E4M3 keeps "
              "the small values until they fall below its normal range, and E5M2 longer. E2M1 "
              f"spans only {number_formats.format_range(number_formats.E2M1).binades:.1f} powers of two: it fails like the "
              "integers.")


@example("formats.microscaling", "MXFP4 and NVFP4: bits and error on a shipped matrix")
@one_thread_only
def _microscaling() -> str:
    w = shipped_matrix()
    n = w.numel()
    mx_bits = number_formats.bits_per_value(4, number_formats.MX_BLOCK, 8, n)
    nv_bits = number_formats.bits_per_value(4, number_formats.NVFP4_BLOCK, 8, n, 32)
    rows = [["E2M1, float32 scale per tensor", "—", fmt(number_formats.bits_per_value(4, None, 32, n), 3),
             f"{100 * number_formats.relative_error(w, number_formats.scaled_round_trip(w, number_formats.E2M1)):.1f}%"],
            [f"MXFP4: E8M0 scale per {number_formats.MX_BLOCK}", number_formats.MX_BLOCK, fmt(mx_bits, 3),
             f"{100 * number_formats.relative_error(w, number_formats.mx_round_trip(w)):.1f}%"],
            [f"NVFP4: E4M3 scale per {number_formats.NVFP4_BLOCK} + fp32", number_formats.NVFP4_BLOCK,
             fmt(nv_bits, 3),
             f"{100 * number_formats.relative_error(w, number_formats.nvfp4_round_trip(w)):.1f}%"]]
    grid = ", ".join(f"{v:g}" for v in number_formats.values(number_formats.E2M1) if v >= 0)
    top = number_formats.values(number_formats.E2M1)[-1]
    block = w[0, :number_formats.MX_BLOCK]
    amax = float(block.abs().max())
    e_max = math.floor(math.log2(number_formats.values(number_formats.E2M1)[-1]))
    shared = math.floor(math.log2(amax)) - e_max
    return (table(["format", "block", "bits per weight", "error"], rows)
            + f"\n\nE2M1's magnitudes are {grid}. In the first block of {number_formats.MX_BLOCK} of row 0 the largest "
              f"|w| is {fmt(amax, 4)}; MX takes floor(log2 {fmt(amax, 4)}) − {e_max} = {shared} "
              f"({e_max} is the exponent of E2M1's top, {top:g}), so the scale is 2^{shared} and "
              f"that weight becomes {fmt(amax / 2 ** shared, 2)} before rounding. With a "
              f"power-of-two scale a block's largest lands between {2 ** e_max} and "
              f"{2 ** (e_max + 1)}: above {top:g} it is clipped, near {2 ** e_max} the top of the "
              f"grid goes unused. NVFP4's E4M3 scale puts each block of {number_formats.NVFP4_BLOCK}'s largest "
              f"close to {top:g}, for "
              f"{fmt(nv_bits - mx_bits, 2)}"
              " more bits per weight.")


@example("formats.nf4", "NF4's sixteen levels, from the normal distribution")
@one_thread_only
def _nf4() -> str:
    levels = number_formats.nf4_levels()
    rows = [[fmt(v, 4) for v in levels[i:i + 4]] for i in range(0, 16, 4)]
    w = shipped_matrix()
    errors = [["int4 (±7 steps)", f"{100 * number_formats.relative_error(w, number_formats.int_round_trip(w, 4, 64)):.1f}%"],
              ["E2M1 (FP4)", f"{100 * number_formats.relative_error(w, number_formats.scaled_round_trip(w, number_formats.E2M1, 64)):.1f}%"],
              ["NF4", f"{100 * number_formats.relative_error(w, number_formats.nf4_round_trip(w)):.1f}%"]]
    return (table(["", "", "", ""], rows)
            + f"\n\nThe outer probability is ({fmt(1 - 1 / 30, 5)} + {fmt(1 - 1 / 32, 5)}) / 2 = "
              f"{fmt(number_formats.nf4_offset(), 5)}: eight quantiles of N(0, 1) from there to one half for "
              "the positive side, seven for the negative side, zero, then all divided by the "
              "largest. The negative side has one level fewer, so that 0 is exact. On the "
              "shipped matrix, with an absmax per 64 weights:\n\n"
              + table(["4-bit grid", "error"], errors))


@example("formats.double_quant", "Double quantization: QLoRA's bits per parameter")
def _double_quant() -> str:
    from minigpt.teaching import ptq

    single = ptq.qlora_bits_per_weight(double_quant=False)
    double = ptq.qlora_bits_per_weight()
    n, b, b2 = 65e9, ptq.NF4_BLOCK, ptq.SECOND_BLOCK
    rows = [["16-bit", "16", f"{n * 2 / 1e9:.0f}"],
            ["NF4", f"4 + 32/{b} = {fmt(single, 3)}", f"{n * single / 8 / 1e9:.1f}"],
            ["NF4, double", f"4 + 8/{b} + 32/({b}·{b2}) = {fmt(double, 3)}", f"{n * double / 8 / 1e9:.1f}"]]
    return (table(["65B base model", "bits per parameter", "GB"], rows)
            + f"\n\nNF4 keeps a float32 absolute maximum per {b} weights; double-quantized, that "
              f"maximum is stored in 8 bits with one float32 per {b2} of them. It saves "
              f"{fmt(single - double, 3)} bits per parameter, "
              f"{n * (single - double) / 8 / 1e9:.1f} GB on 65 billion: QLoRA's reason to "
              "quantize the quantization constants.")


def smoothquant_example() -> tuple[torch.Tensor, torch.Tensor]:
    """16 tokens × 8 channels of activations whose channel 3 is 40 times the others, and a
    4 × 8 weight."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 8, generator=g, dtype=torch.float64)
    x[:, OUTLIER_CHANNEL] *= OUTLIER_FACTOR
    return x, 0.3 * torch.randn(4, 8, generator=g, dtype=torch.float64)


@example("formats.smoothquant", "SmoothQuant's migration strength α")
def _smoothquant() -> str:
    x, w = smoothquant_example()
    rows = []
    for alpha in SMOOTH_ALPHAS:
        s = number_formats.smoothing_factors(x, w, alpha)
        xs, ws = x / s, w * s
        rows.append([fmt(alpha, 2), fmt(float(xs.abs().max()), 2), fmt(float(ws.abs().max()), 2),
                     f"{float((xs @ ws.T - x @ w.T).abs().max()):.0e}",
                     f"{100 * number_formats.int8_product_error(xs, ws):.2f}%"])
    return (table(["α", "largest X/s", "largest W·s", "product moved", "int8 error"], rows)
            + f"\n\nChannel {OUTLIER_CHANNEL} of the activations is {OUTLIER_FACTOR:g} times the "
              "others (largest: in magnitude). Dividing each channel "
              "of X by s_j and multiplying the matching column of W by s_j leaves X·Wᵀ as it "
              "was (the change is float64 rounding). α = 0 leaves the outlier in X, α = 1 moves "
              "all of it into W; between, both get a moderate range, and the product of int8 X "
              "(one scale) and int8 W (one per row) loses least.")


@functools.lru_cache(maxsize=1)
def gptq_layers(names: int = GPTQ_NAMES, layers: int = 4) -> dict[int, list]:
    """Block 0's four linear layers through GPTQ and RTN at int4 and int3, groups of 32, on the
    inputs of ``names`` calibration names."""
    from minigpt.teaching import ptq_shipped
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        s = ptq_shipped.load(calibration_names=names, held_out_names=1)
        return {bits: ptq_shipped.gptq_model(s.model, s.calibration, bits, layers=layers)[1] for bits in (4, 3)}


@example("formats.gptq_layers", "GPTQ against rounding: output error of block 0's layers")
def _gptq_layers() -> str:
    from minigpt.models.gptq import DAMPING
    from minigpt.teaching.ptq_shipped import GROUP

    rows = []
    for bits, errors in gptq_layers().items():
        for e in errors:
            rows.append([f"int{bits}", e.layer.replace("blocks.0.", ""), f"{e.rtn:.2e}", f"{e.gptq:.2e}",
                         f"{e.rtn / e.gptq:.1f}×"])
    return (table(["grid", "layer", "RTN", "GPTQ", "RTN / GPTQ"], rows)
            + "\n\nMean squared change of each layer's output on the inputs it receives from "
              f"{GPTQ_NAMES} validation names, with the same grid (a scale per {GROUP} inputs of a "
              "row) for both. GPTQ's Hessian is 2·XᵀX / n of those inputs, damped by "
              f"{DAMPING:.0%} of its mean diagonal.")


@example("formats.kv_cache", "The KV cache per token at 16, 8 and 4 bits")
def _kv_cache() -> str:
    from minigpt.teaching import kv_memory, ptq

    shapes = [s for s in kv_memory.MODELS if s.name in ("LLaMA-2 7B", "LLaMA-2 70B")]
    settings = (("fp16", ptq.kv_bits_per_value(16)), ("fp8 (E4M3)", ptq.kv_bits_per_value(8)),
                ("int4, fp16 scale per 64", ptq.kv_bits_per_value(4, 64)))
    rows = []
    for shape in shapes:
        per_16 = kv_memory.shape_bytes_per_token(shape)
        for label, bits in settings:
            per_token = per_16 * bits / 16
            rows.append([shape.name, label, fmt(bits, 2), kv_memory.human_bytes(per_token),
                         kv_memory.human_bytes(per_token * shape.context)])
    return (table(["model", "cache", "bits", "per token", "one full context"], rows)
            + "\n\nPer token: 2 (K and V) × layers × KV heads × head size × bits / 8. "
              + "; ".join(f"{s.name}: {s.n_layers} layers, {s.n_kv_heads} KV heads ({s.attention}) "
                          f"of {s.head_dim}, a {s.context:,}-token context" for s in shapes) + ".")


NOT_RUN = ("Not run on this machine yet: below is the result bundled with the lesson. Press **x** "
           "to run it here (under a minute on two cores), or `minigpt lab run ptq` in a terminal.")


def bundled_result() -> dict | None:
    """The result shipped with the lessons (lessons/lab/ptq/result.json), for learners who do not
    run the job."""
    try:
        return read_result(bundled_dir("ptq"))
    except RunError:
        return None


@example(JOBS["ptq"].example, "Post-training quantization of the shipped model: loss and bytes")
def _ptq_lab() -> str:
    folder = job_dir("ptq")
    try:
        result, note = read_result(folder), "Your run."
        if result is None:
            note = ("Running in the background now; the bundled result is shown until it is done."
                    if is_running(folder) else NOT_RUN)
    except RunError as e:
        result, note = None, f"Your saved result cannot be read ({e}); press **x** to run it again."
    if result is None:
        result = bundled_result()
        if result is None:
            return note
    base = result["rows"][0]
    cells = [[r["label"], f"{r['bytes'] / 1024:.0f} KiB", fmt(r["loss"], 4),
              "—" if r is base else f"{r['loss'] - base['loss']:+.4f}"] for r in result["rows"]]
    wins = {k: sum(e["gptq"] < e["rtn"] for e in v) for k, v in result["layer_errors"].items()}
    layers = len(next(iter(result["layer_errors"].values())))
    return (note + "\n\n" + table(["weights", "stored", "val loss", "rise"], cells)
            + f"\n\nCalibrated on {result['calibration_names']} validation names, scored on the "
              f"other {result['held_out_names']:,}. GPTQ's output error was below RTN's in "
              + ", ".join(f"{wins[k]} of {layers} layers at {k}" for k in wins)
              + f". Measured once, with one calibration set, in {result['seconds']:.0f} s at load "
              f"average {result['load_average']:.1f}.")
