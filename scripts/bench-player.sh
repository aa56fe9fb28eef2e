#!/usr/bin/env bash
# Benchmark (issue 31, media players): what playing a 1080p30 H.264 clip into a 1080p program costs
# studio, against the ffmpeg CLI playing the same clip in real time (`ffmpeg -re -i clip -f null -`:
# demux and decode at the clip's rate, nothing else), in the same run.
#
# The clip: camera-like content (ffmpeg's testsrc2, moving, with sensor noise) at 1920x1080@30 in H.264
# (x264 veryfast, 8 Mbit/s, a keyframe a second) with AAC, 10 s, made once; both players loop it.
# Runs, each SECONDS long after a start-up pause, alternating, ROUNDS times:
#   - ffmpeg: `ffmpeg -re -stream_loop -1 -i clip.mp4 -f null -`: its CPU s/s;
#   - studio1: a player of the clip (`end: loop`), playing and cut to program, a 1920x1080@30 program
#     (x264 ultrafast) pushed to nginx, one small test camera: the CPU of its player.* threads (demux,
#     decode, convert, timing; libavcodec's threads inherit the name) and studio's whole CPU;
#   - studio0: the same studio without the player: its whole CPU (studio1 minus this is the player's
#     whole cost, the program's composition of it and its sound's mixing included).
# CPU from /proc (utime + stime, per thread for player.*).
#
# Usage: scripts/bench-player.sh [SECONDS per run, default 20] [ROUNDS, default 2]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
source scripts/bench-rig.sh
bench_build studio
bin=$binpath/studio
bench_rig player
clip="$work/clip.mp4"
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1920x1080:r=30:d=10,noise=alls=12:allf=t" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=10" -c:v libx264 -preset veryfast -b:v 8000k -g 30 -pix_fmt yuv420p \
  -c:a aac -b:a 128k -movflags +faststart "$clip"

# config N: a config with N players (0 or 1) of the clip, looping.
config() {
  local file="$work/studio-$1.yaml"
  {
    echo "http: {enabled: false}"
    if [ "$1" -gt 0 ]; then echo "players:"; echo "  - {name: clip, items: [\"$clip\"], end: loop}"; fi
  } >"$file"
  echo "$file"
}

# After the start-up pause of each run (bench_measure): the cut.
bench_started() {
  if [ "$1" = studio1 ]; then
    "$bin" play clip --socket "$work/studio.sock" >/dev/null
    "$bin" switch clip --socket "$work/studio.sock" >/dev/null
    sleep 1
  fi
}

results=()
for round in $(seq "$rounds"); do
  results+=("$(bench_measure ffmpeg player. ffmpeg -nostdin -v error -re -stream_loop -1 -i "$clip" -f null -)")
  for n in 0 1; do
    rm -f "$work/bench.db"*
    results+=("$(bench_measure "studio$n" player. "$bin" serve --config "$(config "$n")" --cameras 1 --camera-size 320x180 --audio silence \
        --rtmp "$url/program$n" --program 1920x1080@30 --preset ultrafast --bitrate 6000k --no-iso \
        --db "$work/bench.db" --socket "$work/studio.sock")")
  done
done

mkdir -p bench-results
python3 - "$seconds" "$rounds" "${results[@]}" <<'PY' | tee -a bench-results/latest.md
import sys
sys.path.insert(0, "scripts")
from bench_report import grouped, heading, measure_table, median
seconds, rounds, *rows = sys.argv[1:]
by = grouped(rows)
print(heading("A player of a 1080p30 clip", seconds, rounds))
measure_table(by, "player.*")
print(f"\nThe player's threads (demux, decode, convert, timing) / ffmpeg -re -i clip -f null -: **{median(by, 'studio1', 1) / median(by, 'ffmpeg', 0):.2f}**")
print(f"The player's whole cost (studio1 - studio0) / ffmpeg: **{(median(by, 'studio1', 0) - median(by, 'studio0', 0)) / median(by, 'ffmpeg', 0):.2f}**")
PY
