-- 0008_node_recordings: what a switcher's session knows of its capture nodes' own history (issue 32;
-- docs/nodes.md, "One history for the editor"). The switcher asks each node's HTTP API (network.srt.nodes'
-- `api` and `token`) for its current session and its recordings when a node camera connects, while the
-- node's cameras are there, and when the switcher's session ends, and keeps the answer here.

-- Each node as the switcher's session last asked it: one row per node.
CREATE TABLE node_sessions (
    session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    node         TEXT NOT NULL,
    -- The node's own session id (its database's); NULL while the node never answered.
    node_session INTEGER,
    -- 'answered'; 'unreachable' (no answer, a refused token...: `reason` says); 'unknown' (no `api` configured).
    state        TEXT NOT NULL CHECK (state IN ('answered', 'unreachable', 'unknown')),
    reason       TEXT,
    asked_at     INTEGER NOT NULL,
    -- The node's clock against this switcher's, as the node measured it (its `switcher_clock`): microseconds
    -- to add to the node's times (its files' started_at) to read them on this switcher's clock; NULL while
    -- the node has not measured it.
    clock_offset_us INTEGER,
    PRIMARY KEY (session_id, node)
);

-- The node's recording files, as its `recordings` answered them: one row per file of each node session
-- seen during the switcher's session (a node that restarted brings a second session's files).
CREATE TABLE node_recordings (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    node         TEXT NOT NULL,
    node_session INTEGER NOT NULL,
    -- `program` or the camera's name on the node (`cam1`; the switcher's `pc2/cam1`).
    camera       TEXT NOT NULL,
    -- `program` or `iso`.
    kind         TEXT NOT NULL,
    -- The file's path on the node's disk.
    path         TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    bytes        INTEGER,
    UNIQUE (session_id, node, node_session, path)
);
CREATE INDEX node_recordings_by_session ON node_recordings(session_id);
