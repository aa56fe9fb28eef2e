#!/usr/bin/env bash
# Benchmark (issue 14): how fast the event database grows under a busy show, and how fast the history's
# queries answer on a large history.
#
# 1. A real busy show: three PipeWire cameras (pw-virtual-camera on a private headless daemon), the program
#    pushed to a private nginx-rtmp and recorded; a cut every second (every tenth a mix), one camera killed
#    and started again every 20 s, nginx stopped for 10 s every 30 s (the output reconnects). After it, the
#    bytes the session's events take in the file (SQLite's dbstat: the events table and its indexes,
#    shared by the session's share of rows), per kind, extrapolated to an hour.
# 2. A generated history of 1,000 sessions and 1,000,000 events (SQL, in the same schema) and the time of
#    `studio log --kind ... --since ...` and `studio onair` on it (the real binary, no server: process
#    start, opening the database, the query, printing), against the sqlite3 CLI running the same SQL.
#
# Usage: scripts/bench-history.sh [SECONDS of show, default 60] [BUILD DIR, default .build/debug]
# (.build/release after `swift build -c release --product X` for X in studio, StudioEngine (`serve` runs in
# it) and pw-virtual-camera, for the numbers docs/benchmarks.md states for a release build)
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bin=${2:-.build/debug}
studio=$bin/studio
[ -x "$studio" ] && [ -x "$bin/pw-virtual-camera" ] && [ -f "$bin/libStudioEngine.so" ] ||
  { echo "build first: swift build (studio, libStudioEngine.so, pw-virtual-camera in $bin)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 CLI (scripts/setup.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/studio-bench-history.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR="$work/run" PIPEWIRE_REMOTE="$work/run/pipewire-0"
pids=()
nginx_pid=
declare -A camera_pids
cleanup() {
  for p in "${pids[@]}" "${camera_pids[@]}" $nginx_pid; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
pipewire -c "$PWD/deploy/pipewire-test.conf" >"$work/pipewire.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$PIPEWIRE_REMOTE" ] && break; sleep 0.1; done
start_nginx() {
  nginx_pid=$(scripts/nginx-rtmp.sh "$work/nginx" "$port")
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
}
start_camera() {
  "$bin/pw-virtual-camera" --node "vcam$1" --camera "cam$1" --size 640x480 --rate 30 --format yuy2 >>"$work/vcam$1.log" 2>&1 &
  camera_pids[$1]=$!
}
start_nginx
for n in 1 2 3; do start_camera $n; done
sleep 1

db=$work/studio.db
socket=$work/studio.sock
"$studio" serve --backends pipewire --no-http --db "$db" --socket "$socket" --record "$work/recordings" --no-iso \
  --rtmp "rtmp://127.0.0.1:$port/live/bench" --program 640x360@30 --preset ultrafast --bitrate 1500k >"$work/studio.log" 2>&1 &
server=$!
pids+=($server)
for _ in $(seq 150); do "$studio" status --socket "$socket" >/dev/null 2>&1 && break; sleep 0.1; done
for _ in $(seq 100); do
  [ "$("$studio" cameras --json --socket "$socket" | grep -o '"state":"live"' | wc -l)" -ge 3 ] && break; sleep 0.1
done

# The show: a cut every second (a mix every tenth), vcam3 (whichever camera studio named it) lost for 5 s every
# 20 s, nginx away for 10 s every 30 s.
for i in $(seq 1 "$seconds"); do
  cam="cam$(( (i % 3) + 1 ))"
  if (( i % 10 == 0 )); then
    "$studio" preview "$cam" --socket "$socket" >/dev/null && "$studio" auto mix --frames 15 --socket "$socket" >/dev/null || true
  else
    "$studio" switch "$cam" --socket "$socket" >/dev/null || true
  fi
  (( i % 20 == 5 )) && { kill "${camera_pids[3]}" 2>/dev/null || true; }
  (( i % 20 == 10 )) && start_camera 3
  (( i % 30 == 12 )) && { kill "$nginx_pid" 2>/dev/null || true; }
  (( i % 30 == 22 )) && start_nginx
  sleep 1
done
kill -INT "$server"
wait "$server" || true
session=$(sqlite3 "$db" "SELECT max(id) FROM sessions")
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null

# Bytes of the session's events: the events table's and its indexes' pages (dbstat), by the session's
# share of the rows (one session in this file, so all of it), and each kind's share by its rows' bytes.
# Used bytes (page size minus the unused part), so a short show is not rounded up to whole pages.
read -r events table_bytes index_bytes <<<"$(sqlite3 -separator ' ' "$db" "
  SELECT (SELECT count(*) FROM events WHERE session_id = $session),
         (SELECT sum(pgsize - unused) FROM dbstat WHERE name = 'events'),
         (SELECT sum(pgsize - unused) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'))")"
wall_seconds=$(sqlite3 "$db" "SELECT (ended_at - started_at) / 1000.0 FROM sessions WHERE id = $session")
per_hour=$(python3 -c "print(round(($table_bytes + $index_bytes) * 3600 / $wall_seconds))")
by_kind=$(sqlite3 -separator ' ' "$db" "
  SELECT kind, count(*), sum(length(details) + length(kind) + coalesce(length(camera), 0) + 24) FROM events
  WHERE session_id = $session GROUP BY kind ORDER BY 3 DESC")
switches=$(sqlite3 "$db" "SELECT count(*) FROM events WHERE session_id = $session AND kind = 'switch'")
# The show's timeline, as `studio report` draws it (docs/history-timeline.svg is one of these).
mkdir -p bench-results
"$studio" report "$session" --db "$db" --svg bench-results/history-timeline.svg >bench-results/history-report.txt
command -v rsvg-convert >/dev/null && "$studio" report "$session" --db "$db" --png bench-results/history-timeline.png >/dev/null

# 2. A large history: 1,000 sessions of 1,000 events each, in a copy of the show's database (same schema).
big=$work/big.db
sqlite3 "$db" ".backup '$big'"
now_ms=$(( $(date +%s) * 1000 ))
sqlite3 "$big" "
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000)
INSERT INTO sessions (started_at, ended_at, end_reason, config_snapshot, hostname, pid)
SELECT $now_ms - (1001 - n) * 3600000, $now_ms - (1001 - n) * 3600000 + 1000000, 'stopped', '{}', 'bench', n FROM s;
WITH RECURSIVE e(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM e WHERE n < 999),
     sess AS (SELECT id, started_at FROM sessions WHERE hostname = 'bench')
INSERT INTO events (session_id, wall_time, program_ms, kind, camera, details)
SELECT sess.id, sess.started_at + e.n * 1000,
       CASE WHEN e.n % 50 IN (17, 18) OR e.n % 10 = 9 THEN NULL ELSE e.n * 1000 END,
       CASE WHEN e.n % 50 = 17 THEN 'camera_lost' WHEN e.n % 50 = 18 THEN 'camera_returned'
            WHEN e.n % 10 = 9 THEN 'frames_dropped' ELSE 'switch' END,
       CASE WHEN e.n % 10 = 9 THEN NULL ELSE 'cam' || (e.n % 4 + 1) END,
       CASE WHEN e.n % 50 = 17 THEN '{\"reason\":\"removed\"}' WHEN e.n % 50 = 18 THEN '{\"reason\":\"reappeared\"}'
            WHEN e.n % 10 = 9 THEN '{\"stage\":\"video\",\"reason\":\"encoder queue full\",\"dropped\":\"3\",\"dropped_total\":\"9\"}'
            ELSE '{\"from\":\"cam' || ((e.n + 3) % 4 + 1) || '\"}' END
FROM sess, e;
COMMIT;
ANALYZE;" >/dev/null
middle=$(sqlite3 "$big" "SELECT id FROM sessions WHERE hostname = 'bench' ORDER BY id LIMIT 1 OFFSET 500")
since_ms=$(( now_ms - 7 * 86400000 ))

# Median of 5 runs, in ms, of a command; a run that fails stops the benchmark (set -e: the assignment
# of a failed substitution) instead of timing its error.
median_ms() {
  local times=()
  for _ in 1 2 3 4 5; do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null || { echo "bench-history: $* failed" >&2; return 1; }
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
# The SQL `studio log` runs for these filters (StoreWorker+History.swift: no --limit, so no subquery).
log_sql="SELECT id, session_id, kind, camera, wall_time, program_ms, details FROM events WHERE likelihood(kind IN ('camera_lost'), 0.01) AND camera = 'cam2' AND wall_time >= $since_ms ORDER BY id"
onair_sql="SELECT session_id, seq, source, source_kind, camera, from_ms, to_ms, duration_ms, ended_by, via, transition_from_ms FROM program_intervals WHERE session_id = $middle ORDER BY seq"
log_studio=$(median_ms "$studio" log --kind camera_lost --camera cam2 --since -7d --db "$big" --json)
log_sqlite=$(median_ms sqlite3 "$big" "$log_sql")
onair_studio=$(median_ms "$studio" onair "$middle" --db "$big" --json)
onair_sqlite=$(median_ms sqlite3 "$big" "$onair_sql")
# The other questions of docs/history.md, on the same session (no sqlite3 line: each runs several queries).
at_studio=$(median_ms "$studio" onair "$middle" --at 00:08:20 --db "$big" --json)
range_studio=$(median_ms "$studio" log "$middle" --from 00:05:00 --to 00:06:00 --kind switch --db "$big" --json)
sessions_studio=$(median_ms "$studio" sessions --since -7d --ended stopped --db "$big" --json)
report_studio=$(median_ms "$studio" report "$middle" --db "$big" --json)
export_studio=$(median_ms "$studio" export "$middle" --format csv --db "$big")
start_studio=$(median_ms "$studio" version)
start_sqlite=$(median_ms sqlite3 "$big" "SELECT 1")
big_events=$(sqlite3 "$big" "SELECT count(*) FROM events")
big_bytes=$(stat -c %s "$big")
log_rows=$(sqlite3 "$big" "SELECT count(*) FROM ($log_sql)")
plan=$(sqlite3 "$big" "EXPLAIN QUERY PLAN $log_sql" | sed 's/^/    /')

report=$(cat <<EOF
### History: database growth under a busy show, and query times ($(date -u +%Y-%m-%d), $(nproc) cores, $bin)

Show: ${wall_seconds} s, $switches switches, one camera lost and back every 20 s, the RTMP output away 10 s every 30 s.
Session $session: $events events; the events table $table_bytes bytes + its indexes $index_bytes bytes (used, dbstat)
= **$per_hour bytes per hour** of such a show.

| kind | rows | approx. bytes (row payload) |
|---|---|---|
$(echo "$by_kind" | awk '{ printf "| %s | %s | %s |\n", $1, $2, $3 }')

Large history: $big_events events in $(sqlite3 "$big" "SELECT count(*) FROM sessions") sessions, $big_bytes bytes. Median of 5 runs, whole
process (start, open, query, print):

| question | studio | sqlite3 CLI, same SQL |
|---|---|---|
| \`studio log --kind camera_lost --camera cam2 --since -7d\` ($log_rows events) | $log_studio ms | $log_sqlite ms |
| \`studio onair $middle\` (program_intervals of one session of 1,000 events) | $onair_studio ms | $onair_sqlite ms |
| \`studio onair $middle --at 00:08:20\` | $at_studio ms | |
| \`studio log $middle --from 00:05:00 --to 00:06:00 --kind switch\` | $range_studio ms | |
| \`studio sessions --since -7d --ended stopped\` | $sessions_studio ms | |
| \`studio report $middle\` (duration, ends, switches, losses, outputs, recordings) | $report_studio ms | |
| \`studio export $middle --format csv\` (the cut list of 1,000 events; the generated sessions have no recording for an EDL) | $export_studio ms | |
| process start alone (\`studio version\`; sqlite3: \`SELECT 1\`) | $start_studio ms | $start_sqlite ms |

Plan of the log query:

$plan
EOF
)
echo "$report"
mkdir -p bench-results
printf '%s\n\n' "$report" >> bench-results/latest.md
