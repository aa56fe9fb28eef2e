#!/usr/bin/env bash
# Benchmark: the operator console's live pictures in a real browser (issue 12). Starts a release
# `studio serve --cameras 4 --http 127.0.0.1:PORT` pushing its program to a private nginx-rtmp on
# loopback, then scripts/bench-console.py drives headless chromium (Selenium) against it:
# - camera-to-tile latency: the page reads the cameras' tiles on its own multiplexed stream (as the
#   console does) and takes, for each part, the picture's age as it left the server
#   (`X-Server-Time-Ns` - `X-Capture-Time-Ns`, one clock) plus its time on the way (see bench-console.py);
# - the server's CPU (utime + stime of /proc/PID/stat) and the tile thread's (/metrics) with no browser,
#   with the console page open, and with five browsers (separate chromium sessions) on the page; the
#   program's late ticks and the tile requests in each.
#
# Usage: scripts/bench-console.sh [SECONDS per phase, default 20] [scenes]
#   scenes: with deploy/demo.yaml's scenes (3 scene tiles composed on the tile thread, besides the cameras')
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
config=()
scenes="no scenes"
if [ "${2:-}" = scenes ]; then config=(--config deploy/demo.yaml); scenes="the demo's 3 scenes"; fi
for need in /usr/bin/chromium /usr/bin/chromedriver nginx; do
  command -v "$need" >/dev/null || { echo "bench-console: $need is missing: run scripts/setup.sh" >&2; exit 1; }
done
swift build -c release --product studio 2>&1 | tail -n 1
bin=$(swift build -c release --show-bin-path)/studio

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d /tmp/studio-bench-console.XXXXXX)
rtmp_port=$(free_port)
nginx_pid=$(scripts/nginx-rtmp.sh "$work/nginx" "$rtmp_port")
studio_pid=
cleanup() {
  [ -n "$studio_pid" ] && kill -INT "$studio_pid" 2>/dev/null && wait "$studio_pid" 2>/dev/null
  kill "$nginx_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$rtmp_port) 2>/dev/null && break; sleep 0.1; done

http_port=$(free_port)
"$bin" serve "${config[@]}" --cameras 4 --http "127.0.0.1:$http_port" --rtmp "rtmp://127.0.0.1:$rtmp_port/live/console" \
  --db "$work/studio.db" --socket "$work/studio.sock" >"$work/studio.log" 2>&1 &
studio_pid=$!
url="http://127.0.0.1:$http_port"
for _ in $(seq 100); do curl -sf "$url/api/v1/status" >/dev/null && break; sleep 0.1; done
curl -sf "$url/api/v1/status" >/dev/null || { cat "$work/studio.log" >&2; exit 1; }
sleep 3   # start-up (encoder open, RTMP connect) is not part of the steady state

/usr/bin/python3 scripts/bench-console.py "$url" "$studio_pid" "$seconds" | tee "$work/result.json"
python3 - "$work/result.json" "$seconds" "$(cut -d' ' -f1 /proc/loadavg)" "$scenes" >"$work/table.md" <<'PY'
import json, sys, time
r = json.load(open(sys.argv[1])); seconds, load, scenes = sys.argv[2], sys.argv[3], sys.argv[4]
if "error" in r: sys.exit(f"bench-console: {r['error']}")
l = r["latency"]
rate = lambda phase: " / ".join(str(x) for x in r[phase].get("tile_pictures_per_s_per_page", [])) or "-"
print(f"\n### Console in the browser: 4 cameras 1280x720@30, {scenes}, tiles at 10 a second, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
      f"{seconds} s per phase, load {load}\n")
print(f"Camera-to-tile latency ({l['answers']} parts, {l['distinct_pictures']} distinct pictures): "
      f"**median {l['latency']['median_ms']} ms, p95 {l['latency']['p95_ms']} ms** (age as it left + time on the way; "
      f"max {l['latency']['max_ms']} ms); bound (age + whole trip): median {l['latency_bound']['median_ms']}, p95 {l['latency_bound']['p95_ms']} ms; "
      f"round trip median {l['round_trip']['median_ms']} ms. Target: at most 250 ms.\n")
print("| phase | server CPU, % of one core | tile thread CPU, % | camera tile pictures a second, per page | tile requests | program late ticks |")
print("|---|---|---|---|---|---|")
names = {"idle": "no browser", "page": "1 browser on the console", "latency": "1 browser + latency probe", "browsers5": "5 browsers on the console"}
for phase, name in names.items():
    p = r[phase]
    print(f"| {name} | {p['cpu_percent']} | {p['tile_thread_cpu_percent']} | {rate(phase)} | {p['tile_requests']} | {p['late_ticks']} |")
print(f"\nThe page's cost: {r['page']['cpu_percent'] - r['idle']['cpu_percent']:.1f} % of one core (target: at most 10 %); "
      f"with 5 browsers: {r['browsers5']['cpu_percent'] - r['idle']['cpu_percent']:.1f} %, late ticks {r['browsers5']['late_ticks']} (target: 0).")
PY
cat "$work/table.md"
mkdir -p bench-results
cat "$work/table.md" >>bench-results/latest.md
