"""Experiments: sweeps of training runs (the course's exercises) run by a background scheduler.

``spec`` says what an experiment is (a base TrainConfig, axes, a budget per run) and resolves it
into a plan of runs; ``presets`` holds the course's exercises; ``scheduler`` runs the plan as
ordinary run folders under the experiment's folder; ``fit`` fits L(N) = a·N^(−α) + c; ``results``
reads everything back into a table, exports and the experiment's own plot (``chart`` draws it as
text). The package sits above ``minigpt.control``: it starts runs the way the app does.
"""
