#!/usr/bin/env bash
# Benchmark: the operator console's live tiles (issue 12): 4 cameras at 10 pictures a second, each
# scaled to 320 wide and encoded as a JPEG, side by side in one run with the ffmpeg CLI doing the same
# job on the same frames.
#
# The frames: four 1280x720 test-pattern cameras (the moving sweep and the running timecode) with
# sensor noise new every frame (camera-like: noise is what makes a JPEG expensive), every third frame
# of the 30 fps pattern (a 10 fps tile), made by Benchmarks/tile-bench and written as 10 fps Y4M.
# - studio: `JPEGThumbnailer` (one libswscale pass, bilinear, to 320x180 yuvj420p + libavcodec's mjpeg
#   at quality 5), one per camera as the tile thread keeps one per tile: CPU time of its one thread per
#   picture, after a warm-up picture, the least of REPEATS runs. Then the live service (`TilePictures`
#   on four running 720p30 test-pattern cameras, every camera tile watched, a 720p30 program switcher
#   running beside it): its thread's CPU per second, and the program's late ticks meanwhile.
# - ffmpeg: `-vf scale=320:-2:flags=bilinear -c:v mjpeg -q:v 5 -f null`, one thread (`-threads 1
#   -filter_threads 1`), each camera's file looped LOOPS times; CPU time (user + system, `-benchmark`)
#   per picture, minus the same run with `-f null` alone (reading the file), the least of REPEATS runs.
#
# Usage: scripts/bench-tiles.sh [ROUNDS over the 30 frames for studio, default 10] [LOOPS of the files for ffmpeg, default 10]
#        [REPEATS of each measurement, default 3] [SECONDS of the live service, default 10]
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
rounds=${1:-10}
loops=${2:-10}
repeats=${3:-3}
seconds=${4:-10}
frames=30
swift build -c release --product tile-bench 2>&1 | tail -n 1
work=$(mktemp -d /tmp/studio-bench-tiles.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$(swift build -c release --show-bin-path)/tile-bench" "$work" "$frames" "$rounds" "$repeats" "$seconds" | tee "$work/studio.tsv"

# ffmpeg_ms FILE [ARGS...]: CPU milliseconds per picture of a single-threaded ffmpeg run over FILE (looped)
# with ARGS before `-f null` (the least of REPEATS runs).
ffmpeg_ms() {
  local file=$1
  shift
  for _ in $(seq "$repeats"); do
    ffmpeg -hide_banner -nostdin -benchmark -threads 1 -filter_threads 1 -stream_loop $((loops - 1)) -i "$file" "$@" -f null - 2>&1 |
      tr '\r' '\n' |
      awk '/^frame=/ { sub("frame=", ""); n = $1 } /bench: utime/ { sub("utime=", "", $2); sub("s", "", $2); sub("stime=", "", $3); sub("s", "", $3); cpu = $2 + $3 }
        END { if (n == 0 || cpu == "") exit 1; printf "%.4f\n", cpu * 1000 / n }'
  done | sort -n | head -n 1
}

total=0
for n in 1 2 3 4; do
  base=$(ffmpeg_ms "$work/cam$n.y4m")
  job=$(ffmpeg_ms "$work/cam$n.y4m" -vf scale=320:-2:flags=bilinear -c:v mjpeg -q:v 5)
  total=$(awk -v t="$total" -v j="$job" -v b="$base" 'BEGIN { printf "%.4f", t + j - b }')
done
ffmpeg_net=$(awk -v t="$total" 'BEGIN { printf "%.3f", t / 4 }')
read -r _ studio size jpeg_bytes < <(grep '^thumbnail' "$work/studio.tsv")
read -r _ service_percent service_rate skipped late < <(grep '^service' "$work/studio.tsv")
{
  echo
  echo "### Live tiles: 4 cameras, 10 pictures a second each, 1280x720 to $size JPEG, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
  echo
  echo "| | CPU ms per picture | 4 cameras x 10 fps, % of one core |"
  echo "|---|---|---|"
  echo "| studio \`JPEGThumbnailer\` | $studio | $(awk -v s="$studio" 'BEGIN { printf "%.1f", s * 40 / 10 }') |"
  echo "| ffmpeg scale (bilinear) + mjpeg -q:v 5, net of reading | $ffmpeg_net | $(awk -v s="$ffmpeg_net" 'BEGIN { printf "%.1f", s * 40 / 10 }') |"
  echo "| ratio studio / ffmpeg | $(awk -v s="$studio" -v f="$ffmpeg_net" 'BEGIN { if (f > 0) printf "%.2f", s / f; else print "(below noise)" }') | |"
  echo
  echo "Average JPEG of the noisy frames: $jpeg_bytes bytes. The live service (\`TilePictures\`, four running 720p30 test-pattern" \
       "cameras without noise, every camera tile watched, ${seconds} s, a 720p30 program running beside it): its thread used" \
       "$service_percent % of one core, $service_rate pictures a second, $skipped rounds skipped; the program's late ticks: $late."
} | tee -a "$work/table.md"
mkdir -p bench-results
cat "$work/table.md" >>bench-results/latest.md
