-- 0005_audio_inputs: stable names for the audio mixer's inputs, as `cameras` keeps them for cameras: a
-- PipeWire Audio/Source's identity (`pipewire:` + node.name, plus its device's serial or bus path when
-- it has one) gets `mic1`, `mic2`... the first time it is seen and keeps it across restarts; a pin in
-- the config (`audio.inputs[].match`) wins, and the input that had that name moves to the lowest free
-- `micN`.
CREATE TABLE audio_inputs (
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    first_seen INTEGER NOT NULL,   -- wall time, ms since the Unix epoch
    last_seen INTEGER NOT NULL
);

-- Each session's program loudness, from the mixer's meters when the session stops: its integrated
-- loudness (EBU R128 I, LUFS, gated) and its highest sample (dBFS). NULL for sessions that stopped
-- before this migration, that crashed, or whose program was silence (nothing to measure).
ALTER TABLE sessions ADD COLUMN integrated_lufs REAL;
ALTER TABLE sessions ADD COLUMN peak_dbfs REAL;
