"""The live view of one run: status line, progress with ETA, loss and learning-rate charts, samples.

It only reads the run folder (minigpt.control.run_processes for the status, minigpt.runs.metrics for the
curves), a few times a second and only the bytes appended since the last look, so it follows runs
started by this app, by an earlier app or by ``minigpt train`` in another terminal alike. Samples
are drawn in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Static

from minigpt import alerts, machine, processes
from minigpt.control import run_processes
from minigpt.runs import insight, snapshots
from minigpt.runs.metrics import RunMetrics
from minigpt.runs.schema import RunState
from minigpt.training.diagnosis import Symptom, diagnose
from tui.common.loss_chart import LossChart
from tui.training.inside_views import layers_text, move_cursor, surprise_text, view_steps
from tui.training.run_alerts import deliver, diagnosis_text
from tui.training.run_summary import STATE_GLYPHS, lr_cell, model_cell, read_config, run_title, seed_cell
from tui.workers import Result, background

VIEWS = ("samples", "surprise", "layers")  # what the side column shows below the lr chart; i cycles
POLL_S = 0.4  # a dead worker shows within 2 s
STOPPING_POLL_S = 0.1  # after a stop request: the stopped state shows as soon as the worker writes it


def state_label(status: RunState) -> str:
    return f"{STATE_GLYPHS.get(status, '?')} {status}"


class RunPanel(Vertical):
    """Follows ``run_dir`` (None: shows nothing until ``follow`` is called)."""

    def __init__(self, run_dir: Path | None = None, **kwargs):
        super().__init__(**kwargs)
        self.run_dir = run_dir
        self.series: RunMetrics | None = None
        self.state: run_processes.RunView | None = None
        self.samples: list[str] = []
        self._sampled_evals = -1
        self.stopping = False  # a stop was asked for and the worker has not written "stopped" yet
        self._fast_poll = None
        self.view = "samples"
        self.surprise: insight.Surprise | None = None
        self.layer_health: insight.LayerHealth | None = None
        self.cursor = (0, 0)  # (item, character) under the surprise view's cursor
        self._insight_seen: tuple = ()  # the sizes of the two files when last read
        self.scrub_step: int | None = None  # the past step every view shows (None: the latest)
        self.alert_watcher: alerts.AlertWatcher | None = None
        self.symptoms: list[Symptom] = []
        self._diagnosed: tuple = ()  # what the last diagnosis saw (evals, records/20, state)
        self.usage_sampler: processes.UsageSampler | None = None  # of the live trainer: ≤ 1 sample/s
        self.gpu_sampler: machine.GpuSampler | None = None  # made on the first CUDA run seen

    def compose(self) -> ComposeResult:
        yield Static(id="run-title")
        yield Static(id="run-stats")
        yield Static(id="run-units")
        yield Static(id="run-machine")  # the trainer's process and GPU, while it runs
        yield ProgressBar(total=1.0, show_eta=False, id="run-progress")
        with Horizontal(id="run-charts"):
            yield LossChart("loss (lower is better)", id="loss-chart")
            with Vertical(id="run-side"):
                yield LossChart("learning rate", id="lr-chart")
                yield Static(id="run-samples")
                yield Static(id="run-surprise", classes="inside-view")
                yield Static(id="run-layers", classes="inside-view")
        yield Static(id="run-diagnosis")
        yield Static(id="run-error")

    def on_mount(self) -> None:
        self.set_interval(POLL_S, self.poll)
        if self.run_dir is not None:
            self.follow(self.run_dir)

    def follow(self, run_dir: Path) -> None:
        """Start following another run (from scratch: its whole metrics file is read again)."""
        self.run_dir = Path(run_dir)
        self.series = RunMetrics(self.run_dir)
        self.samples, self._sampled_evals = [], -1
        self.alert_watcher = alerts.AlertWatcher(self.run_dir)  # a run already over says nothing
        self.symptoms, self._diagnosed = [], ()
        self._end_stopping()
        loss, lr = self.query_one("#loss-chart", LossChart), self.query_one("#lr-chart", LossChart)
        loss.clear_series()
        loss.set_series("train", self.series.steps, self.series.train_loss, label="train", marker="braille")
        loss.set_series("val", self.series.val_steps, self.series.val_loss, label="val", marker="●",
                         scatter=True)
        lr.clear_series()
        lr.legend = False  # one curve: the title names it
        lr.set_series("lr", self.series.steps, self.series.lr, label="lr", marker="braille")
        self.query_one("#run-samples", Static).update("[b]Samples[/b]\n[dim]after the first evaluation[/dim]")
        self.surprise = self.layer_health = None
        self._insight_seen, self.cursor, self.scrub_step = (), (0, 0), None
        loss.set_marker(None)
        lr.set_marker(None)
        self.show_view(self.view)
        self.poll()

    # -- the inside views -----------------------------------------------------------------------
    def show_view(self, view: str) -> None:
        """Show samples, surprise or layer health below the learning-rate chart."""
        self.view = view
        for name in VIEWS:
            self.query_one(f"#run-{name}", Static).display = name == view
            self.set_class(name == view, f"-view-{name}")
        self._draw_inside()

    def next_view(self) -> None:
        self.show_view(VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)])

    def move_cursor(self, d_item: int, d_pos: int) -> None:
        self.cursor = move_cursor(self.surprise, self.cursor, d_item, d_pos)
        self._draw_inside()

    def scrub(self, direction: int) -> None:
        """Move every view to the previous (-1) or next (+1) snapshot's step; past the newest,
        back to live."""
        steps = snapshots.snapshot_steps(self.run_dir) if self.run_dir is not None else []
        if not steps:
            self.app.notify("No snapshots in this run yet (runs from before keep none)", severity="warning")
            return
        self.scrub_to(snapshots.scrub_target(steps, self.scrub_step, direction))

    def scrub_to(self, target: int | None) -> None:
        """Show every view at snapshot step ``target`` (None: live)."""
        self.scrub_step = target
        self.query_one("#loss-chart", LossChart).set_marker(target)
        self.query_one("#lr-chart", LossChart).set_marker(target)
        self._draw_inside()
        if self.state is not None:
            self._show_references()
        if self.run_dir is not None:
            self._sampled_evals = -1  # samples again, from that step's snapshot (or the best)
            self._sample(self.run_dir, max(len(self.series.val_loss), 1) if self.series else 1, target)

    def _read_insight(self) -> bool:
        """Read the surprise and layer files again when they grew; True when they did."""
        seen = tuple(_size(self.run_dir / name) for name in (insight.SURPRISE_FILE, insight.LAYERS_FILE))
        if seen == self._insight_seen:
            return False
        self._insight_seen = seen
        self.surprise = insight.read_surprise(self.run_dir)
        self.layer_health = insight.read_layer_health(self.run_dir)
        self.cursor = move_cursor(self.surprise, self.cursor, 0, 0)
        return True

    def _draw_inside(self) -> None:
        if self.view == "surprise":
            uniform = self.state.info.uniform_loss if self.state is not None else None
            self.query_one("#run-surprise", Static).update(
                surprise_text(self.surprise, self.cursor, uniform, self.scrub_step))
        elif self.view == "layers":
            view = self.query_one("#run-layers", Static)
            if not view.content_size.height and not self._redraw_pending:  # just shown: again once laid out
                self._redraw_pending = True
                self.call_after_refresh(self._redraw_inside)
            view.update(layers_text(self.layer_health, step=self.scrub_step, height=view.content_size.height))

    _redraw_pending = False

    def _redraw_inside(self) -> None:
        self._redraw_pending = False
        if self.query_one("#run-layers", Static).content_size.height:
            self._draw_inside()

    def _show_references(self) -> None:
        """The loss chart's reference lines and the units line, from the status."""
        info, chart = self.state.info, self.query_one("#loss-chart", LossChart)
        chart.set_reference("uniform", info.uniform_loss,
                            f"uniform {info.uniform_loss:.2f}" if info.uniform_loss else "")
        chart.set_reference("bigram", info.bigram_loss, f"bigram {info.bigram_loss:.2f}" if info.bigram_loss else "")
        best = info.best_val
        if best is None:
            text = "[dim]loss in nats; perplexity and bits/char after the first evaluation[/dim]"
        else:
            ppl, bits = insight.loss_units(best)
            text = f"best val {best:.3f} nats = ppl {ppl:.2f} = {bits:.2f} bits/char"
        if info.uniform_loss is not None and info.bigram_loss is not None:
            text += f" [dim]· ┄ uniform {info.uniform_loss:.2f} · bigram {info.bigram_loss:.2f}[/dim]"
        if self.scrub_step is not None:
            others = {view: at for view, at in
                      view_steps(self.surprise, self.layer_health, self.scrub_step).items() if at != self.scrub_step}
            where = " · ".join(f"{view} from {at}" for view, at in others.items()) or "every view at that step"
            text = f"[b]⏪ step {self.scrub_step}[/b] · {where} · a attention · ] later"
            self.query_one("#run-units", Static).update(text)
            return
        warn = self.layer_health is not None and self.layer_health.steps and self.layer_health.outside()
        if warn:
            text += f"  [b]! {len(warn)} layer{'s' if len(warn) > 1 else ''} off band[/b]"
        self.query_one("#run-units", Static).update(text)

    def stop_requested(self) -> None:
        """Say at once that the run is stopping, and look at its status ten times a second until
        the worker confirms (it finishes its step and saves a checkpoint first)."""
        self.stopping = True
        if self._fast_poll is None:
            self._fast_poll = self.set_interval(STOPPING_POLL_S, self.poll)
        self._show_status()

    def _end_stopping(self) -> None:
        self.stopping = False
        if self._fast_poll is not None:
            self._fast_poll.stop()
            self._fast_poll = None

    def poll(self) -> None:
        if self.run_dir is None or self.series is None:
            return
        arrived = self.series.poll()
        before = self.state.status if self.state is not None else None
        self.state = run_processes.run_state(self.run_dir)
        if self.stopping and not self.state.status.active:
            self._end_stopping()
        if self.state.status != before:
            self.screen.refresh_bindings()  # stop / resume appear and disappear with the state
            self._alert()
        if arrived or self.series.restarted:  # a restart emptied the lists the charts draw
            self.query_one("#loss-chart", LossChart).touch()
            self.query_one("#lr-chart", LossChart).touch()
        if self._read_insight():
            self._draw_inside()
        self._show_status()
        self._show_machine()
        self._show_references()
        self._diagnose()
        evals = len(self.series.val_loss)
        if evals and evals != self._sampled_evals and run_processes.has_checkpoint(self.run_dir) and self.scrub_step is None:
            self._sampled_evals = evals
            if not self.samples:  # a run reattached after its evaluations: not "after the first" any more
                self.query_one("#run-samples", Static).update(f"[b]Samples[/b] (eval {evals})\n[dim]sampling…[/dim]")
            self._sample(self.run_dir, evals)

    def _show_status(self) -> None:
        st, s = self.state, self.series
        info, last = st.info, s.last
        params = f"{info.n_params:,} params" if info.n_params else "size pending"
        cfg = read_config(self.run_dir)
        lr = lr_cell(cfg)
        self.query_one("#run-title", Static).update(
            f"[b]{_escape(run_title(info))}[/b]  {_escape(model_cell(info, cfg))}{f' · lr {lr}' if lr != '–' else ''}"
            f" · seed {seed_cell(cfg)} · {params} · {_escape(info.device or '…')}"
            + (f" × {info.world_size} processes" if info.world_size > 1 else ""))
        frac, eta = run_processes.progress(info, last)
        step = max(info.step, int(last.get("step") or 0))
        total = f"/{info.total:g}s" if info.total_unit == "seconds" and info.total else (
            f"/{info.total}" if info.total else "")
        best = f"{info.best_val:.4f}" if info.best_val is not None else "–"
        if st.status == RunState.FINISHED and info.test_loss is not None:
            best += f"  test {info.test_loss:.4f}"  # the held-out split, measured once at the end
        tps = last.get("tokens_per_s")
        tps_text = f"{tps / 1000:.1f}k" if tps else "–"
        # ETA and the threads in use only while running: a finished run's line (with its test loss)
        # ran past 80 columns and lost its tok/s.
        running = st.status == RunState.RUNNING
        eta_text = f"ETA {run_processes.format_duration(eta)}  " if running else ""
        cpu = cpu_text(info.cpu_policy, last.get("threads")) if running else ""
        state = "■ stopping…" if self.stopping else state_label(st.status)
        self.query_one("#run-stats", Static).update(
            f"[b]{state}[/b]  step {step}{total}  {frac * 100:3.0f}%  {eta_text}"
            f"best val {best}  tok/s {tps_text}{cpu}")
        self.query_one("#run-progress", ProgressBar).update(total=1.0, progress=frac)
        for state in RunState:
            self.set_class(st.status == state, f"-{state}")
        error = self.query_one("#run-error", Static)
        if st.status == RunState.BROKEN:
            error.update(f"[b]! This run's files are damaged:[/b] {_escape(st.reason or 'unreadable')}\n"
                         "Its checkpoints may still load in the playground; n starts a new run")
            error.display = True
        elif st.status == RunState.FAILED:
            tail = run_processes.stderr_tail(self.run_dir, 6)
            lines = [f"[b]✗ The worker failed:[/b] {_escape(st.reason or 'no reason recorded')}"]
            if tail:
                lines += ["[b]Last lines of stderr.log:[/b]", *(f"  {_escape(ln)}" for ln in tail)]
            if run_processes.has_checkpoint(self.run_dir):
                lines.append("r resumes from the last checkpoint · n starts a new run")
            else:
                lines.append("No checkpoint was saved: n starts a new run, c copies these settings")
            error.update("\n".join(lines))
            error.display = True
        else:
            error.display = False

    def _show_machine(self) -> None:
        """The machine line: the trainer's CPU, threads and memory (psutil), its steps/s and time
        left, and on CUDA the GPU (NVML, else the trainer's torch counters). Only while running."""
        line = self.query_one("#run-machine", Static)
        pid = self.state.alive_pid if self.state.status == RunState.RUNNING else None
        if pid is None:
            line.display, self.usage_sampler = False, None
            return
        if self.usage_sampler is None or self.usage_sampler.pid != pid:
            self.usage_sampler = processes.UsageSampler(pid)
        gpu = None
        if (self.state.info.device or "").startswith("cuda"):
            if self.gpu_sampler is None:
                self.gpu_sampler = machine.GpuSampler()
            gpu = self.gpu_sampler.sample() or machine.torch_gpu_usage(self.series.last)
        _, eta = run_processes.progress(self.state.info, self.series.last)
        text = machine.machine_line(self.usage_sampler.sample(), machine.steps_per_second(self.series.recent),
                                    run_processes.format_duration(eta) if eta is not None else None, gpu)
        line.display = bool(text)
        line.update(f"[dim]{_escape(text)}[/dim]")

    def _alert(self) -> None:
        """The run's end (seen here, whoever trains it), told once as the learner's settings ask."""
        info = self.state.info
        for alert in self.alert_watcher.state(self.state.status, step=info.step, reason=self.state.reason,
                                              val_loss=info.val_loss, test_loss=info.test_loss,
                                              best_val=info.best_val):
            deliver(self.app, alert)

    def _diagnose(self) -> None:
        """The symptoms, read again when an evaluation, twenty records or a new state arrived."""
        seen = (len(self.series.val_loss), len(self.series.steps) // 20, self.state.status)
        if seen == self._diagnosed:
            return
        self._diagnosed = seen
        before = [s.id for s in self.symptoms]
        self.symptoms = diagnose(self.run_dir)
        line = self.query_one("#run-diagnosis", Static)
        line.display = bool(self.symptoms)
        if self.symptoms:
            line.update(diagnosis_text(self.symptoms))
        if [s.id for s in self.symptoms] != before:
            self.screen.refresh_bindings()  # the key that opens the lesson comes and goes with them
        for symptom in (s for s in self.symptoms if s.id == "diverged" and self.alert_watcher is not None):
            for alert in self.alert_watcher.diverging(self.state.info.step, symptom.evidence):
                deliver(self.app, alert)

    @dataclass
    class Sampled(Result):
        """Names sampled from a run's checkpoint after ``evals`` evaluations (or at snapshot ``step``)."""
        run_dir: Path
        evals: int
        names: list[str]
        text: str
        step: int | None

    @background(thread=True, exclusive=True, group="run-samples")
    def _sample(self, run_dir: Path, evals: int, step: int | None = None) -> Sampled:
        try:
            names = run_processes.sample_names(run_dir, 6, step=step)
            text = "\n".join(f"  {_escape(n) or '(empty)'}" for n in names)
        except Exception as e:
            names, text = [], f"  [dim]no samples: {_escape(str(e)[:60])}[/dim]"
        return self.Sampled(run_dir, evals, names, text, step)

    @on(Sampled)
    def _show_samples(self, message: Sampled) -> None:
        run_dir, evals, names, text, step = (message.run_dir, message.evals, message.names, message.text,
                                             message.step)
        # follow() moves to another run without asking for samples: a request is not newer for it.
        if run_dir != self.run_dir or step != self.scrub_step:
            return  # the panel moved on to another run (or step) meanwhile
        self.samples = names
        where = f"step {step}" if step is not None else f"eval {evals}"
        self.query_one("#run-samples", Static).update(f"[b]Samples[/b] ({where})\n{text}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def cpu_text(policy: str | None, threads_now) -> str:
    """The CPU policy in a few characters (``  cpu active×2``); the threads follow the load."""
    if not policy or not policy.startswith("OpenMP "):
        return ""
    wait = policy.split()[1]
    threads = threads_now or policy.split(" waiting, ")[1].split(" ")[0]
    return f"  cpu {wait}×{threads}"


def _escape(text: str) -> str:
    from minigpt.text import markup_escape as escape

    return escape(text)
