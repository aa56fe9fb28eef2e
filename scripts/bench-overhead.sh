#!/usr/bin/env bash
# Benchmark (issue 15): studio's CPU beyond its encoders. The one-camera program job (a 1280x720@30
# test-pattern camera with camera-like sensor noise, `--camera-noise`, x264 veryfast zerolatency 4500k,
# AAC 128k of a 1 kHz tone, FLV over RTMP to a private nginx) against what its two encoders cost on
# the very same pictures alone, in the same run, interleaved:
#   studio:       studio serve --cameras 1 --camera-noise NOISE --audio tone --no-iso --no-http --rtmp ...
#   encode-bench: the bare encode loop (Benchmarks/encode-bench): studio's own X264Encoder and AACEncoder
#                 with the same settings, fed the very pictures the camera shows (the same camera name
#                 and noise; a 2 s loop rendered up front) and the same tone, at the program's pace,
#                 and nothing else;
#   ffmpeg (for reference): ffmpeg -re encoding the same pictures (Benchmarks/pattern-y4m, 10 s looped)
#                 and a sine with libx264 and FFmpeg's AAC at the same settings to -f null.
# Overhead = (studio - encode-bench) / studio: target at most 5 % of studio's CPU. With studio's
# per-thread breakdown (/proc/PID/task): libx264's workers carry the name of the thread that opened
# the encoder (`studio`), the video and audio encoder threads are `encode.video`/`encode.audio`.
#
# Usage: scripts/bench-overhead.sh [SECONDS per run, default 20] [ROUNDS, default 2] [NOISE, default 8]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
noise=${3:-8}
source scripts/bench-rig.sh
bench_build studio pattern-y4m encode-bench
bin=$binpath/studio
bench_rig overhead
"$binpath/pattern-y4m" "$work/pattern.y4m" 300 1280x720@30 cam1 "$noise"

x264_and_aac=(-c:v libx264 -preset veryfast -tune zerolatency -bf 0 -g 60 -keyint_min 60 -sc_threshold 0
  -b:v 4500k -maxrate 4500k -bufsize 4500k -pix_fmt yuv420p -c:a aac -b:a 128k -ac 2 -ar 48000)
inputs=(-re -stream_loop -1 -i "$work/pattern.y4m" -f lavfi -i "sine=frequency=1000:sample_rate=48000:samples_per_frame=1024")

# encoded: the program frames studio's video encoder has encoded so far.
encoded() {
  "$bin" status --json --socket "$work/studio.sock" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["encoder"]["frames_encoded"])' || echo 0
}

# measure NAME CMD...: runs CMD, waits 4 s (start-up), then measures its CPU (s/s) over SECONDS, and for
# studio its threads; prints "NAME cpu" and writes the threads to $work/threads-NAME-ROUND.txt.
measure() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 4
  local c0 c1 t0 t1 w0 w1 f0=0 f1=0
  c0=$(cpu_ticks "$pid"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  [ "$name" = studio ] && f0=$(encoded)
  sleep "$seconds"
  c1=$(cpu_ticks "$pid"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  [ "$name" = studio ] && f1=$(encoded)
  bench_stop 10 "$pid"
  python3 - "$name" "$c0" "$c1" "$t0" "$t1" "$w0" "$w1" "$ticks" "$work/threads-$name-$round.txt" "$f0" "$f1" <<'PY'
import sys, collections
name, c0, c1, t0, t1, w0, w1, ticks, path, f0, f1 = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
wall, hz = float(w1) - float(w0), int(ticks)
a, b = parse(c0), parse(c1)
print(name, f"{sum(b[k] - a[k] for k in a) / hz / wall:.4f}", f"{(int(f1) - int(f0)) / wall:.1f}")
ta, tb = parse(t0), parse(t1)
with open(path, "w") as out:
    for k in tb: out.write(f"{k} {(tb[k] - ta.get(k, 0)) / hz / wall:.4f}\n")
PY
}

: >"$work/results.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
  echo "bench-overhead: round $round ..." >&2
  measure studio "$bin" serve --cameras 1 --camera-noise "$noise" --audio tone --program 1280x720@30 --preset veryfast \
    --bitrate 4500k --no-iso --no-http --rtmp "$url/studio" --db "$work/bench.db" --socket "$work/studio.sock" >>"$work/results.txt"
  measure encode-bench "$binpath/encode-bench" $((seconds + 10)) "$noise" >>"$work/results.txt"
  measure ffmpeg ffmpeg -hide_banner -loglevel error -nostdin "${inputs[@]}" "${x264_and_aac[@]}" -f null - >>"$work/results.txt"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p bench-results
python3 - "$seconds" "$rounds" "$noise" "$load_before" "$load_after" "$work" <<'PY' | tee -a bench-results/latest.md
import sys, statistics, subprocess, datetime, glob, collections
seconds, rounds, noise, load_before, load_after, work = sys.argv[1:]
by, fps = collections.defaultdict(list), []
for line in open(f"{work}/results.txt"):
    name, cpu, rate = line.split()
    by[name].append(float(cpu))
    if name == "studio": fps.append(rate)
med = {k: statistics.median(v) for k, v in by.items()}
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Overhead beyond the encoders, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), "
      f"noise {noise}, {cpu_model}, {subprocess.getoutput('nproc')} cores, load average {load_before} before, {load_after} after\n")
print("| run | CPU s/s (median) | runs |")
print("|---|---|---|")
for name in ("studio", "encode-bench", "ffmpeg"):
    print(f"| {name} | {med[name]:.3f} | {', '.join(f'{v:.3f}' for v in by[name])} |")
overhead = med["studio"] - med["encode-bench"]
print(f"\nThe encoders alone (encode-bench): {med['encode-bench']:.3f} CPU s/s. studio beyond them: {overhead:.3f} CPU s/s, "
      f"**{100 * overhead / med['studio']:.1f} % of studio's CPU** (target at most 5 %). ffmpeg doing the encoding alone: "
      f"{med['ffmpeg']:.3f} CPU s/s. studio encoded {', '.join(fps)} frames a second (runs).")
threads = collections.defaultdict(list)
for path in glob.glob(f"{work}/threads-studio-*.txt"):
    for line in open(path):
        k, v = line.split(); threads[k].append(float(v))
print("\nstudio's threads (CPU s/s, median over rounds; threads of the same name summed):\n")
print("| thread | CPU s/s | share of studio |")
print("|---|---|---|")
for k, v in sorted(threads.items(), key=lambda kv: -statistics.median(kv[1])):
    m = statistics.median(v)
    if m >= 0.0005: print(f"| {k} | {m:.4f} | {100 * m / med['studio']:.1f} % |")
camera = statistics.median(threads.get("cap.cam1", [0]))
print(f"\ncap.cam1 is the test pattern drawn and its noise made ({camera:.3f} CPU s/s): the benchmark's source, which the bare "
      f"loop renders before it starts; without it studio's overhead is {100 * (overhead - camera) / (med['studio'] - camera):.1f} %.")
PY
