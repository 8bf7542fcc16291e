/// The database layout, as a list of migrations. `PRAGMA user_version` holds how many have
/// run; opening a database runs the missing ones, each in its own transaction, so a file from
/// any earlier release is brought up to date and a crash halfway leaves the last good version.
///
/// Never edit a migration that has shipped: add a new one.
enum Schema {
  static let migrations: [String] = [
    // 1: the first release: one row per ended phase.
    """
    CREATE TABLE phases (
      id INTEGER PRIMARY KEY,
      card TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('focus', 'short-break', 'long-break')),
      planned_seconds REAL NOT NULL,
      actual_seconds REAL NOT NULL,
      started_at REAL NOT NULL,         -- Unix seconds, UTC
      start_offset INTEGER NOT NULL,    -- seconds east of UTC on the wall clock then
      ended_at REAL NOT NULL,
      end_offset INTEGER NOT NULL,
      outcome TEXT NOT NULL
        CHECK (outcome IN ('completed', 'skipped', 'stopped', 'abandoned')),
      pause_count INTEGER NOT NULL DEFAULT 0,
      paused_seconds REAL NOT NULL DEFAULT 0,
      intention TEXT
    );
    """,
    // 2: away time and distractions (for the X11 monitor), and the local day each phase
    // counts for, indexed: statistics select and group by it without calendar arithmetic.
    """
    ALTER TABLE phases ADD COLUMN away_seconds REAL NOT NULL DEFAULT 0;
    ALTER TABLE phases ADD COLUMN day INTEGER NOT NULL DEFAULT 0;
    -- CAST truncates toward zero, which is floor for every instant after 1970.
    UPDATE phases SET day = CAST((ended_at + end_offset) / 86400 AS INTEGER);
    CREATE INDEX phases_by_day ON phases (day);
    CREATE TABLE distractions (
      id INTEGER PRIMARY KEY,
      phase_id INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
      app_class TEXT NOT NULL,
      seconds REAL NOT NULL,
      title TEXT                        -- only when the person opted in
    );
    CREATE INDEX distractions_by_phase ON distractions (phase_id);
    """,
    // 3: one row per phase. A daemon killed after recording a phase but before saving the
    // session that followed used to record that phase again when it started next. Keep the
    // first row of each phase (the others' distractions move to it), and from now on the
    // database refuses a second row for the same kind of phase starting at the same instant.
    """
    UPDATE distractions SET phase_id = (
      SELECT min(twin.id) FROM phases AS original
      JOIN phases AS twin ON twin.started_at = original.started_at AND twin.kind = original.kind
      WHERE original.id = distractions.phase_id);
    DELETE FROM phases
    WHERE id NOT IN (SELECT min(id) FROM phases GROUP BY started_at, kind);
    CREATE UNIQUE INDEX phases_by_start ON phases (started_at, kind);
    """,
    // 4: focus per local day, one row per day with focus, kept by triggers whoever writes
    // (the daemon adding a phase, grow history editing or deleting one): the day's row is
    // summed again from that day's phases (phases_by_day), so it is exactly what grouping
    // every phase gave. Today's figures and the streaks read these rows instead of grouping
    // the whole history at every phase end and start, which grew with the history.
    """
    CREATE TABLE focus_days (
      day INTEGER PRIMARY KEY,
      completed_seconds REAL NOT NULL,
      completed INTEGER NOT NULL,
      cut_short_seconds REAL NOT NULL
    );
    INSERT INTO focus_days
      SELECT day, total(iif(outcome = 'completed', actual_seconds, 0)),
        sum(outcome = 'completed'), total(iif(outcome = 'completed', 0, actual_seconds))
      FROM phases WHERE kind = 'focus' GROUP BY day;
    CREATE TRIGGER focus_days_after_insert AFTER INSERT ON phases WHEN NEW.kind = 'focus'
    BEGIN
      INSERT OR REPLACE INTO focus_days
        SELECT day, total(iif(outcome = 'completed', actual_seconds, 0)),
          sum(outcome = 'completed'), total(iif(outcome = 'completed', 0, actual_seconds))
        FROM phases WHERE kind = 'focus' AND day = NEW.day GROUP BY day;
    END;
    CREATE TRIGGER focus_days_after_delete AFTER DELETE ON phases WHEN OLD.kind = 'focus'
    BEGIN
      DELETE FROM focus_days WHERE day = OLD.day;
      INSERT INTO focus_days
        SELECT day, total(iif(outcome = 'completed', actual_seconds, 0)),
          sum(outcome = 'completed'), total(iif(outcome = 'completed', 0, actual_seconds))
        FROM phases WHERE kind = 'focus' AND day = OLD.day GROUP BY day;
    END;
    CREATE TRIGGER focus_days_after_update AFTER UPDATE OF kind, outcome, actual_seconds, day
      ON phases WHEN OLD.kind = 'focus' OR NEW.kind = 'focus'
    BEGIN
      DELETE FROM focus_days WHERE day IN (OLD.day, NEW.day);
      INSERT INTO focus_days
        SELECT day, total(iif(outcome = 'completed', actual_seconds, 0)),
          sum(outcome = 'completed'), total(iif(outcome = 'completed', 0, actual_seconds))
        FROM phases WHERE kind = 'focus' AND day IN (OLD.day, NEW.day) GROUP BY day;
    END;
    """,
    // 5: goals a person names ("Pass the calculus exam") and their subgoals, each toward a
    // number of focus hours on a card; progress is read from the phases, never stored.
    """
    CREATE TABLE goals (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      parent_id INTEGER REFERENCES goals (id) ON DELETE CASCADE,
      card TEXT,                        -- whose completed focus counts toward it
      target_seconds REAL,              -- the focus it takes; NULL: no number set
      due_day INTEGER,                  -- a local day, as phases.day; NULL: no date
      created_at REAL NOT NULL,         -- Unix seconds: focus from then on counts
      done_at REAL
    );
    CREATE INDEX goals_by_parent ON goals (parent_id);
    """,
    // 6: the to-do list on a card, and the task each focus was for.
    """
    CREATE TABLE tasks (
      id INTEGER PRIMARY KEY,
      card TEXT NOT NULL,
      text TEXT NOT NULL,
      created_at REAL NOT NULL,
      done_at REAL
    );
    CREATE INDEX tasks_by_card ON tasks (card);
    ALTER TABLE phases ADD COLUMN task_id INTEGER REFERENCES tasks (id) ON DELETE SET NULL;
    CREATE INDEX phases_by_task ON phases (task_id);
    """,
    // 7: the website a distraction was on (the browser extension's report), beside its app.
    """
    ALTER TABLE distractions ADD COLUMN site TEXT;
    """,
    // 8: one history over several machines (docs/sync.md). Each phase has the machine it was
    // grown on ('' for this one) and, once it is in a sync journal, an id every machine knows
    // it by. Two machines may start a phase of the same kind at the same instant, so the
    // one-row-per-phase rule holds per machine. Edits and deletes made anywhere are kept per
    // phase and field with their time and machine, so whichever arrives last in the file
    // system, the latest one (by time, then machine id) wins on every machine.
    """
    ALTER TABLE phases ADD COLUMN uid TEXT;
    ALTER TABLE phases ADD COLUMN machine TEXT NOT NULL DEFAULT '';
    DROP INDEX phases_by_start;
    CREATE UNIQUE INDEX phases_by_start ON phases (started_at, kind, machine);
    CREATE UNIQUE INDEX phases_by_uid ON phases (uid);
    CREATE INDEX phases_by_machine ON phases (machine);
    CREATE TABLE sync_machines (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      last_record_at REAL             -- the end of its latest phase, Unix seconds
    );
    CREATE TABLE sync_changes (
      uid TEXT NOT NULL,
      field TEXT NOT NULL CHECK (field IN ('card', 'outcome', 'deleted')),
      value TEXT NOT NULL,
      at REAL NOT NULL,
      machine TEXT NOT NULL,
      PRIMARY KEY (uid, field)
    );
    CREATE TABLE sync_files (
      name TEXT PRIMARY KEY,          -- a journal in the sync folder
      inode INTEGER NOT NULL,
      offset INTEGER NOT NULL,        -- bytes read so far: every whole line before it
      line INTEGER NOT NULL           -- lines read so far
    );
    """,
    // 9: how far this machine has written its own journal (file and size), so a journal that
    // lost lines it had (a restore from an older backup, a disk that lost its tail) is noticed
    // at the next write and written whole again (SyncFolder.writeNewPhases).
    """
    CREATE TABLE sync_written (
      name TEXT PRIMARY KEY,          -- this machine's journal in the sync folder
      inode INTEGER NOT NULL,
      size INTEGER NOT NULL           -- its size after the last write
    );
    """,
  ]

  static var currentVersion: Int { migrations.count }
}
