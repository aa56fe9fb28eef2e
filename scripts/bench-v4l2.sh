#!/usr/bin/env bash
# Benchmark (issue 4): one V4L2 camera at 1280x720 captured, encoded and pushed over RTMP by
# `studio serve` and by the ffmpeg CLI (`-f v4l2`) with the same x264 settings, inside the VM against
# vivid (the host has no V4L2). Reports CPU seconds per second of output of each (user+system, all
# threads, as the VM's kernel counts them) and the ratio studio/ffmpeg.
#
# vivid's fastest rate at 1280x720 is 12.5 fps, and qemu TCG runs x264 several times slower than the
# host, so both sides run 1280x720@12.5 with x264 ultrafast, zerolatency, no B-frames, keyframe every
# 2 s, 2500k CBR-like, plus AAC 128k of a tone. Absolute numbers are TCG numbers; the ratio is the point.
#
# Usage: scripts/bench-v4l2.sh [SECONDS per run, default 20]   ($STUDIO_SCRATCH_PATH: SwiftPM scratch path)
# Results: printed and appended to bench-results/v4l2-latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
if [ "${STUDIO_BENCH_INNER:-}" != 1 ]; then
  scripts/setup.sh
  scratch=()
  [ -z "${STUDIO_SCRATCH_PATH:-}" ] || scratch=(--scratch-path "$STUDIO_SCRATCH_PATH")
  swift build -c release --product studio "${scratch[@]}" 2>&1 | tail -n 1
  swift build -c release --product StudioEngine "${scratch[@]}" 2>&1 | tail -n 1  # `studio serve` runs in it
  bin_dir=$(swift build -c release --show-bin-path "${scratch[@]}")
  mkdir -p bench-results
  # One vivid camera, so studio serves exactly one.
  scripts/vm/run.sh --timeout 900 --share "$bin_dir" --vivid "n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0" -- \
    env STUDIO_BENCH_INNER=1 STUDIO_BIN="$bin_dir/studio" scripts/bench-v4l2.sh "$seconds" | tee -a bench-results/v4l2-latest.md
  exit "${PIPESTATUS[0]}"
fi

# Inside the VM from here.
bin=$STUDIO_BIN
work=$(mktemp -d /tmp/studio-bench.XXXXXX)
port=19350
nginx_pid=$(scripts/nginx-rtmp.sh "$work/nginx" "$port")
trap 'kill "$nginx_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
url="rtmp://127.0.0.1:$port/live"
ticks=$(getconf CLK_TCK)

pids() { echo "$1"; for child in $(pgrep -P "$1"); do pids "$child"; done; }
cpu_ticks() { local sum=0; for p in "$@"; do [ -r "/proc/$p/stat" ] && sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$sum"; }

# frames_now NAME: "FRAMES STREAM_SECONDS": video frames encoded so far by the run NAME and how far its
# output timeline has got (studio: its status over the control socket, program_ms; ffmpeg: its
# -progress file, out_time_us, which the audio drives when video lags).
frames_now() {
  if [ "$1" = studio ]; then
    /usr/bin/python3 - "$work/studio.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"id":1,"command":"status"}\n')
data = b""
while not data.endswith(b"\n"): data += s.recv(65536)
r = json.loads(data)["result"]
print(r["encoder"]["frames_encoded"], r["program"]["program_ms"] / 1000)
PY
  else
    echo "$(grep '^frame=' "$work/ffmpeg.progress" | tail -1 | cut -d= -f2) \
      $(grep '^out_time_us=' "$work/ffmpeg.progress" | tail -1 | cut -d= -f2 | awk '{ print $1 / 1e6 }')"
  fi
}

# measure NAME CMD...: waits until NAME publishes (its FLV appears at nginx) plus 4 s, then for $seconds
# samples the CPU time of CMD's process tree, the frames it encoded and its stream time; prints
# "NAME cpu_s frames wall_s stream_s".
# CPU per second of output = cpu_s / (frames / 12.5): fair even if TCG cannot keep either in real time.
measure() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do ls "$work/nginx/recordings/$name-"* >/dev/null 2>&1 && break; sleep 0.2; done
  sleep 4   # start-up under TCG (dynamic linking, encoder open, RTMP connect) is not steady state
  local tree; tree=$(pids "$pid")
  local f0 s0; read -r f0 s0 <<<"$(frames_now "$name")"
  # shellcheck disable=SC2086
  local c0; c0=$(cpu_ticks $tree); local t0; t0=$(date +%s.%N)
  sleep "$seconds"
  # The frame count first, then CPU and clock: the query answers at its end (python's start-up under
  # TCG takes seconds), so both ends of the window line up with the CPU samples.
  local f1 s1; read -r f1 s1 <<<"$(frames_now "$name")"
  # shellcheck disable=SC2086
  local c1; c1=$(cpu_ticks $tree); local t1; t1=$(date +%s.%N)
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" || true
  awk -v n="$name" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$ticks" -v f0="$f0" -v f1="$f1" -v s0="$s0" -v s1="$s1" \
    'BEGIN { printf "%s %.3f %d %.1f %.1f\n", n, (c1 - c0) / hz, f1 - f0, t1 - t0, s1 - s0 }'
}

x264_and_aac=(-c:v libx264 -preset ultrafast -tune zerolatency -bf 0 -g 25 -keyint_min 25 -sc_threshold 0
  -b:v 2500k -maxrate 2500k -bufsize 2500k -pix_fmt yuv420p -c:a aac -b:a 128k -ac 2 -ar 48000)
ffmpeg_job() {
  exec ffmpeg -hide_banner -loglevel error -nostdin -f v4l2 -input_format yuv420p -video_size 1280x720 -framerate 12.5 \
    -i /dev/video0 -f lavfi -i "sine=frequency=1000:sample_rate=48000:samples_per_frame=1024" \
    "${x264_and_aac[@]}" -progress "$work/ffmpeg.progress" -f flv "$url/ffmpeg"
}

studio=$(measure studio "$bin" serve --backends v4l2 --program 1280x720@12.5 --preset ultrafast --bitrate 2500k --no-iso \
  --rtmp "$url/studio" --db "$work/bench.db" --socket "$work/studio.sock")
ffmpeg=$(measure ffmpeg ffmpeg_job)
row() {  # NAME CPU FRAMES WALL STREAM -> markdown row
  awk -v n="$1" -v c="$2" -v f="$3" -v w="$4" -v st="$5" 'BEGIN {
    out = f / 12.5; printf "| %s | %.3f | %d frames = %.1f s of video in %.1f s (%.2fx real time) | %.3f (%.1f s) | %.3f |\n", n, c / out, f, out, w, out / w, c / st, st, c / w }'
}
read -r _ sc sf sw ss <<<"$studio"
read -r _ fc ff fw fs <<<"$ffmpeg"
echo
echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — in the VM (qemu TCG, $(nproc) vCPUs), vivid 1280x720@12.5, x264 ultrafast, ${seconds} s per run"
echo
echo "| run | CPU s per s of video output | video in the window | CPU s per s of stream time (stream s) | CPU s per wall s |"
echo "|---|---|---|---|---|"
row "studio serve" "$sc" "$sf" "$sw" "$ss"
row "ffmpeg -f v4l2" "$fc" "$ff" "$fw" "$fs"
echo
awk -v sc="$sc" -v sf="$sf" -v fc="$fc" -v ff="$ff" -v ss="$ss" -v fs="$fs" 'BEGIN {
  printf "CPU ratio studio/ffmpeg per second of video output: **%.2f**; per second of stream time: **%.2f**\n", (sc / sf) / (fc / ff), (sc / ss) / (fc / fs) }'
