-- 0007_history_removed_cameras: the history's views read `camera_removed` (a camera taken out of the show
-- for good while it ran, `CameraHub.remove`; docs/architecture.md). Before, `program_intervals` kept a
-- camera removed on program without a backup on air until the next switch (the program showed its
-- "CAMERA LOST" slate), and `camera_outages` kept the outage of a camera lost before it was removed open
-- until the session's end. `program_intervals` is migration 6's view (its `switches` CTE not materialized,
-- so a filter on session_id reaches `events_by_session_kind`) with the removal and the add read as the
-- switcher acts on them; `camera_outages` is migration 4's with an outage ending at the removal.

DROP VIEW program_intervals;

-- What was on program, interval by interval: one row per source on air, in order (`seq` 1, 2, ...).
-- A `switch` starts an interval of its camera or scene. The camera on program being lost without a backup
-- starts one of the slate (`source` = 'slate', `camera` = the lost camera) at its `camera_lost`, and its
-- `camera_returned` one of the camera again; those two events have no program time of their own, so it is
-- counted from the last switch by the wall clock. So does its `camera_removed` (removed from the show with
-- no backup taken: the switcher shows the slate until the operator cuts elsewhere; when the camera was
-- lost already its slate goes on, and nothing brings it back but a switch, or the camera added again under
-- its name, `camera_added`, which the switcher shows at once as the source it still has on program). A
-- removal that took a backup ends the camera at the backup's switch, and one of a camera not on program
-- changes nothing. `ended_by`: 'cut', 'transition' (then `via` is its kind and `transition_from_ms` its
-- first frame; `to_ms` is its last, the first all of the next source), 'backup' (the source was lost or
-- removed and its backup went on air), 'loss' (lost, no backup: the slate follows), 'removed' (removed from
-- the show, no backup: the slate follows), 'returned' (the slate ends: the lost camera is back), 'added'
-- (the slate ends: the removed camera was added again), 'session end', or NULL while it is still on air.
-- The intervals of a session follow each other without gaps and add up to its `session_program_time`.
CREATE VIEW program_intervals AS
WITH
-- Not materialized: a filter on session_id reaches the events' index in every reference to it.
switches AS NOT MATERIALIZED (
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
-- Losses, returns, removals and adds of the camera on program (the latest switch's camera), with that switch.
marks AS (
    SELECT m.id AS id, m.session_id AS session_id, m.kind AS kind, m.camera AS camera, m.wall_time AS wall_time,
           m.program_ms AS program_ms,
           (SELECT s.id FROM switches s WHERE s.session_id = m.session_id AND s.id < m.id ORDER BY s.id DESC LIMIT 1)
               AS switch_id
    FROM events m
    WHERE m.kind IN ('camera_lost', 'camera_returned', 'camera_removed', 'camera_added') AND m.camera IS NOT NULL
      AND json_extract(m.details, '$.scope') IS NOT 'program'
),
slate_marks AS (
    SELECT k.id AS id, k.session_id AS session_id, k.wall_time AS wall_time,
           coalesce(k.program_ms, s.at_ms + max(0, k.wall_time - s.wall_time)) AS at_ms,
           CASE WHEN k.kind IN ('camera_lost', 'camera_removed') THEN 'slate' ELSE k.camera END AS source,
           CASE WHEN k.kind IN ('camera_lost', 'camera_removed') THEN 'slate' ELSE 'camera' END AS source_kind,
           k.camera AS camera,
           CASE k.kind WHEN 'camera_lost' THEN 'loss' WHEN 'camera_returned' THEN 'returned'
                       WHEN 'camera_removed' THEN 'removed' ELSE 'added' END AS cause,
           NULL AS via, NULL AS transition_from_ms
    FROM marks k
    JOIN switches s ON s.id = k.switch_id
    WHERE s.source_kind = 'camera' AND s.camera = k.camera
      -- A loss that took a backup is the backup's switch, not the slate. The backup was taken while the
      -- camera was on program (after its switch: an older backup of a camera removed and added again is
      -- no backup of this loss) and in the same loss (between its camera's returns).
      AND NOT (k.kind = 'camera_lost' AND EXISTS (
          SELECT 1 FROM events b
          WHERE b.session_id = k.session_id AND b.kind = 'backup_taken' AND b.camera = k.camera AND b.id > s.id
            AND b.id > coalesce((SELECT max(r.id) FROM events r WHERE r.session_id = k.session_id
                                   AND r.kind = 'camera_returned' AND r.camera = k.camera AND r.id < k.id), 0)
            AND b.id < coalesce((SELECT min(r.id) FROM events r WHERE r.session_id = k.session_id
                                   AND r.kind = 'camera_returned' AND r.camera = k.camera AND r.id > k.id), 9223372036854775807)))
      -- So is a removal that took one: the program thread takes the backup on its next frame, so its
      -- `backup_taken` comes before the next switch (its own), and after the camera's switch (it may be
      -- written just before the removal's event, which another thread writes).
      AND NOT (k.kind = 'camera_removed' AND EXISTS (
          SELECT 1 FROM events b
          WHERE b.session_id = k.session_id AND b.kind = 'backup_taken' AND b.camera = k.camera AND b.id > s.id
            AND b.id < coalesce((SELECT min(n.id) FROM switches n WHERE n.session_id = k.session_id AND n.id > k.id),
                                9223372036854775807)))
      -- An add ends the slate of its camera's removal: the latest removal or add of the camera since its
      -- switch is a removal (a camera's first add, written just after the switch it caused, is none).
      AND (k.kind <> 'camera_added' OR (
          SELECT x.kind FROM events x
          WHERE x.session_id = k.session_id AND x.kind IN ('camera_removed', 'camera_added') AND x.camera = k.camera
            AND x.id > s.id AND x.id < k.id
          ORDER BY x.id DESC LIMIT 1) IS 'camera_removed')
),
candidates AS (
    SELECT id, session_id, wall_time, at_ms, source, source_kind, camera, cause, via, transition_from_ms FROM switches
    UNION ALL
    SELECT id, session_id, wall_time, at_ms, source, source_kind, camera, cause, via, transition_from_ms FROM slate_marks
),
-- The slate comes once (at the first loss or removal of its camera's episode); a return only after its
-- camera's loss (never after its removal: only an add brings a removed camera back).
ordered AS (
    SELECT c.*, lag(c.cause) OVER w AS previous_cause, lag(c.camera) OVER w AS previous_camera
    FROM candidates c
    WINDOW w AS (PARTITION BY c.session_id ORDER BY c.id)
),
boundaries AS (
    SELECT o.* FROM ordered o
    WHERE o.cause IN ('cut', 'transition', 'backup')
       OR (o.cause IN ('loss', 'removed')
           AND NOT (o.previous_cause IN ('loss', 'removed') AND o.previous_camera IS o.camera))
       OR (o.cause = 'returned' AND o.previous_cause IS 'loss' AND o.previous_camera IS o.camera)
       OR o.cause = 'added'
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

DROP VIEW camera_outages;

-- Each time a camera was lost, until it came back, was removed from the show (`camera_removed`: it never
-- comes back; a camera added again under its name is a fresh camera) or the session ended. Wall times.
-- `reason`: why it was lost (`removed`: its device went away; `silent`); `back_at`: its return (NULL unless
-- it came back); `duration_ms`: until its return, its removal, the session's end or now; `ended_by`:
-- 'returned', 'removed', 'session end', or NULL while it still is lost.
CREATE VIEW camera_outages AS
WITH marks AS (
    SELECT e.id AS id, e.session_id AS session_id, e.camera AS camera, e.kind AS kind, e.wall_time AS wall_time,
           json_extract(e.details, '$.reason') AS reason,
           lag(e.kind) OVER (PARTITION BY e.session_id, e.camera ORDER BY e.id) AS previous_kind
    FROM events e
    WHERE e.kind IN ('camera_lost', 'camera_returned', 'camera_removed') AND e.camera IS NOT NULL
      AND json_extract(e.details, '$.scope') IS NOT 'program'
)
SELECT l.session_id AS session_id,
       l.camera AS camera,
       l.reason AS reason,
       l.wall_time AS lost_at,
       CASE WHEN r.kind = 'camera_returned' THEN r.wall_time END AS back_at,
       coalesce(r.wall_time, s.ended_at, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)) - l.wall_time
           AS duration_ms,
       CASE WHEN r.kind = 'camera_returned' THEN 'returned' WHEN r.id IS NOT NULL THEN 'removed'
            WHEN s.ended_at IS NULL THEN NULL ELSE 'session end' END AS ended_by,
       l.id AS lost_event_id,
       CASE WHEN r.kind = 'camera_returned' THEN r.id END AS back_event_id
FROM marks l
JOIN sessions s ON s.id = l.session_id
-- The first return or removal after the loss (each looked up by its kind in the index).
LEFT JOIN events r ON r.id = min(
    coalesce((SELECT m.id FROM events m
              WHERE m.session_id = l.session_id AND m.kind = 'camera_returned' AND m.camera = l.camera AND m.id > l.id
              ORDER BY m.id LIMIT 1), 9223372036854775807),
    coalesce((SELECT m.id FROM events m
              WHERE m.session_id = l.session_id AND m.kind = 'camera_removed' AND m.camera = l.camera AND m.id > l.id
              ORDER BY m.id LIMIT 1), 9223372036854775807))
WHERE l.kind = 'camera_lost' AND (l.previous_kind IS NULL OR l.previous_kind IN ('camera_returned', 'camera_removed'));
