"""The hostile-input suite: what a careless or hostile user can feed the tutor, class by class.

Every case asserts an outcome, never only "no exception": a one-line ``Error:`` with exit status 2
from the CLI, or a message shown in the app with the screen still working; no traceback, no hang
past a stated bound, nothing lost (reviews, progress, the user's files), and no control character
from a file or a model reaching the terminal.

Input classes and where they are tested (add a file here for a new class, and a line below):

- terminal strings: OSC 52 / OSC 0 / CSI / C1 / BEL in dataset lines, generated names, card text,
  run folder names, status error messages, snippet output
  (``test_terminal_strings.py`` for the library and the CLI, ``test_terminal_app.py`` for the app);
- datasets: empty, blank, binary, not UTF-8, a byte-order mark, 1 / 2 / 3–9 lines, a 1 MB line,
  a 200 MB file (peak memory measured), FIFOs and devices, folders, symlinks, unreadable files,
  huge alphabets (``test_datasets.py``);
- vocabularies: junk stored in a checkpoint's vocabulary list (``test_datasets.py``);
- the progress database: damaged, read-only, locked by another writer, full, newer schema, the
  round-1 file (``test_database.py``);
- lesson snippets: endless output, endless runs, grandchildren holding the pipe, the learner
  leaving or quitting mid-run (``test_snippets.py``);
- card imports: Markdown and TSV parsing (property-based), binary / huge / non-UTF-8 files,
  duplicates, stray quotes, FIFOs (``test_card_import.py``);
- run files: text fields of status.json and lines of metrics.jsonl (``test_run_files.py``);
- CLI options: absurd numbers, unicode, symlinks, permission-denied and special paths
  (``test_cli_options.py``);
- stopping a run: a run folder naming a foreign pid, with or without its start time, a trainer
  look-alike, a lock held by another process, a forged launch record (``test_stop_foreign.py``);
- snippets that leave their session: start_new_session, setsid, a double fork, a fork bomb, under
  a cgroup and under the /proc walk (``test_snippet_escape.py``);
- websocket frames to ``minigpt serve``: not JSON, unknown kinds, stdin without text, resizes
  without whole numbers, deep nesting (``test_serve_frames.py``);
- the terminal itself: starting or shrinking to 1–79 columns (``test_narrow_terminal.py``), bytes
  that are not UTF-8 typed or pasted (``test_terminal_bytes.py``);
- silently wrong answers: ``train --note`` dropped, resuming on changed data, run or data paths
  that are not UTF-8 (``test_silently_wrong.py``), an error cut at a line break in a path
  (``test_error_lines.py``), undo against a bury from another window (``test_study_windows.py``),
  the database's ``-wal``/``-shm`` left read-only (``test_database_companions.py``);
- special files: a FIFO, ``/dev/zero``, a folder or a 20 GB sparse file in place of every file a
  run folder, checkpoint, experiment, deck, lesson or card import holds, in the library, the CLI
  and the app (``test_special_files.py``);
- impossible sizes: every option's upper bound, generated from the option list, the size rule
  and the memory estimate (``test_option_bounds.py``);
- full disks: training, the progress database and exports on a 2 MB tmpfs (``test_disk_full.py``);
- runaway sweeps: grids counted and capped before they are built (``test_sweep_sizes.py``);
- distributed misconfiguration: rendezvous options and a node that never comes
  (``test_distributed_options.py``);
- kata bans: a banned operator captured at import, spelled privately, through ``torch.ops.aten``, a
  ``TensorBase`` method or a math fallback, and the correct solutions that must still pass
  (``test_kata_bans.py``);
- learner code against the grader: killing its parent, signalling or starting processes, reading
  the reference from disk, a link, the catalogue or the call stack (``test_kata_reaper.py``).

``conftest.py`` holds the shared pieces: the escape sequences, an assertion that text is free of
control characters, the CLI run in a real subprocess, the app's rendered screen as text, and the
large generated files (made once per session, in a temporary folder).

Run it alone with ``pytest tests/hostile``; ``make test`` runs it with everything else. It is
kept under a minute on two cores: big files are generated once, every wait is bounded.
"""
