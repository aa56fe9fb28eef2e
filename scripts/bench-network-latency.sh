#!/usr/bin/env bash
# Benchmark (issue 30): the latency a network camera's trip through studio adds, against the same
# stream received directly (libavformat with -fflags nobuffer and a one-thread low-delay decode: what
# `ffplay -fflags nobuffer` does before it displays) and against a GStreamer pipeline doing studio's job
# (receive, decode, encode, push), in the same run.
#
# A phone: one PipeWire virtual camera (pw-virtual-camera --stamp 1: 1280x720@30 I420 with camera-like
# noise, each picture carrying the CLOCK_MONOTONIC time it is sent at as a `CaptureStamp` bar code),
# encoded by GStreamer (x264 veryfast zerolatency 3000k, a keyframe a second, no B-frames, AAC) and
# published to a private nginx-rtmp as live/phone. Then, in turn, latency-probe reads:
#   direct:    rtmp://.../live/phone itself;
#   studio:    studio serve pulling live/phone as network camera `phone` (jitter target TARGET ms, default
#              100), on program, 1280x720@30 x264 veryfast zerolatency 3000k -> live/studio;
#   gstreamer: rtmpsrc live/phone ! flvdemux ! h264parse ! avdec_h264 ! x264enc (the same settings) !
#              flvmux ! rtmpsink sync=false live/gstreamer (no jitter buffer: it sends what comes when it
#              comes; with the sink's default sync=true, nginx's burst of cached pictures at connect
#              would set its pace late for good).
# Wire latency = when a picture's packet reached the probe - when the camera stamped it (same machine,
# same clock); what a hop adds = its p50 - direct's p50 in the same round. Runs alternate.
#
# Usage: scripts/bench-network-latency.sh [SECONDS per run, default 20] [ROUNDS, default 2]
#        TARGET=100 (studio's jitter target, ms), NOISE=12
# Results: printed, and appended to bench-results/network-latency-latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
target=${TARGET:-100}
noise=${NOISE:-12}
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera latency-probe
bench_rig netlatency

"$binpath/pw-virtual-camera" --node vcam-phone --camera phone --size 1280x720 --rate 30 --format i420 --stamp 1 --noise "$noise" \
  >"$work/vcam.log" 2>&1 &
producer_pids+=($!)
for _ in $(seq 100); do grep -q ready "$work/vcam.log" 2>/dev/null && break; sleep 0.1; done

# The phone's encoder and uplink; pipewiresrc waits for a link, made by hand as WirePlumber would.
gst-launch-1.0 -q \
  pipewiresrc target-object=vcam-phone do-timestamp=true ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
  ! queue max-size-buffers=2 leaky=downstream \
  ! x264enc speed-preset=veryfast tune=zerolatency bitrate=3000 key-int-max=30 bframes=0 option-string="scenecut=0:keyint_min=30" \
  ! video/x-h264,profile=high ! h264parse ! queue ! flvmux name=mux streamable=true ! rtmpsink location="$url/phone live=1" \
  audiotestsrc is-live=true wave=sine freq=1000 volume=0.1 ! audio/x-raw,rate=48000,channels=2 ! audioconvert \
  ! avenc_aac bitrate=128000 ! aacparse ! queue ! mux. >"$work/phone.log" 2>&1 &
producer_pids+=($!)
for _ in $(seq 50); do pw-link -i | grep -q '^gst-launch' && break; sleep 0.1; done
pw-link "$(pw-link -o | grep '^vcam-phone:' | head -n 1)" "$(pw-link -i | grep '^gst-launch' | head -n 1)"
sleep 2

cat >"$work/studio.yaml" <<YAML
network:
  pull:
    - name: phone
      url: $url/phone
      latency_ms: $target
YAML

# measure NAME STREAM [CMD...]: starts CMD (if any), waits until STREAM is on nginx, reads it with
# latency-probe for SECONDS and prints "NAME frames misread wire_p50 wire_p95 wire_min wire_max cpu".
measure() {
  local name=$1 stream=$2 pid="" line c0=0 c1=0 w0 w1
  shift 2
  if [ $# -gt 0 ]; then "$@" >"$work/$name.out" 2>&1 & pid=$!; fi
  [ "$name" = studio ] && for _ in $(seq 100); do
    "$binpath/studio" switch phone --socket "$work/studio.sock" >/dev/null 2>&1 && break; sleep 0.1
  done
  sleep 3
  [ -n "$pid" ] && c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  w0=$(date +%s.%N)
  line=$("$binpath/latency-probe" "$url/$stream" --seconds "$seconds" --warmup 2 --label "$name" 2>"$work/$name.probe.err" || true)
  w1=$(date +%s.%N)
  [ -n "$pid" ] && c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  [ -n "$pid" ] && bench_stop 5 "$pid"
  [ -n "$line" ] || { echo "$name: nothing measured; $(tail -n 3 "$work/$name.probe.err" "$work/$name.out" 2>/dev/null)" >&2; line="latency $name frames=0"; }
  python3 - "$name" "$line" "$c0" "$c1" "$w0" "$w1" "$ticks" <<'PY'
import sys
name, line, c0, c1, w0, w1, ticks = sys.argv[1:]
f = dict(x.split("=") for x in line.split()[2:])
cpu = (int(c1) - int(c0)) / int(ticks) / (float(w1) - float(w0))
print(name, *(f.get(k, "nan") for k in ["frames", "misread", "wire_p50", "wire_p95", "wire_min", "wire_max"]), f"{cpu:.3f}")
PY
}

gst_job() {
  exec gst-launch-1.0 -q \
    rtmpsrc location="$url/phone live=1" ! flvdemux name=demux \
    demux.video ! queue ! h264parse ! avdec_h264 ! videoconvert ! video/x-raw,format=I420 \
    ! x264enc speed-preset=veryfast tune=zerolatency bitrate=3000 key-int-max=60 bframes=0 option-string="scenecut=0:keyint_min=60" \
    ! video/x-h264,profile=high ! h264parse ! queue ! flvmux name=mux streamable=true ! rtmpsink sync=false location="$url/gstreamer live=1" \
    demux.audio ! queue ! aacparse ! mux.
}

mkdir -p bench-results
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for round in $(seq "$rounds"); do
  rows+=("$round $(measure direct phone)")
  rows+=("$round $(measure studio studio "$binpath/studio" serve --config "$work/studio.yaml" --backends none --audio silence \
      --rtmp "$url/studio" --program 1280x720@30 --preset veryfast --bitrate 3000k --no-iso --no-http \
      --db "$work/studio-$round.db" --socket "$work/studio.sock")")
  rows+=("$round $(measure gstreamer gstreamer gst_job)")
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$seconds" "$rounds" "$target" "$noise" "$load_before" "$load_after" "${rows[@]}" <<'PY' | tee -a bench-results/network-latency-latest.md
import sys, statistics, subprocess, datetime
sys.path.insert(0, "scripts")
from bench_report import by_round
seconds, rounds, target, noise, before, after, *rows = sys.argv[1:]
runs = by_round(rows)
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Network camera latency, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), "
      f"studio's jitter target {target} ms, noise {noise}, {cpu_model}, {subprocess.getoutput('nproc')} cores, "
      f"load average {before} before, {after} after\n")
print("| run | frames read (sum) | misread (sum) | wire p50 ms (median) | wire p95 ms (median) | wire min-max ms | added p50 ms (median over rounds) | CPU s/s (median) |")
print("|---|---|---|---|---|---|---|---|")
direct = runs.get("direct", {})
for name, by_round in runs.items():
    values = list(by_round.values())
    med = lambda i: statistics.median(v[i] for v in values)
    added = [v[2] - direct[r][2] for r, v in by_round.items() if r in direct]
    shown = f"{statistics.median(added):.1f}" if name != "direct" and added else "—"
    cpu = f"{med(6):.3f}" if name != "direct" else "—"
    print(f"| {name} | {int(sum(v[0] for v in values))} | {int(sum(v[1] for v in values))} | {med(2):.1f} | {med(3):.1f} "
          f"| {min(v[4] for v in values):.1f}-{max(v[5] for v in values):.1f} | {shown} | {cpu} |")
if "studio" in runs and "gstreamer" in runs and direct:
    s = statistics.median(v[2] - direct[r][2] for r, v in runs["studio"].items() if r in direct)
    g = statistics.median(v[2] - direct[r][2] for r, v in runs["gstreamer"].items() if r in direct)
    print(f"\nAdded p50: studio {s:.1f} ms (its jitter target {target} ms + one frame = {float(target) + 33.3:.1f} ms), "
          f"GStreamer {g:.1f} ms; studio beyond its target: {s - float(target):.1f} ms, against GStreamer's whole hop: ratio **{(s - float(target)) / g:.2f}**")
PY
