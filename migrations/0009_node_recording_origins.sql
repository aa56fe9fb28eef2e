-- 0009_node_recording_origins: where each node ISO file sits on the switcher's time base (issue 32; docs/nodes.md,
-- "One time base"; docs/export.md). The node's `recordings` answer gives, per file, the time origin its
-- Matroska tags carry and the program time of its first packet; `studio export --iso` places the file to the
-- frame from them. NULL for a node too old to answer them: the file is then placed by `started_at` and
-- the node's clock offset, to the millisecond of a database row, not to the frame.

-- STUDIO_ORIGIN_US: the wall-clock time (µs since 1970) of the node's program time 0; a packet at t ms in
-- the file was on the node's program at origin_us + t ms.
ALTER TABLE node_recordings ADD COLUMN origin_us INTEGER;
-- STUDIO_TIME_BASE: 'switcher' (origin_us is on the switcher's clock: the node had measured its offset when
-- the file was opened) or 'node' (on the node's own clock: add node_sessions.clock_offset_us).
ALTER TABLE node_recordings ADD COLUMN time_base TEXT;
-- The program time (ms, the file's own timestamps) of the file's first packet, a video keyframe.
ALTER TABLE node_recordings ADD COLUMN first_program_ms INTEGER;
