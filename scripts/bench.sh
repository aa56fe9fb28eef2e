#!/usr/bin/env bash
# Benchmark: our program pipeline against the ffmpeg CLI doing the same job, side by side in one run.
#
# The job: one synthetic 1280x720@30 source (the test-pattern camera's pictures: studio renders them live,
# the ffmpeg CLI reads the very same frames from a Y4M file made by Benchmarks/pattern-y4m, so both encode
# equal content) -> H.264 (libx264 veryfast, zerolatency, no B-frames,
# keyframe every 2 s, 4500k CBR-like) + AAC 128k 48 kHz stereo tone -> FLV over RTMP to the same
# private nginx-rtmp on loopback, in real time. For each run it reports CPU seconds per second of
# output (user+system, all threads) and peak RSS, then the ratio studio/ffmpeg.
# Also measured, for reference: ffmpeg on its own testsrc2 pattern (busier content), and the demo
# (three test cameras).
# Both jobs (the one camera, and the three ISO cameras) run on two contents: the clean pattern, and
# the pattern with camera-like sensor noise (studio's `--camera-noise NOISE`; pattern-y4m writes the very
# same noisy pictures for ffmpeg: the noise is seeded by the camera's name), where x264 does real work.
#
# Usage: scripts/bench.sh [SECONDS per run, default 20] [ROUNDS, default 2] [NOISE, default 8]
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
noise=${3:-8}
scripts/setup.sh
swift build -c release --product studio 2>&1 | tail -n 1
swift build -c release --product StudioEngine 2>&1 | tail -n 1  # `studio serve` runs in it (beside the binary)
swift build -c release --product pattern-y4m 2>&1 | tail -n 1
bin=$(swift build -c release --show-bin-path)/studio

work=$(mktemp -d /tmp/studio-bench.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nginx_pid=$(scripts/nginx-rtmp.sh "$work/nginx" "$port")
cleanup() { kill "$nginx_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
url="rtmp://127.0.0.1:$port/live"
ticks=$(getconf CLK_TCK)
# Ten seconds of cam1's pattern, looped by ffmpeg (the timecode jumps back every 10 s; nothing else
# changes), clean and with the noise.
"$(swift build -c release --show-bin-path)/pattern-y4m" "$work/pattern.y4m" 300 1280x720@30 cam1
"$(swift build -c release --show-bin-path)/pattern-y4m" "$work/pattern-noise.y4m" 300 1280x720@30 cam1 "$noise"

# pids PID: PID and all its descendants (an ffmpeg "job" may be several processes).
pids() { echo "$1"; for child in $(pgrep -P "$1"); do pids "$child"; done; }
# cpu_ticks PID...: "pid:utime+stime" for each.
cpu_ticks() { for p in "$@"; do [ -r "/proc/$p/stat" ] && echo "$p:$(awk '{print $14 + $15}' "/proc/$p/stat")"; done; }

# measure NAME SECONDS CMD...: runs CMD for SECONDS, samples the CPU time of it and its descendants and
# their peak RSS (summed) just before stopping it with SIGINT, and prints "NAME cpu_per_s peak_rss_mib".
measure() {
  local name=$1 duration=$2
  shift 2
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 2   # start-up (connect, encoder open) is not part of the steady state
  local tree; tree=$(pids "$pid")
  # shellcheck disable=SC2086
  local start_stat; start_stat=$(cpu_ticks $tree)
  local start_time; start_time=$(date +%s.%N)
  sleep "$duration"
  # shellcheck disable=SC2086
  local end_stat; end_stat=$(cpu_ticks $tree)
  local end_time; end_time=$(date +%s.%N)
  local rss=0
  for p in $tree; do rss=$((rss + $(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done
  kill -INT "$pid"
  for p in $tree; do kill -INT "$p" 2>/dev/null || true; done
  wait "$pid" || true
  python3 - "$name" "$start_stat" "$end_stat" "$start_time" "$end_time" "$rss" "$ticks" <<'PY'
import sys
name, s, e, t0, t1, rss, ticks = sys.argv[1:]
s = dict(x.split(":") for x in s.split()); e = dict(x.split(":") for x in e.split())
cpu = sum(int(e[p]) - int(s[p]) for p in s if p in e) / int(ticks); wall = float(t1) - float(t0)
print(f"{name} {cpu / wall:.3f} {int(rss) / 1024:.1f}")
PY
}

x264_and_aac=(-c:v libx264 -preset veryfast -tune zerolatency -bf 0 -g 60 -keyint_min 60 -sc_threshold 0
  -b:v 4500k -maxrate 4500k -bufsize 4500k -pix_fmt yuv420p -c:a aac -b:a 128k -ac 2 -ar 48000)
# ffmpeg_job [SUFFIX]: the one-camera job on pattern$SUFFIX.y4m.
ffmpeg_job() {
  exec ffmpeg -hide_banner -loglevel error -nostdin -re -stream_loop -1 -i "$work/pattern${1:-}.y4m" \
    -f lavfi -i "sine=frequency=1000:sample_rate=48000:samples_per_frame=1024" "${x264_and_aac[@]}" -f flv "$url/ffmpeg${1:-}"
}
ffmpeg_testsrc2_job() {
  exec ffmpeg -hide_banner -loglevel error -nostdin -re \
    -f lavfi -i "testsrc2=size=1280x720:rate=30" -f lavfi -i "sine=frequency=1000:sample_rate=48000" \
    "${x264_and_aac[@]}" -f flv "$url/ffmpeg-testsrc2"
}

# Issue 5's job: three 640x480@30 cameras, each recorded on its own (x264 ultrafast, zerolatency,
# keyframe every second, 4500k, Matroska, with the program audio: studio's ISO settings), plus the
# 1280x720 program (cameras scaled up, x264 veryfast) pushed over RTMP.
# ffmpeg does it as four processes: three ISO encoders and one program encoder scaling 640x480 to 720p.
for cam in cam1 cam2 cam3; do
  "$(swift build -c release --show-bin-path)/pattern-y4m" "$work/$cam-480.y4m" 300 640x480@30 "$cam"
  "$(swift build -c release --show-bin-path)/pattern-y4m" "$work/$cam-480-noise.y4m" 300 640x480@30 "$cam" "$noise"
done
# ffmpeg_iso_job [SUFFIX]: the ISO job on $cam-480$SUFFIX.y4m.
ffmpeg_iso_job() {
  local suffix=${1:-}
  mkdir -p "$work/ffmpeg-iso$suffix"
  for cam in cam1 cam2 cam3; do
    ffmpeg -hide_banner -loglevel error -nostdin -re -stream_loop -1 -i "$work/$cam-480$suffix.y4m" \
      -f lavfi -i "sine=frequency=1000:sample_rate=48000:samples_per_frame=1024" \
      -c:v libx264 -preset ultrafast -tune zerolatency -g 30 -keyint_min 30 -sc_threshold 0 -bf 0 \
      -b:v 4500k -maxrate 4500k -bufsize 4500k -pix_fmt yuv420p -c:a aac -b:a 128k -ac 2 \
      -y "$work/ffmpeg-iso$suffix/$cam.mkv" &
  done
  ffmpeg -hide_banner -loglevel error -nostdin -re -stream_loop -1 -i "$work/cam1-480$suffix.y4m" \
    -f lavfi -i "sine=frequency=1000:sample_rate=48000:samples_per_frame=1024" -vf scale=1280:720 \
    "${x264_and_aac[@]}" -f flv "$url/ffmpeg-iso-program$suffix" &
  wait
}

results=()
for round in $(seq "$rounds"); do
  results+=("$(measure "studio-1cam" "$seconds" "$bin" serve --cameras 1 --rtmp "$url/studio" \
      --program 1280x720@30 --preset veryfast --bitrate 4500k \
      --db "$work/bench.db" --socket "$work/studio.sock")")
  results+=("$(measure "ffmpeg-cli" "$seconds" ffmpeg_job)")
  results+=("$(measure "studio-1cam-noise" "$seconds" "$bin" serve --cameras 1 --camera-noise "$noise" --rtmp "$url/studio-noise" \
      --program 1280x720@30 --preset veryfast --bitrate 4500k \
      --db "$work/bench.db" --socket "$work/studio.sock")")
  results+=("$(measure "ffmpeg-cli-noise" "$seconds" ffmpeg_job -noise)")
done
results+=("$(measure "ffmpeg-cli-testsrc2" "$seconds" ffmpeg_testsrc2_job)")
results+=("$(measure "studio-iso-3cam-640x480" "$seconds" "$bin" serve --cameras 3 --camera-size 640x480 \
    --record "$work/studio-iso" --iso-preset ultrafast --rtmp "$url/studio-iso" --program 1280x720@30 --preset veryfast \
    --db "$work/bench-iso.db" --socket "$work/studio-iso.sock")")
results+=("$(measure "ffmpeg-iso-4proc" "$seconds" ffmpeg_iso_job)")
results+=("$(measure "studio-iso-3cam-640x480-noise" "$seconds" "$bin" serve --cameras 3 --camera-size 640x480 --camera-noise "$noise" \
    --record "$work/studio-iso-noise" --iso-preset ultrafast --rtmp "$url/studio-iso-noise" --program 1280x720@30 --preset veryfast \
    --db "$work/bench-iso-noise.db" --socket "$work/studio-iso.sock")")
results+=("$(measure "ffmpeg-iso-4proc-noise" "$seconds" ffmpeg_iso_job -noise)")
# iso_skipped DB: ISO frames the session in DB skipped.
iso_skipped() {
  "$bin" log --json --db "$1" | python3 -c '
import json, sys
events = json.load(sys.stdin)["events"]
print(sum(int(e["details"].get("dropped", 0)) for e in events
          if e["kind"] == "frames_dropped" and e["details"].get("stage", "").startswith("iso.")))'
}
iso_skipped_clean=$(iso_skipped "$work/bench-iso.db")
iso_skipped_noise=$(iso_skipped "$work/bench-iso-noise.db")
results+=("$(measure "studio-demo-3cam" "$seconds" "$bin" serve --demo --rtmp "$url/demo" \
    --db "$work/bench.db" --socket "$work/studio.sock")")

mkdir -p bench-results
python3 - "$seconds" "$rounds" "$noise" "$iso_skipped_clean" "$iso_skipped_noise" "${results[@]}" <<'PY' | tee -a bench-results/latest.md
import sys, statistics, platform, subprocess, datetime
seconds, rounds, noise, iso_skipped_clean, iso_skipped_noise, *rows = sys.argv[1:]
by = {}
for row in rows:
    name, cpu, rss = row.split()
    by.setdefault(name, []).append((float(cpu), float(rss)))
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[:3]
print(f"\n### {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), noise {noise}, {cpu_model}, {subprocess.getoutput('nproc')} cores, load after {' / '.join(load)}\n")
print("| run | CPU s per s of output (median) | peak RSS MiB (max) |")
print("|---|---|---|")
for name, values in by.items():
    print(f"| {name} | {statistics.median(v[0] for v in values):.3f} | {max(v[1] for v in values):.1f} |")
for content, suffix, skipped in (("clean pattern", "", iso_skipped_clean), (f"noise {noise}", "-noise", iso_skipped_noise)):
    ours = statistics.median(v[0] for v in by["studio-1cam" + suffix]); theirs = statistics.median(v[0] for v in by["ffmpeg-cli" + suffix])
    rss_ours = max(v[1] for v in by["studio-1cam" + suffix]); rss_theirs = max(v[1] for v in by["ffmpeg-cli" + suffix])
    print(f"\n{content}: CPU ratio studio/ffmpeg (same job): **{ours / theirs:.2f}**; peak RSS ratio: **{rss_ours / rss_theirs:.2f}**")
    iso = by["studio-iso-3cam-640x480" + suffix][0]; ffiso = by["ffmpeg-iso-4proc" + suffix][0]
    print(f"\n{content}, ISO job (3 cameras 640x480 recorded + 720p program): CPU ratio studio/ffmpeg **{iso[0] / ffiso[0]:.2f}**, "
          f"peak RSS ratio **{iso[1] / ffiso[1]:.2f}** (ffmpeg's RSS is the sum over its 4 processes); "
          f"ISO frames skipped by studio: **{skipped}**")
PY
