"""The progress database's schema, as the ordered SQL migrations that build it.

Migration n (1-based) brings a file at ``PRAGMA user_version`` n-1 to n; :class:`minigpt.store.Store`
runs the ones a file lacks, in order. To change the schema, append a migration, never edit an old
one: a learner's file has already run it.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: lessons and settings
    """
    CREATE TABLE lesson_progress (
        lesson_id   TEXT PRIMARY KEY,
        position    REAL NOT NULL DEFAULT 0,   -- scroll position, 0..1 of the lesson's height
        read_at     TEXT,                      -- UTC ISO time the learner reached the end
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 2: flashcards (minigpt.study): scheduling state per card id, and one log row per answer
    """
    CREATE TABLE card_state (
        card_id       TEXT PRIMARY KEY,          -- our stable id from the deck file
        fsrs_json     TEXT NOT NULL,             -- fsrs.Card.to_dict() as JSON
        due           TEXT NOT NULL,             -- UTC, same format as reviewed_at
        fsrs_state    INTEGER NOT NULL,          -- 1 learning, 2 review, 3 relearning
        reps          INTEGER NOT NULL DEFAULT 0,
        lapses        INTEGER NOT NULL DEFAULT 0,
        suspended     INTEGER NOT NULL DEFAULT 0,
        buried_until  TEXT,
        updated_at    TEXT NOT NULL
    );
    CREATE INDEX card_state_due ON card_state(due);
    CREATE TABLE review_log (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        card_id       TEXT NOT NULL,
        rating        INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        mode          TEXT NOT NULL,             -- review, cram or quiz
        answer        TEXT,
        reviewed_at   TEXT NOT NULL,
        duration_ms   INTEGER,
        was_new       INTEGER NOT NULL DEFAULT 0,
        prev_state    TEXT                      -- the card_state row before, as JSON (NULL: none)
    );
    CREATE INDEX review_log_card ON review_log(card_id);
    CREATE INDEX review_log_time ON review_log(reviewed_at);
    CREATE TABLE user_cards (
        card_id       TEXT PRIMARY KEY,
        deck          TEXT NOT NULL,
        front         TEXT NOT NULL,
        back          TEXT NOT NULL,
        source        TEXT,
        created_at    TEXT NOT NULL
    );
    """,
    # 3: cards a learner flagged as wrong ("this question is wrong"), and a marker asking
    # minigpt.study.repair to re-grade typed answers an older grader marked wrong (it needs the
    # decks and the grader, so it runs in the study layer the next time the app opens)
    """
    CREATE TABLE card_flag (
        card_id       TEXT PRIMARY KEY,
        note          TEXT NOT NULL DEFAULT '',
        flagged_at    TEXT NOT NULL,             -- UTC, same format as reviewed_at
        resolved_at   TEXT                       -- NULL while the flag is open
    );
    INSERT OR REPLACE INTO settings(key, value) VALUES ('study.regrade', 'pending');
    """,
    # 4: katas (minigpt.katas.history): one row per kata, one per graded attempt
    """
    CREATE TABLE kata_progress (
        kata             TEXT PRIMARY KEY,         -- the kata's name (lessons/katas/*/meta.toml)
        opened_at        TEXT NOT NULL,            -- first opened: time to pass counts from here
        attempts         INTEGER NOT NULL DEFAULT 0,
        passes           INTEGER NOT NULL DEFAULT 0,
        hints_used       INTEGER NOT NULL DEFAULT 0,  -- the most hints shown at once (they come in order)
        first_passed_at  TEXT,
        seconds_to_pass  REAL,                     -- from opened_at to the first pass
        gave_up_at       TEXT,                     -- the solution was shown before any pass
        draft            TEXT,                     -- the learner's code as last left (nothing typed is lost)
        updated_at       TEXT NOT NULL
    );
    CREATE TABLE kata_attempts (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        kata          TEXT NOT NULL,
        attempted_at  TEXT NOT NULL,
        passed        INTEGER NOT NULL,
        cases_failed  INTEGER NOT NULL,
        cases_total   INTEGER NOT NULL,
        source        TEXT NOT NULL              -- app, editor or cli
    );
    CREATE INDEX kata_attempts_kata ON kata_attempts(kata);
    """,
    # 5: mock interviews (minigpt.study.interview): one row per finished interview, its report as JSON
    """
    CREATE TABLE interview (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at    TEXT NOT NULL,             -- UTC, same format as reviewed_at
        finished_at   TEXT NOT NULL,
        minutes       REAL NOT NULL,             -- the length chosen
        questions     INTEGER NOT NULL,          -- questions asked (answered or skipped)
        score         REAL NOT NULL,             -- 0..1, the mean over the questions
        report        TEXT NOT NULL              -- minigpt.study.interview.Report.to_json()
    );
    CREATE INDEX interview_time ON interview(started_at);
    """,
    # 6: interviews ended early (partial: out of the trend unless the learner keeps it), what the
    # learner typed for each question, and the one interview paused to resume with its time left
    """
    ALTER TABLE interview ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;   -- ended before its end
    ALTER TABLE interview ADD COLUMN in_trend INTEGER NOT NULL DEFAULT 1;  -- charted and summed up
    CREATE TABLE interview_answer (
        interview_id  INTEGER NOT NULL REFERENCES interview(id) ON DELETE CASCADE,
        number        INTEGER NOT NULL,          -- 1 for the first question asked
        card_id       TEXT NOT NULL DEFAULT '',  -- the card asked ('' for a kata)
        kata          TEXT NOT NULL DEFAULT '',
        typed         TEXT NOT NULL,             -- the learner's answer as typed (code for a kata)
        PRIMARY KEY (interview_id, number)
    );
    CREATE TABLE interview_pause (
        id            INTEGER PRIMARY KEY CHECK (id = 1),  -- one paused interview at a time
        started_at    TEXT NOT NULL,
        paused_at     TEXT NOT NULL,
        seconds_left  REAL NOT NULL,
        state         TEXT NOT NULL              -- minigpt.study.interview_pause's JSON
    );
    """,
    # 7: practice that comes back. A passed kata is an FSRS card (minigpt.study.kata_cards), kept
    # apart from card_state so that deck code never meets an id no deck holds; one log row per
    # rated re-solve. And the offline rubric check's pre-ticks beside the learner's own ticks
    # (minigpt.study.rubric), so the matcher's disagreements are counted.
    """
    CREATE TABLE kata_card (                   -- the columns of card_state that a kata needs
        kata TEXT PRIMARY KEY, fsrs_json TEXT NOT NULL, due TEXT NOT NULL, fsrs_state INTEGER NOT NULL,
        reps INTEGER NOT NULL DEFAULT 0, lapses INTEGER NOT NULL DEFAULT 0, updated_at TEXT NOT NULL
    );
    CREATE INDEX kata_card_due ON kata_card(due);
    CREATE TABLE kata_review (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        kata          TEXT NOT NULL,
        rating        INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        why           TEXT NOT NULL,             -- first pass, named mistake, hint, clean, fast…
        reviewed_at   TEXT NOT NULL,
        seconds       REAL,                      -- time spent on the re-solve (NULL: not timed)
        source        TEXT NOT NULL,             -- app, cli or upgrade
        prev_state    TEXT                       -- the kata_card row before, as JSON (NULL: none)
    );
    CREATE INDEX kata_review_kata ON kata_review(kata);
    CREATE TABLE rubric_check (                -- suggested, confirmed: JSON lists of point indices
        id INTEGER PRIMARY KEY AUTOINCREMENT, card_id TEXT NOT NULL, answer TEXT NOT NULL,
        suggested TEXT NOT NULL, confirmed TEXT NOT NULL, checked_at TEXT NOT NULL
    );
    CREATE INDEX rubric_check_card ON rubric_check(card_id);
    """,
]
