#!/usr/bin/env bash
# Benchmark (issue 3): three PipeWire cameras at 640x480@30 captured into a 1280x720@30 program
# (x264 veryfast 4500k, AAC from a PipeWire microphone) pushed over RTMP, against the same job with three
# test-pattern cameras of the same size (no PipeWire): the difference is what PipeWire capture costs.
#
# A private headless PipeWire daemon (deploy/pipewire-test.conf, own XDG_RUNTIME_DIR) and three
# pw-virtual-camera producers (I420, NV12, YUY2) run beside studio; their CPU is reported on its own,
# not counted as studio's. For studio it also reports the CPU of its capture threads (pw.*: the
# PipeWire loops that copy frames; cap.*: the camera and microphone threads, which for test-pattern
# cameras also render the pictures) against its encoder threads (encode.* and x264's workers).
#
# Usage: scripts/bench-pipewire.sh [SECONDS per run, default 20] [ROUNDS, default 2]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera
bin=$binpath/studio
bench_rig pw
formats=(i420 nv12 yuy2)
for n in 1 2 3; do
  "$binpath/pw-virtual-camera" --node "vcam$n" --camera "cam$n" --size 640x480 --rate 30 --format "${formats[$((n - 1))]}" \
    >"$work/vcam$n.log" 2>&1 &
  producer_pids+=($!)
done
sleep 1


# measure NAME SECONDS CMD...: CPU s per s and peak RSS of CMD, plus the producers' and daemon's CPU,
# plus studio's CPU in capture threads (pw.*, cap.*) and in encoder threads (x264, enc.*).
measure() {
  local name=$1 duration=$2
  shift 2
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 3   # start-up: connect, link, encoder open
  local s0 s1 p0 p1 t0 t1 w0 w1
  s0=$(cpu_ticks "$pid"); p0=$(cpu_ticks "${producer_pids[@]}" "$daemon_pid"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  sleep "$duration"
  s1=$(cpu_ticks "$pid"); p1=$(cpu_ticks "${producer_pids[@]}" "$daemon_pid"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  local rss; rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill -INT "$pid"
  wait "$pid" || true
  python3 - "$name" "$s0" "$s1" "$p0" "$p1" "$t0" "$t1" "$w0" "$w1" "$rss" "$ticks" <<'PY'
import sys, collections
name, s0, s1, p0, p1, t0, t1, w0, w1, rss, ticks = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
wall = float(w1) - float(w0); hz = int(ticks)
def rate(a, b): return sum(b[k] - a[k] for k in a if k in b) / hz / wall
threads0, threads1 = parse(t0), parse(t1)
def group(match): return sum(threads1[k] - threads0[k] for k in threads0 if match(k)) / hz / wall
capture = group(lambda k: k.startswith(("pw.", "cap.")))
# x264's worker threads carry the name of the thread that opened the encoder (the main thread, "studio",
# which itself sleeps once the server runs).
encode = group(lambda k: k.startswith("encode.") or k == "studio")
print(f"{name} {rate(parse(s0), parse(s1)):.3f} {int(rss) / 1024:.1f} {rate(parse(p0), parse(p1)):.3f} {capture:.3f} {encode:.3f}")
PY
}

common=(--program 1280x720@30 --preset veryfast --bitrate 4500k --no-iso)
results=()
for round in $(seq "$rounds"); do
  results+=("$(measure "studio-pipewire-3cam-640x480" "$seconds" "$bin" serve --backends pipewire --audio pipewire:studio-test-mic \
      --rtmp "$url/pw" "${common[@]}" --db "$work/bench-pw.db" --socket "$work/studio-pw.sock")")
  results+=("$(measure "studio-testpattern-3cam-640x480" "$seconds" "$bin" serve --cameras 3 --camera-size 640x480 \
      --rtmp "$url/tp" "${common[@]}" --db "$work/bench-tp.db" --socket "$work/studio-tp.sock")")
done
cameras=$("$bin" log --json --db "$work/bench-pw.db" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["kind"] == "camera_added"))')

mkdir -p bench-results
python3 - "$seconds" "$rounds" "$cameras" "${results[@]}" <<'PY' | tee -a bench-results/latest.md
import sys, statistics
sys.path.insert(0, "scripts")
from bench_report import grouped, heading, median
seconds, rounds, cameras, *rows = sys.argv[1:]
by = grouped(rows)
print(heading("PipeWire cameras", seconds, rounds))
print("| run | studio CPU s/s (median) | peak RSS MiB (max) | producers + daemon CPU s/s | studio capture threads CPU s/s | studio encoder threads CPU s/s |")
print("|---|---|---|---|---|---|")
for name, values in by.items():
    med = lambda i: statistics.median(v[i] for v in values)
    print(f"| {name} | {med(0):.3f} | {max(v[1] for v in values):.1f} | {med(2):.3f} | {med(3):.3f} | {med(4):.3f} |")
pw = median(by, "studio-pipewire-3cam-640x480", 0)
tp = median(by, "studio-testpattern-3cam-640x480", 0)
print(f"\nPipeWire cameras found by studio: {cameras}. CPU ratio PipeWire/test-pattern (same program): **{pw / tp:.2f}**")
PY
