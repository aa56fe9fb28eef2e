#!/usr/bin/env bash
# Benchmark (issue 15, decode only what is seen): four MJPEG-only PipeWire virtual cameras at
# 1280x720@30 (like USB webcams), one on program, the others seen by nobody, captured by studio into a
# 1280x720@30 program (x264 ultrafast, pushed over RTMP to a private nginx). Three runs of the same job,
# alternating:
#   - idle:  the default, nobody watching the console: the camera on program decoded at full size and
#     rate, the three others not at all (their JPEGs counted and kept);
#   - tiles: the default, with the console's cam2 tile watched (curl reading its live stream): the
#     three others at 1/4 size (320x180, the tiles' width) and at most ~10 pictures a second;
#   - full:  STUDIO_DECODE=full in studio's environment: every camera decoded at full size and rate
#     (what OBS does).
# Measured: the CPU of studio's capture threads (cap.camN: they decode; per-thread utime + stime from
# /proc/PID/task/*/stat) per second of wall time, over a steady window after start-up, and studio's
# whole CPU. The virtual cameras' own CPU (their MJPEG encoders) is reported apart, not counted.
#
# Usage: scripts/bench-decode-demand.sh [SECONDS per run, default 20] [ROUNDS, default 2]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera
bin=$binpath/studio
bench_rig decode
for n in 1 2 3 4; do
  "$binpath/pw-virtual-camera" --node "vcam$n" --camera "cam$n" --size 1280x720 --rate 30 --format mjpeg >"$work/vcam$n.log" 2>&1 &
  producer_pids+=($!)
done
sleep 1

# measure NAME SECONDS ENV CMD...: studio's CPU s/s, its cap.* threads' CPU s/s, peak RSS, the producers' CPU s/s,
# and the decode counters of `studio cameras --json` at the end.
measure() {
  local name=$1 duration=$2 decode=$3
  shift 3
  STUDIO_DECODE=$decode "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 4   # start-up: connect, link, encoder open, the first cut
  local s0 s1 p0 p1 t0 t1 w0 w1
  s0=$(cpu_ticks "$pid"); p0=$(cpu_ticks "${producer_pids[@]}"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  sleep "$duration"
  s1=$(cpu_ticks "$pid"); p1=$(cpu_ticks "${producer_pids[@]}"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  local rss; rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  local counters; counters=$("$bin" cameras --json --socket "$work/studio.sock" | python3 -c '
import json, sys
cams = json.load(sys.stdin)["cameras"]
print(",".join("%s=%d/%d/%d" % (c["name"], c["decode"]["full"], c["decode"]["reduced"], c["decode"]["skipped"])
               for c in cams if c.get("decode")))')
  kill -INT "$pid"
  wait "$pid" || true
  python3 - "$name" "$s0" "$s1" "$p0" "$p1" "$t0" "$t1" "$w0" "$w1" "$rss" "$ticks" "$counters" <<'PY'
import sys, collections
name, s0, s1, p0, p1, t0, t1, w0, w1, rss, ticks, counters = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
wall = float(w1) - float(w0); hz = int(ticks)
def rate(a, b): return sum(b[k] - a[k] for k in a if k in b) / hz / wall
threads0, threads1 = parse(t0), parse(t1)
capture = sum(threads1[k] - threads0[k] for k in threads0 if k.startswith("cap.")) / hz / wall
print(f"{name} {rate(parse(s0), parse(s1)):.3f} {capture:.3f} {int(rss) / 1024:.1f} {rate(parse(p0), parse(p1)):.3f} {counters}")
PY
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
results=()
for round in $(seq "$rounds"); do
  for mode in idle tiles full; do
    rm -f "$work/bench.db"*
    watcher=
    if [ "$mode" = tiles ]; then
      # The console's cam2 tile watched for the whole run, as a browser's multiview would.
      (sleep 2; exec curl -s -N -o /dev/null "http://127.0.0.1:$port/api/v1/tiles/cam2/stream") &
      watcher=$!
    fi
    results+=("$(measure "$mode" "$seconds" "$([ "$mode" = full ] && echo full || echo demand)" "$bin" serve --backends pipewire \
        --rtmp "$url/$mode" --program 1280x720@30 --preset ultrafast --bitrate 3000k --no-iso --http "127.0.0.1:$port" \
        --db "$work/bench.db" --socket "$work/studio.sock")")
    if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; fi
  done
done

mkdir -p bench-results
python3 - "$seconds" "$rounds" "${results[@]}" <<'PY' | tee -a bench-results/latest.md
import sys, statistics
sys.path.insert(0, "scripts")
from bench_report import grouped, heading, median
seconds, rounds, *rows = sys.argv[1:]
by = grouped(rows, columns=4)
counters = {row.split()[0]: (row.split()[5] if len(row.split()) > 5 else "") for row in rows}
print(heading("Decode only what is seen", seconds, rounds))
print("| run | capture threads (cap.*) CPU s/s (median) | studio CPU s/s (median) | peak RSS MiB (max) | virtual cameras CPU s/s | decodes full/reduced/skipped per camera (last run) |")
print("|---|---|---|---|---|---|")
for name, values in by.items():
    med = lambda i: statistics.median(v[i] for v in values)
    print(f"| {name} | {med(1):.3f} | {med(0):.3f} | {max(v[2] for v in values):.1f} | {med(3):.3f} | {counters[name]} |")
full = median(by, "full", 1)
for name in ("idle", "tiles"):
    print(f"\nCapture threads' CPU, {name} / everything decoded at full size: **{median(by, name, 1) / full:.2f}**")
PY
