"""Katas: functions the learner writes (softmax, attention, a KV-cache step…), graded by hidden tests.

A kata is content (``lessons/katas/<order>-<name>/``: ``meta.toml``, ``stub.py``, ``solution.py``),
read by :mod:`minigpt.katas.catalogue`. Its hidden tests live here, one checker per kata in
:mod:`minigpt.katas.checkers` (cases chosen to catch the classic mistakes, and the mistakes
themselves written out so feedback can name them). :mod:`minigpt.katas.grading` compares what the
learner's function returned with the reference solution; :mod:`minigpt.katas.sandbox` runs the
learner's code in the bounded snippet runner behind a reaper (:mod:`minigpt.katas.harness`, sent the
cases only, with the kata's operators banned at torch's dispatcher by :mod:`minigpt.katas.ban`), and
the parent process compares the outputs itself, so nothing the learner's code prints or returns as
an exit status can pass a case.

Importing this package, the catalogue or the progress records does not import torch.
"""
