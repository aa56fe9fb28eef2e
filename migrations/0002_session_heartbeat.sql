-- 0002_session_heartbeat: a session's last sign of life, so a crashed session's end is known.
-- The store thread sets it at start and then every few seconds (5 s by default) while the session is
-- open; recoverOrphanedSessions ends a crashed session at the later of this and its last event.
-- NULL for sessions written before this migration (they end at their last event, as before).
ALTER TABLE sessions ADD COLUMN heartbeat_at INTEGER;
