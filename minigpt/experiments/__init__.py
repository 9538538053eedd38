"""Experiments: sweeps of training runs (the course's exercises) run by a background scheduler.

``spec`` says what an experiment is (a base TrainConfig, axes, a budget per run) and resolves it
into a plan of runs; ``presets`` holds the course's exercises and reads grids written as text;
``folder`` is the experiment folder's protocol; ``scheduler`` runs the plan as ordinary run folders
under it; ``evaluation`` measures what a finished run's log lacks; ``fit`` fits
L(N) = a·N^(−α) + c; ``results`` reads everything back into a table, ``plots`` and ``chart`` draw
the experiment's own plot as text, ``exports`` writes CSV / Markdown / text / JSON, and
``console`` is what ``minigpt sweep`` prints. The package sits above ``minigpt.control``: it
starts runs the way the app does.
"""
