-- 0003_recording_bytes: a recording file's size when it was closed (NULL while it is written, and for
-- rows from before this migration, or of a server that was killed).
ALTER TABLE recordings ADD COLUMN bytes INTEGER;
