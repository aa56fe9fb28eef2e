-- 0001_initial: the first schema of the studio event store.
-- Landed migrations are never edited: change the schema with a new file (0002_..., 0003_...).
-- Times are INTEGER milliseconds since the Unix epoch (UTC); the Swift API returns them as Date.

-- One run of the server, from start to stop (or crash).
CREATE TABLE sessions (
    id              INTEGER PRIMARY KEY,
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    -- 'stopped' (clean stop), 'crashed' (found open after the process died), 'error' (fatal error);
    -- free text so later versions can add reasons, but never empty.
    end_reason      TEXT CHECK (end_reason IS NULL OR length(end_reason) > 0),
    -- The effective configuration at start, as JSON (stream keys masked).
    config_snapshot TEXT NOT NULL CHECK (json_valid(config_snapshot)),
    hostname        TEXT NOT NULL,
    pid             INTEGER NOT NULL,
    -- /proc/sys/kernel/random/boot_id and the process start time (clock ticks after boot, field 22 of
    -- /proc/PID/stat): together with pid they tell whether the writing process is still alive.
    boot_id         TEXT,
    process_start   INTEGER,
    CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);
CREATE INDEX sessions_open ON sessions(ended_at) WHERE ended_at IS NULL;

-- Every camera ever seen, with its stable operator-facing name (cam1, cam2...).
CREATE TABLE cameras (
    id           INTEGER PRIMARY KEY,
    -- Stable identity of the device (for V4L2 the by-id path or bus info, for test patterns the
    -- configured id): the same device gets the same name across restarts.
    identity     TEXT NOT NULL UNIQUE CHECK (length(identity) > 0),
    name         TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    backend      TEXT NOT NULL,
    display_name TEXT NOT NULL,
    first_seen   INTEGER NOT NULL,
    last_seen    INTEGER NOT NULL
);

-- What happened during a session, in the order it was recorded.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    wall_time  INTEGER NOT NULL,
    -- Program timeline in milliseconds (the FLV timestamp clock), where the event has one.
    program_ms INTEGER,
    kind       TEXT NOT NULL CHECK (length(kind) > 0),
    -- Camera name at the time of the event (not a foreign key: names can be reassigned by pinning).
    camera     TEXT,
    -- JSON object of string values.
    details    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details))
);
CREATE INDEX events_by_session ON events(session_id);
CREATE INDEX events_by_session_kind ON events(session_id, kind);

-- Local recordings (program or one camera's ISO feed).
CREATE TABLE recordings (
    id         INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    -- NULL for the program feed, else the camera name at the time.
    camera     TEXT,
    path       TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER
);
CREATE INDEX recordings_by_session ON recordings(session_id);
