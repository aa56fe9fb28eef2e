-- 0004_history_views: views that answer the common questions about past sessions, for `studio onair` (and
-- the commands that come after it) and for anyone using `sqlite3 studio.db` directly (docs/schema.md).
-- Nothing is stored: every view is computed from `events` and `sessions` when read.
-- Times: `*_ms` columns are program time (the FLV timestamp clock, as `events.program_ms`); `*_at` columns
-- are wall time (ms since the Unix epoch, as `events.wall_time`). An open session ends "now".

-- How far each session's program ran: from its first `switch` (the first source on program) to its end.
-- The end is the session's `ended_at` (now while open) in program time, counted from the last `switch`
-- (program time runs with the wall clock), and never before the latest `program_ms` of any of its events.
-- Sessions without a switch (nothing was ever on program) have no row.
CREATE VIEW session_program_time AS
WITH anchors AS (
    SELECT s.id AS session_id, s.ended_at AS ended_at,
           (SELECT e.id FROM events e WHERE e.session_id = s.id AND e.kind = 'switch' AND e.program_ms IS NOT NULL
             ORDER BY e.id LIMIT 1) AS first_id,
           (SELECT e.id FROM events e WHERE e.session_id = s.id AND e.kind = 'switch' AND e.program_ms IS NOT NULL
             ORDER BY e.id DESC LIMIT 1) AS last_id,
           (SELECT max(e.program_ms) FROM events e WHERE e.session_id = s.id) AS max_ms
    FROM sessions s
)
SELECT a.session_id AS session_id,
       f.program_ms AS from_ms,
       max(a.max_ms, l.program_ms + max(0, coalesce(a.ended_at, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER))
                                          - l.wall_time)) AS to_ms,
       a.ended_at IS NULL AS is_open
FROM anchors a
JOIN events f ON f.id = a.first_id
JOIN events l ON l.id = a.last_id;

-- What was on program, interval by interval: one row per source on air, in order (`seq` 1, 2, ...).
-- A `switch` starts an interval of its camera or scene. The camera on program being lost without a backup
-- starts one of the slate (`source` = 'slate', `camera` = the lost camera) at its `camera_lost`, and its
-- `camera_returned` one of the camera again; those two events have no program time of their own, so it is
-- counted from the last switch by the wall clock. `ended_by`: 'cut', 'transition' (then `via` is its kind
-- and `transition_from_ms` its first frame; `to_ms` is its last, the first all of the next source),
-- 'backup' (the source was lost and its backup went on air), 'loss' (lost, no backup: the slate follows),
-- 'returned' (the slate ends: the lost camera is back), 'session end', or NULL while it is still on air.
-- The intervals of a session follow each other without gaps and add up to its `session_program_time`.
CREATE VIEW program_intervals AS
WITH
switches AS (
    SELECT e.id AS id, e.session_id AS session_id, e.wall_time AS wall_time, e.program_ms AS at_ms,
           coalesce(json_extract(e.details, '$.scene'), e.camera) AS source,
           CASE WHEN json_extract(e.details, '$.scene') IS NOT NULL THEN 'scene' ELSE 'camera' END AS source_kind,
           e.camera AS camera,
           CASE WHEN json_extract(e.details, '$.reason') = 'backup' THEN 'backup'
                WHEN json_extract(e.details, '$.via') IS NOT NULL THEN 'transition'
                ELSE 'cut' END AS cause,
           json_extract(e.details, '$.via') AS via,
           CASE WHEN json_extract(e.details, '$.via') IS NOT NULL THEN
               (SELECT t.program_ms FROM events t WHERE t.session_id = e.session_id AND t.kind = 'transition_started'
                  AND t.id < e.id ORDER BY t.id DESC LIMIT 1) END AS transition_from_ms
    FROM events e
    WHERE e.kind = 'switch' AND e.program_ms IS NOT NULL
),
-- Losses and returns of the camera on program (the latest switch's camera), with that switch.
marks AS (
    SELECT m.id AS id, m.session_id AS session_id, m.kind AS kind, m.camera AS camera, m.wall_time AS wall_time,
           m.program_ms AS program_ms,
           (SELECT s.id FROM switches s WHERE s.session_id = m.session_id AND s.id < m.id ORDER BY s.id DESC LIMIT 1)
               AS switch_id
    FROM events m
    WHERE m.kind IN ('camera_lost', 'camera_returned') AND m.camera IS NOT NULL
      AND json_extract(m.details, '$.scope') IS NOT 'program'
),
slate_marks AS (
    SELECT k.id AS id, k.session_id AS session_id, k.wall_time AS wall_time,
           coalesce(k.program_ms, s.at_ms + max(0, k.wall_time - s.wall_time)) AS at_ms,
           CASE k.kind WHEN 'camera_lost' THEN 'slate' ELSE k.camera END AS source,
           CASE k.kind WHEN 'camera_lost' THEN 'slate' ELSE 'camera' END AS source_kind,
           k.camera AS camera,
           CASE k.kind WHEN 'camera_lost' THEN 'loss' ELSE 'returned' END AS cause,
           NULL AS via, NULL AS transition_from_ms
    FROM marks k
    JOIN switches s ON s.id = k.switch_id
    WHERE s.source_kind = 'camera' AND s.camera = k.camera
      -- A loss that took a backup is the backup's switch, not the slate.
      AND NOT (k.kind = 'camera_lost' AND EXISTS (
          SELECT 1 FROM events b
          WHERE b.session_id = k.session_id AND b.kind = 'backup_taken' AND b.camera = k.camera
            AND b.id > coalesce((SELECT max(r.id) FROM events r WHERE r.session_id = k.session_id
                                   AND r.kind = 'camera_returned' AND r.camera = k.camera AND r.id < k.id), 0)
            AND b.id < coalesce((SELECT min(r.id) FROM events r WHERE r.session_id = k.session_id
                                   AND r.kind = 'camera_returned' AND r.camera = k.camera AND r.id > k.id), 9223372036854775807)))
),
candidates AS (
    SELECT id, session_id, wall_time, at_ms, source, source_kind, camera, cause, via, transition_from_ms FROM switches
    UNION ALL
    SELECT id, session_id, wall_time, at_ms, source, source_kind, camera, cause, via, transition_from_ms FROM slate_marks
),
-- A loss counts once (the first of its camera's episode); a return only after its camera's loss.
ordered AS (
    SELECT c.*, lag(c.cause) OVER w AS previous_cause, lag(c.camera) OVER w AS previous_camera
    FROM candidates c
    WINDOW w AS (PARTITION BY c.session_id ORDER BY c.id)
),
boundaries AS (
    SELECT o.* FROM ordered o
    WHERE o.cause IN ('cut', 'transition', 'backup')
       OR (o.cause = 'loss' AND NOT (o.previous_cause IS 'loss' AND o.previous_camera IS o.camera))
       OR (o.cause = 'returned' AND o.previous_cause IS 'loss' AND o.previous_camera IS o.camera)
),
sequenced AS (
    SELECT b.session_id AS session_id, b.id AS id, b.source AS source, b.source_kind AS source_kind, b.camera AS camera,
           -- Program time never runs backwards: a wall-clock estimate is kept at or after what came before.
           max(b.at_ms) OVER w AS at_ms,
           row_number() OVER w AS seq,
           lead(b.id) OVER w AS next_id,
           lead(b.cause) OVER w AS next_cause,
           lead(b.via) OVER w AS next_via,
           lead(b.transition_from_ms) OVER w AS next_transition_from_ms
    FROM boundaries b
    WINDOW w AS (PARTITION BY b.session_id ORDER BY b.id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
ends AS (
    SELECT q.*, lead(q.at_ms) OVER (PARTITION BY q.session_id ORDER BY q.id) AS next_ms
    FROM sequenced q
)
SELECT n.session_id AS session_id,
       n.seq AS seq,
       n.source AS source,
       n.source_kind AS source_kind,
       n.camera AS camera,
       n.at_ms AS from_ms,
       max(n.at_ms, coalesce(n.next_ms, p.to_ms)) AS to_ms,
       max(n.at_ms, coalesce(n.next_ms, p.to_ms)) - n.at_ms AS duration_ms,
       CASE WHEN n.next_id IS NOT NULL THEN n.next_cause WHEN p.is_open THEN NULL ELSE 'session end' END AS ended_by,
       n.next_via AS via,
       n.next_transition_from_ms AS transition_from_ms,
       n.id AS start_event_id,
       n.next_id AS end_event_id
FROM ends n
JOIN session_program_time p ON p.session_id = n.session_id;

-- Each time a camera was lost, until it came back (or the session ended). Wall times. `reason`: why it
-- was lost (`removed`, `silent`); `ended_by`: 'returned', 'session end', or NULL while it still is lost.
CREATE VIEW camera_outages AS
WITH marks AS (
    SELECT e.id AS id, e.session_id AS session_id, e.camera AS camera, e.kind AS kind, e.wall_time AS wall_time,
           json_extract(e.details, '$.reason') AS reason,
           lag(e.kind) OVER (PARTITION BY e.session_id, e.camera ORDER BY e.id) AS previous_kind
    FROM events e
    WHERE e.kind IN ('camera_lost', 'camera_returned') AND e.camera IS NOT NULL
      AND json_extract(e.details, '$.scope') IS NOT 'program'
)
SELECT l.session_id AS session_id,
       l.camera AS camera,
       l.reason AS reason,
       l.wall_time AS lost_at,
       r.wall_time AS back_at,
       coalesce(r.wall_time, s.ended_at, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)) - l.wall_time
           AS duration_ms,
       CASE WHEN r.id IS NOT NULL THEN 'returned' WHEN s.ended_at IS NULL THEN NULL ELSE 'session end' END AS ended_by,
       l.id AS lost_event_id,
       r.id AS back_event_id
FROM marks l
JOIN sessions s ON s.id = l.session_id
LEFT JOIN events r ON r.id = (
    SELECT m.id FROM events m
    WHERE m.session_id = l.session_id AND m.kind = 'camera_returned' AND m.camera = l.camera AND m.id > l.id
    ORDER BY m.id LIMIT 1)
WHERE l.kind = 'camera_lost' AND (l.previous_kind IS NULL OR l.previous_kind = 'camera_returned');

-- Each time an output lost its connection (`output_disconnected`), until it was connected again
-- (`output_connected` or `output_reconnected`) or the session ended. Wall times, and the program times of
-- the failed packet and of the first keyframe sent again. `attempts`: reconnect attempts in between.
CREATE VIEW output_outages AS
WITH marks AS (
    SELECT e.id AS id, e.session_id AS session_id, json_extract(e.details, '$.output') AS output, e.kind AS kind,
           e.wall_time AS wall_time, e.program_ms AS program_ms, json_extract(e.details, '$.error') AS error,
           lag(e.kind) OVER (PARTITION BY e.session_id, json_extract(e.details, '$.output') ORDER BY e.id) AS previous_kind
    FROM events e
    WHERE e.kind IN ('output_disconnected', 'output_connected', 'output_reconnected')
)
SELECT d.session_id AS session_id,
       d.output AS output,
       d.error AS error,
       d.wall_time AS down_at,
       u.wall_time AS up_at,
       coalesce(u.wall_time, s.ended_at, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)) - d.wall_time
           AS duration_ms,
       d.program_ms AS down_program_ms,
       u.program_ms AS up_program_ms,
       CASE WHEN u.id IS NOT NULL THEN 'reconnected' WHEN s.ended_at IS NULL THEN NULL ELSE 'session end' END AS ended_by,
       (SELECT count(*) FROM events a
         WHERE a.session_id = d.session_id AND a.kind = 'output_reconnect_attempt'
           AND json_extract(a.details, '$.output') = d.output AND a.id > d.id
           AND a.id < coalesce(u.id, 9223372036854775807)) AS attempts,
       d.id AS down_event_id,
       u.id AS up_event_id
FROM marks d
JOIN sessions s ON s.id = d.session_id
LEFT JOIN events u ON u.id = (
    SELECT m.id FROM events m
    WHERE m.session_id = d.session_id AND m.kind IN ('output_connected', 'output_reconnected')
      AND json_extract(m.details, '$.output') = d.output AND m.id > d.id
    ORDER BY m.id LIMIT 1)
WHERE d.kind = 'output_disconnected' AND (d.previous_kind IS NULL OR d.previous_kind <> 'output_disconnected');
