#!/usr/bin/env bash
# Benchmark (issue 15): capture-to-wire latency of the program over RTMP on loopback, and the same job
# done by a GStreamer pipeline (the engine of Voctomix and most Linux switchers), in the same run.
#
# One PipeWire virtual camera (pw-virtual-camera --stamp 1: 1280x720@30 I420, each picture carrying the
# CLOCK_MONOTONIC time it is sent at as a `CaptureStamp` bar code) feeds, in turn:
#   studio:    studio serve --backends pipewire (the camera on program, 1280x720@30, x264 veryfast
#              zerolatency 4500k, keyframe every 2 s, AAC 128k 1 kHz tone) -> rtmp://nginx/live/studio
#   gstreamer: pipewiresrc -> x264enc (veryfast, zerolatency, 4500k, keyframe every 60 frames, no
#              B-frames, VBV 1 s) + audiotestsrc 1 kHz -> avenc_aac 128k -> flvmux -> rtmpsink, the same nginx
# Two contents, one after the other (the camera restarted between them): `clean` (the test pattern: its
# moving box and timecode on flat colour, which x264 codes almost for free) and `noisy` (the same with
# camera-like sensor noise, --noise NOISE, default 12: x264 works as on a webcam). The bar code is drawn
# over the noise, clean, so it reads the same.
# Each run is played back from nginx by latency-probe (Benchmarks/latency-probe), which reads the stamp
# of every decoded picture: wire latency = when the picture's packet arrived - when it was captured.
# CPU (user + system, all threads) and peak RSS of the studio or gst-launch process over the same window,
# and the CPU of each of its threads by name (threads of one name summed; x264's worker threads carry
# the name of the thread that opened the encoder: `encode.prog` in studio, GStreamer's streaming thread).
# Runs alternate (studio, gstreamer, studio, ...): the machine is shared, so compare within a run.
#
# Usage: scripts/bench-latency.sh [SECONDS per run, default 20] [ROUNDS per content, default 2]
#        CONTENT="clean noisy" (the default; either alone), NOISE=12: which contents, how much noise.
#        STUDIO_BASELINE=/path/to/an/older/studio scripts/bench-latency.sh ...: also runs that binary
#        ("studio-baseline") in each round, for a before/after table from the same run.
# Results: printed, and appended to bench-results/latency-latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera latency-probe
bench_rig latency
contents=${CONTENT:-clean noisy}
noise=${NOISE:-12}
for content in $contents; do
  case $content in clean|noisy) ;; *) echo "CONTENT: clean and/or noisy, not '$content'" >&2; exit 2 ;; esac
done

# camera CONTENT: (re)starts the virtual camera with that content; `camera_pid`.
camera_pid=
camera() {
  [ -z "$camera_pid" ] || bench_stop 5 "$camera_pid"
  local extra=()
  [ "$1" = noisy ] && extra=(--noise "$noise")
  "$binpath/pw-virtual-camera" --node vcam-latency --camera cam1 --size 1280x720 --rate 30 --format i420 --stamp 1 "${extra[@]}" \
    >"$work/vcam-$1.log" 2>&1 &
  camera_pid=$!
  producer_pids+=("$camera_pid")
  for _ in $(seq 100); do grep -q ready "$work/vcam-$1.log" 2>/dev/null && break; sleep 0.1; done
}

process_ticks() { [ -r "/proc/$1/stat" ] && awk '{print $14 + $15}' "/proc/$1/stat" || echo 0; }

# measure CONTENT NAME STREAM CMD...: starts CMD, plays rtmp://.../STREAM with latency-probe for SECONDS
# (after a 3 s start-up), and prints "CONTENT NAME cpu rss frames misread wire_p50 wire_p95 wire_min
# wire_max decoded_p50 threads", threads as "name:cpu_s_per_s:count,..." (a name's threads summed).
measure() {
  local content=$1 name=$2 stream=$3
  shift 3
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 2
  # GStreamer's pipewiresrc waits for a session manager to link it (the private daemon has none):
  # link the camera to it by hand, as WirePlumber would. studio links its own streams.
  case $name in gstreamer)
    for _ in $(seq 50); do pw-link -i | grep -q '^gst-launch' && break; sleep 0.1; done
    pw-link "$(pw-link -o | grep '^vcam-latency:' | head -n 1)" "$(pw-link -i | grep '^gst-launch' | head -n 1)" ;;
  esac
  sleep 1
  local c0 w0 c1 w1 t0 t1 line
  c0=$(process_ticks "$pid"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  line=$("$binpath/latency-probe" "$url/$stream" --seconds "$seconds" --warmup 2 --label "$name" \
           --samples "bench-results/latency-$content-$name-$(date +%H%M%S)-samples.txt" 2>"$work/$name.probe.err" || true)
  c1=$(process_ticks "$pid"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  # studio's own budget by stage (status: outputs[].latency_ms), kept for the table.
  case $name in studio) "$binpath/studio" status --json --socket "$work/studio.sock" >"$work/status-$content-$name-$(date +%s%N).json" 2>/dev/null || true ;; esac
  local rss; rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$line" ] || { echo "$name: no latency measured; $(tail -n 3 "$work/$name.probe.err" "$work/$name.out")" >&2; line="latency $name frames=0"; }
  python3 - "$content" "$name" "$c0" "$c1" "$w0" "$w1" "$rss" "$ticks" "$line" "$t0" "$t1" <<'PY'
import sys, collections
sys.path.insert(0, "scripts")
from bench_ticks import parse
content, name, c0, c1, w0, w1, rss, ticks, line, t0, t1 = sys.argv[1:]
wall = float(w1) - float(w0)
cpu = (int(c1) - int(c0)) / int(ticks) / wall
fields = dict(f.split("=") for f in line.split()[2:])
keys = ["frames", "misread", "wire_p50", "wire_p95", "wire_min", "wire_max", "decoded_p50"]
# Per thread name: the CPU of the threads alive at both ends (one that came or went between is left out).
a, b = parse(t0), parse(t1)
count = collections.Counter(x.rsplit(":", 1)[0] for x in t1.split())
threads = ",".join(f"{k}:{(b[k] - a[k]) / int(ticks) / wall:.4f}:{count[k]}" for k in b if k in a) or "-"
print(content, name, f"{cpu:.3f}", f"{int(rss or 0) / 1024:.1f}", *(fields.get(k, "nan") for k in keys), threads)
PY
}

gst_job() {
  exec gst-launch-1.0 -q \
    pipewiresrc target-object=vcam-latency do-timestamp=true ! video/x-raw,format=I420,width=1280,height=720,framerate=30/1 \
    ! queue max-size-buffers=2 leaky=downstream \
    ! x264enc speed-preset=veryfast tune=zerolatency bitrate=4500 vbv-buf-capacity=1000 key-int-max=60 bframes=0 \
      option-string="scenecut=0:keyint_min=60" \
    ! video/x-h264,profile=high ! h264parse ! queue ! flvmux name=mux streamable=true \
    ! rtmpsink location="$url/gstreamer live=1" \
    audiotestsrc is-live=true wave=sine freq=1000 volume=0.1 ! audio/x-raw,rate=48000,channels=2 ! audioconvert \
    ! avenc_aac bitrate=128000 ! aacparse ! queue ! mux.
}

mkdir -p bench-results
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
results=()
for content in $contents; do
  camera "$content"
  for round in $(seq "$rounds"); do
    results+=("$(measure "$content" "studio" studio "$binpath/studio" serve --backends pipewire --audio tone --rtmp "$url/studio" \
        --program 1280x720@30 --preset veryfast --bitrate 4500k --no-iso --no-http --db "$work/bench-$content-$round.db" --socket "$work/studio.sock")")
    results+=("$(measure "$content" "gstreamer" gstreamer gst_job)")
    if [ -n "${STUDIO_BASELINE:-}" ]; then
      results+=("$(measure "$content" "studio-baseline" baseline "$STUDIO_BASELINE" serve --backends pipewire --audio tone --rtmp "$url/baseline" \
          --program 1280x720@30 --preset veryfast --bitrate 4500k --no-iso --no-http --db "$work/baseline-$content-$round.db" --socket "$work/studio.sock")")
    fi
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$seconds" "$rounds" "$load_before" "$load_after" "$work" "$noise" "${results[@]}" <<'PY' | tee -a bench-results/latency-latest.md
import sys, statistics, subprocess, datetime, glob, json, collections
seconds, rounds, load_before, load_after, work, noise, *rows = sys.argv[1:]
by = {}
threads = {}
for row in rows:
    content, name, *values = row.split()
    if values[2] in ("0", "nan"):
        print(f"{content} {name}: a run measured nothing (see the messages above)")
        continue
    by.setdefault(content, {}).setdefault(name, []).append([float(v) for v in values[:-1]])
    per = {}
    for item in values[-1].split(","):
        if item != "-":
            thread, cpu, count = item.rsplit(":", 2)
            per[thread] = (float(cpu), int(count))
    threads.setdefault(content, {}).setdefault(name, []).append(per)
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Capture-to-wire latency, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s) per content, "
      f"{cpu_model}, {subprocess.getoutput('nproc')} cores, load average {load_before} before, {load_after} after\n")
# Pictures on the wire a second (the probe reads SECONDS less its 2 s warm-up), and CPU per picture: a
# pipeline that drops pictures when it falls behind (GStreamer's leaky queue) spends less for less.
fps = lambda v: v[2] / (float(seconds) - 2)
print("| content | run | CPU s/s (median) | pictures/s on the wire (median) | CPU ms per picture (median) | peak RSS MiB (max) | frames read (sum) | misread (sum) | wire p50 ms (median) | wire p95 ms (median) | wire min-max ms | decoded p50 ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
label = {"clean": "clean", "noisy": f"noisy ({noise})"}
for content, runs in by.items():
    for name, values in runs.items():
        med = lambda i: statistics.median(v[i] for v in values)
        print(f"| {label[content]} | {name} | {med(0):.3f} | {statistics.median(fps(v) for v in values):.1f} "
              f"| {statistics.median(1000 * v[0] / fps(v) for v in values):.2f} | {max(v[1] for v in values):.1f} | {int(sum(v[2] for v in values))} | {int(sum(v[3] for v in values))} "
              f"| {med(4):.1f} | {med(5):.1f} | {min(v[6] for v in values):.1f}-{max(v[7] for v in values):.1f} | {med(8):.1f} |")
print()
for content, runs in by.items():
    if "studio" in runs and "gstreamer" in runs:
        cpu = statistics.median(v[0] for v in runs["studio"]) / statistics.median(v[0] for v in runs["gstreamer"])
        per = statistics.median(v[0] / fps(v) for v in runs["studio"]) / statistics.median(v[0] / fps(v) for v in runs["gstreamer"])
        lat = statistics.median(v[4] for v in runs["studio"]) / statistics.median(v[4] for v in runs["gstreamer"])
        print(f"{label[content]}: CPU ratio studio/GStreamer **{cpu:.2f}** (per picture on the wire {per:.2f}); wire latency p50 ratio studio/GStreamer **{lat:.2f}**  ")
    if "studio" in runs and "studio-baseline" in runs:
        cpu = statistics.median(v[0] for v in runs["studio"]) / statistics.median(v[0] for v in runs["studio-baseline"])
        lat = statistics.median(v[4] for v in runs["studio"]) / statistics.median(v[4] for v in runs["studio-baseline"])
        print(f"{label[content]}: CPU ratio studio/studio-baseline **{cpu:.2f}**; wire latency p50 ratio studio/studio-baseline **{lat:.2f}**  ")
# Per thread: CPU s/s by thread name, the median over the rounds (a name missing in a round counts 0).
for content, runs in threads.items():
    names = sorted(runs)
    print(f"\nCPU by thread, {label[content]} (CPU s/s, median over rounds; ×N: threads of that name):\n")
    print("| process | thread | CPU s/s |")
    print("|---|---|---|")
    for name in names:
        rounds_of = runs[name]
        every = set().union(*rounds_of)
        rowsn = []
        for thread in every:
            cpu = statistics.median(r.get(thread, (0.0, 0))[0] for r in rounds_of)
            count = max(r.get(thread, (0.0, 0))[1] for r in rounds_of)
            rowsn.append((cpu, thread, count))
        for cpu, thread, count in sorted(rowsn, reverse=True):
            if cpu >= 0.0005:
                print(f"| {name} | `{thread}`{f' ×{count}' if count > 1 else ''} | {cpu:.4f} |")
for content in by:
    budgets = []
    for path in sorted(glob.glob(f"{work}/status-{content}-studio-*.json")):
        try:
            outputs = json.load(open(path)).get("outputs", [])
        except ValueError:
            continue
        if outputs and outputs[0].get("latency_ms"):
            budgets.append(outputs[0]["latency_ms"])
    if budgets:
        print(f"\nstudio's budget by stage, {label[content]} (`studio status`: outputs[].latency_ms over the last 300 frames at the end of each run; median over runs):\n")
        print("| stage | p50 ms | p95 ms |")
        print("|---|---|---|")
        for stage in ["capture_to_tick", "tick_wake", "compose", "encode_queue", "encode", "output_queue", "write", "tick_to_wire", "audio_to_wire"]:
            known = [b[stage] for b in budgets if stage in b]
            if known:
                print(f"| {stage} | {statistics.median(k['p50'] for k in known):.1f} | {statistics.median(k['p95'] for k in known):.1f} |")
PY
