#!/usr/bin/env bash
# Benchmark (issue 30 item 5, decoding network cameras): what a 1280x720@30 network camera nobody sees
# costs studio, decoded in full or only its reference pictures, against the ffmpeg CLI receiving the same
# stream (`ffmpeg -i URL -f null -`), and which libavcodec threads suit a 2-core box.
#
# Streams, camera-like content (ffmpeg's testsrc2, moving, with sensor noise), 3 Mbit/s, a keyframe a
# second, AAC, encoded once into 30 s files, published in a loop (stream copy, real time) to a private
# nginx-rtmp and pulled from it over loopback:
#   - bframes: x264 veryfast (B-frames, some of them not referred to: what an encoder on a PC sends);
#   - phone:   x264 baseline (no B-frames: every picture is a reference, like a phone's or an IP camera's);
#   - slices:  x264 veryfast zerolatency (no B-frames, each picture cut into 4 slices).
# Runs, each SECONDS long after a start-up pause, alternating, ROUNDS times:
#   - ffmpeg-STREAM: `ffmpeg -i URL -f null -` (its default threads): CPU s/s, the peer;
#   - unseen-STREAM: studio with four network cameras of the stream, none of them seen (the program on a
#     small test camera, nobody watching tiles): the default, only reference pictures decoded;
#   - full-STREAM:   the same with STUDIO_DECODE=full (every picture decoded, as if seen);
#     both: the CPU of the net.* threads (receive, decode, convert, play out) per camera, and the
#     decoded/skipped counts of `cameras --json`;
#   - threads: `ffmpeg -threads N -thread_type T -i URL -f null -` on bframes and slices (1 thread,
#     2 slice threads, 2 frame threads): the same libavcodec decoder studio uses, its CPU s/s.
# CPU from /proc (utime + stime, per thread for net.*).
#
# Usage: scripts/bench-network-decode.sh [SECONDS per run, default 15] [ROUNDS, default 1]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-15}
rounds=${2:-1}
source scripts/bench-rig.sh
bench_build studio
bin=$binpath/studio
bench_rig network-decode
declare -A encoder=(
  [bframes]="-preset veryfast"
  [phone]="-preset veryfast -profile:v baseline"
  [slices]="-preset veryfast -tune zerolatency -x264-params slices=4"
)
# Encoded once, before the runs (three live x264 encoders would take both cores and fall behind), then
# published in a loop by stream copy, in real time.
for stream in bframes phone slices; do
  # shellcheck disable=SC2086
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1280x720:r=30,noise=alls=12:allf=t" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 30 -c:v libx264 ${encoder[$stream]} -b:v 3000k -g 30 -pix_fmt yuv420p \
    -c:a aac -b:a 128k -f flv "$work/$stream.flv"
done
for stream in bframes phone slices; do
  ffmpeg -nostdin -v error -re -stream_loop -1 -i "$work/$stream.flv" -c copy -f flv "$url/$stream" >"$work/publisher-$stream.log" 2>&1 &
  producer_pids+=($!)
done
sleep 3
cameras=4

config() {
  local stream=$1 file="$work/studio-$1.yaml"
  {
    echo "http: {enabled: false}"
    echo "network:"
    echo "  pull:"
    for i in $(seq "$cameras"); do echo "    - {name: net$i, url: \"$url/$stream\", latency_ms: 300}"; done
  } >"$file"
  echo "$file"
}

# measure NAME DECODE CMD...: CPU s/s of the process and of its net.* threads per camera, and the
# network cameras' decode counters (decoded/skipped, summed) when it is studio.
measure() {
  local name=$1 decode=$2
  shift 2
  STUDIO_DECODE=$decode "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 5   # start-up: connect, probe
  local s0 s1 t0 t1 w0 w1
  s0=$(cpu_ticks "$pid"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  sleep "$seconds"
  s1=$(cpu_ticks "$pid"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  local counters=-
  if [[ "$name" != ffmpeg* && "$name" != threads* ]]; then
    counters=$("$bin" cameras --json --socket "$work/studio.sock" | /usr/bin/python3 -c '
import json, sys
cams = [c for c in json.load(sys.stdin)["cameras"] if c.get("network")]
decoded = sum(c["decode"]["full"] for c in cams); skipped = sum(c["decode"]["skipped"] for c in cams)
print(f"{decoded}/{skipped}")')
  fi
  bench_stop 15 "$pid"
  /usr/bin/python3 - "$name" "$s0" "$s1" "$t0" "$t1" "$w0" "$w1" "$ticks" "$cameras" "$counters" <<'PY'
import sys
name, s0, s1, t0, t1, w0, w1, ticks, cameras, counters = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
wall = float(w1) - float(w0); hz = int(ticks)
def rate(a, b): return sum(b[k] - a[k] for k in a if k in b) / hz / wall
threads0, threads1 = parse(t0), parse(t1)
net = sum(threads1[k] - threads0[k] for k in threads0 if k.startswith("net.") and k in threads1) / hz / wall / int(cameras)
print(f"{name} {rate(parse(s0), parse(s1)):.3f} {net:.3f} {counters}")
PY
}

results=()
for round in $(seq "$rounds"); do
  for stream in bframes phone slices; do
    results+=("$(measure "ffmpeg-$stream" demand ffmpeg -nostdin -v error -i "$url/$stream" -f null -)")
    for mode in unseen full; do
      rm -f "$work/bench.db"*
      results+=("$(measure "$mode-$stream" "$([ "$mode" = full ] && echo full || echo demand)" "$bin" serve --config "$(config "$stream")" \
          --cameras 1 --camera-size 320x180 --audio silence --rtmp "$url/program-$mode-$stream" --program 1280x720@30 --preset ultrafast \
          --bitrate 3000k --no-iso --db "$work/bench.db" --socket "$work/studio.sock")")
    done
  done
  for stream in bframes slices; do
    for threads in "1 slice" "2 slice" "2 frame"; do
      set -- $threads
      results+=("$(measure "threads-$1$2-$stream" demand ffmpeg -nostdin -v error -threads "$1" -thread_type "$2" -i "$url/$stream" -f null -)")
    done
  done
done

mkdir -p bench-results
/usr/bin/python3 - "$seconds" "$rounds" "$cameras" "${results[@]}" <<'PY' | tee -a bench-results/latest.md
import sys, statistics, subprocess, datetime
seconds, rounds, cameras, *rows = sys.argv[1:]
by, counters = {}, {}
for row in rows:
    name, cpu, net, count = row.split()
    by.setdefault(name, []).append((float(cpu), float(net)))
    counters[name] = count
med = lambda name, i: statistics.median(v[i] for v in by[name])
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Decoding network cameras, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), {cpu_model}, {subprocess.getoutput('nproc')} cores\n")
print(f"| stream | ffmpeg -i URL -f null - CPU s/s | unseen: net.* CPU s/s per camera | full: net.* CPU s/s per camera | unseen / ffmpeg | full / ffmpeg | unseen / full | decoded/skipped, {cameras} cameras (unseen; full) |")
print("|---|---|---|---|---|---|---|---|")
for stream in ("bframes", "phone", "slices"):
    f, u, w = med(f"ffmpeg-{stream}", 0), med(f"unseen-{stream}", 1), med(f"full-{stream}", 1)
    print(f"| {stream} | {f:.3f} | {u:.3f} | {w:.3f} | **{u / f:.2f}** | **{w / f:.2f}** | **{u / w:.2f}** | {counters[f'unseen-{stream}']}; {counters[f'full-{stream}']} |")
print("\n| stream | 1 thread CPU s/s | 2 slice threads | 2 frame threads | 2 slice / 1 | 2 frame / 1 |")
print("|---|---|---|---|---|---|")
for stream in ("bframes", "slices"):
    one, sl, fr = (med(f"threads-{t}-{stream}", 0) for t in ("1slice", "2slice", "2frame"))
    print(f"| {stream} | {one:.3f} | {sl:.3f} | {fr:.3f} | **{sl / one:.2f}** | **{fr / one:.2f}** |")
PY
