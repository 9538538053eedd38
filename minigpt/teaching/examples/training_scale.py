"""Worked examples for "Training at scale: schedules, degrees, stability, μP, balancing"."""

from __future__ import annotations

from minigpt.runs.lab import JOBS
from minigpt.teaching import parallelism, training_scale
from minigpt.teaching.examples.registry import example, fmt, table

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2")
JOB = training_scale.Job(n_params=70e9, layers=80, d_model=8192, heads=64, seq=4096, global_batch=1024)
# 512 GPUs of 80 GB at a realistic 40% of 1 PFLOP/s, NVLink inside a node, 400 Gb/s between
CLUSTER = training_scale.Cluster(512, 8, 80e9, 0.4e15, 450e9, 50e9)


@example("train_scale.schedules", "Pipeline schedules: 8 stages, 32 micro-batches")
def _schedules() -> str:
    p, m = 8, 32
    rows = [[s, f"{training_scale.schedule_bubble(p, m, s, v=2):.1%}", training_scale.activations_held(p, m, s)]
            for s in SCHEDULES]
    return (table(["schedule", "bubble", "micro-batches held"], rows)
            + "\n\nForward, input-gradient and weight-gradient passes take equal time; the "
              "interleaved schedule gives each GPU 2 chunks. Splitting the backward pass "
              "lets ZB-H1 fill two thirds of 1F1B's idle time at the same memory.")


@example("train_scale.degrees", "Choosing t, p and d: a 70B model on 512 GPUs")
def _degrees() -> str:
    plans = training_scale.search(JOB, CLUSTER)
    rows = [[pl.t, pl.p, pl.d, f"{pl.memory / 1e9:.1f}", f"{pl.step_s:.2f}",
             "yes" if pl.fits else "no"] for pl in plans[:4] + plans[-2:]]
    fits = sum(pl.fits for pl in plans)
    best = plans[0]
    return (table(["t", "p", "d", "GB a GPU", "step s", "fits"], rows)
            + f"\n\n{len(plans)} layouts divide the cluster, {fits} fit in 80 GB. Best: "
              f"tensor {best.t} inside a node, pipeline {best.p}, data {best.d}. Smaller t "
              "would be faster but holds too much; the fastest rows that fit keep t on "
              "NVLink and use the pipeline to cut the weights further.")


@example("train_scale.stability", "z-loss, soft-capping and QK-norm in numbers")
def _stability() -> str:
    rows = [[f"{x:g}", fmt(training_scale.soft_cap(x, 30.0), 2), fmt(training_scale.soft_cap(x, 50.0), 2)]
            for x in (5.0, 20.0, 50.0, 200.0)]
    calm, drifted = [2.0, 1.0, 0.0, -1.0], [52.0, 51.0, 50.0, 49.0]
    return (table(["logit", "cap 30", "cap 50"], rows)
            + f"\n\nz-loss (10⁻⁴·log²Z): {training_scale.z_loss(calm):.6f} on logits near zero, "
              f"{training_scale.z_loss(drifted):.4f} on the same logits shifted up by 50, which the "
              "softmax alone cannot tell apart. With QK-norm a head of 128 dimensions can "
              f"score at most {training_scale.max_qk_logit(128):.1f} (gain 1).")


@example("train_scale.mup", "μP: a base of width 256 grown to 4,096 (Adam)")
def _mup() -> str:
    m = 4096 / 256
    rows = [[kind, fmt(training_scale.mup_multipliers(kind, m)[0], 4), fmt(training_scale.mup_multipliers(kind, m)[1], 4)]
            for kind in training_scale.MUP_RULES]
    return (table(["parameter", "init std ×", "Adam lr ×"], rows)
            + "\n\nMultipliers against the tuned base model (width multiplier 16). Tune the "
              "small model's learning rate once; the large one inherits it through these "
              "rules instead of a new sweep.")


@example("train_scale.balance", "Balancing experts with a bias: 8 experts, top-2")
def _balance() -> str:
    h = training_scale.bias_balancing()
    rows = [[step + 1, f"{h[step]:.2f}"] for step in (0, 9, 19, 39, 79)]
    tail = sum(h[-10:]) / 10
    sent = parallelism.expert_all_to_all_bytes(tokens=4096, d_model=7168, top_k=8, devices=64)
    return (table(["step", "busiest / mean load"], rows)
            + f"\n\nMean over the last 10 steps: {tail:.2f}. No balancing term enters the "
              "loss: only which experts are chosen moves, not how their outputs are weighed. "
              "With one expert a GPU, the busiest sets the layer's time: at the first step's "
              f"{h[0]:.2f} the layer runs {h[0]:.2f}× as long as a balanced one. The traffic "
              "itself for DeepSeek-V3's width and top-8 (d = 7,168; its cap of four nodes a "
              f"token left out) over 64 GPUs with 4,096 tokens each: {sent / 2**20:,.0f} MiB sent per GPU per MoE layer, forward.")


# --- the lab jobs: μP's sweep and the stability runs, the learner's own or the bundled ones -----


def lab_or_bundled(job: str) -> tuple[dict | None, str]:
    """The learner's finished result of ``job`` if there is one, else the bundled one; and a
    sentence saying which (and how to run it)."""
    from minigpt.errors import RunError
    from minigpt.runs.lab import bundled_dir, is_running, job_dir, read_result

    try:
        own = read_result(job_dir(job))
    except RunError:
        own = None
    if own is not None:
        return own, (f"Your run: {own['seconds']:.0f} s at load average {own['load_average']:.1f}, "
                     f"one thread. `minigpt lab show {job}` prints every number.")
    running = is_running(job_dir(job))
    how = ("Your run is going in the background; its numbers replace these when it is done."
           if running else f"Press **x** to run it yourself (`minigpt lab run {job}` in a terminal).")
    try:
        result = read_result(bundled_dir(job))
    except RunError:
        result = None
    if result is None:
        return None, how
    return result, (f"The bundled result ({result['seconds']:.0f} s on one thread of a shared "
                    f"two-core machine). {how}")


def _lr_text(lr: float | None) -> str:
    from minigpt.text_chart import compact_number

    return "—" if lr is None else compact_number(float(f"{lr:.1e}"))


def _lr_chart(curves: dict, lrs: list[float], title: str) -> str:
    from minigpt.text_chart import ChartSeries, scatter_chart

    markers = "o+x*#"
    series = [ChartSeries(f"width {w}", markers[i % len(markers)],
                          [(lr, loss) for lr, loss in zip(lrs, losses) if loss is not None])
              for i, (w, losses) in enumerate(curves.items())]
    return scatter_chart(series, width=72, height=14, xlog=True, title=title, xlabel="learning rate")


@example(JOBS["mup"].example, "μP on our MiniGPT: validation loss against learning rate per width")
def _mup_lab() -> str:
    result, source = lab_or_bundled("mup")
    if result is None:
        return source
    lrs = result["lrs"]
    parts = []
    for p, name in (("sp", "SP"), ("mup", "μP")):
        parts.append("```\n" + _lr_chart(result[p]["curves"], lrs, f"{name}: val loss after "
                                         f"{result['steps']} steps") + "\n```")
    rows = [[f"width {w}", _lr_text(result["sp"]["best_lr"][w]), _lr_text(result["mup"]["best_lr"][w])]
            for w in result["sp"]["best_lr"]]
    rows.append(["spread (decades)", fmt(result["sp"]["spread_decades"], 2), fmt(result["mup"]["spread_decades"], 2)])
    check = result["coordinate_check"]
    grow = {p: check[p][max(check[p], key=int)]["logits_change"] / check[p][min(check[p], key=int)]["logits_change"]
            for p in ("sp", "mup")}
    widths = sorted(int(w) for w in check["sp"])
    return ("\n\n".join(parts) + "\n\n" + table(["best lr", "SP", "μP"], rows)
            + f"\n\n{result['n_layers']} layers, batches of {result['batch_size']} names, AdamW, seed "
              f"{result['seed']}; μP's base width is {result['base_width']}, where both build the same "
              "model (μP's head starts at zero). The best rate is the grid's lowest point refined by "
              "a parabola through its neighbours. Coordinate check (three Adam steps at lr 0.01 on "
              f"one batch): from width {widths[0]} to {widths[-1]} the logits' change grows "
              f"{fmt(grow['sp'], 1)}× under SP and {fmt(grow['mup'], 2)}× under μP. " + source)


@example(JOBS["stability"].example, "A learning rate too high: what each stabiliser changes")
def _stability_lab() -> str:
    import statistics

    result, source = lab_or_bundled("stability")
    if result is None:
        return source
    rows = []
    for name, v in result["variants"].items():
        runs = v["runs"]
        finished = [r["val_loss"] for r in runs if r["val_loss"] is not None]
        vs = v.get("against_default")
        rows.append([name, sum(r["spikes"] for r in runs), sum(r["diverged_at"] is not None for r in runs),
                     fmt(max(r["max_attention_logit"] for r in runs), 0),
                     fmt(statistics.fmean(finished), 3) if finished else "—",
                     "—" if vs is None else f"{vs['difference']:+.3f} ± {vs['stderr']:.3f}, p = {vs['p']:.2g}"])
    n = len(result["seeds"])
    default = result["variants"]["default"]["runs"]
    if not any(r["spikes"] or r["diverged_at"] for r in default):
        verdict = ("No default run spiked or diverged by this definition: at this size and length the "
                   "damage shows as attention scores in the hundreds or thousands and a worse loss that "
                   "depends on the seed, not as a jump. ")
    else:
        verdict = ""
    return (table(["variant", "spikes", "diverged", "max score", "val loss", "vs default"], rows)
            + f"\n\nEach variant trained {result['steps']} steps at AdamW lr {fmt(result['lr'], 2)} (six times "
              f"the default) from seeds {', '.join(str(s) for s in result['seeds'])}: spikes and divergences are "
              f"summed over the {n} runs, the max score is the largest attention score q·k·scale seen at any "
              "10th step, the val loss is the mean. A spike is a step at least "
              f"{fmt(result['spike_nats'], 1)} nats above the median of the {result['spike_window']} steps "
              "before it (a run of such steps counts once). The last column is the paired t-test of "
              "the final val loss against the default run of the same seed (negative: better). " + verdict
              + source)
