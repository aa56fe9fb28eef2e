#!/usr/bin/env bash
# Benchmark: the per-camera picture processing (issue 11), above all the beauty filter, per 1280x720
# frame, side by side in one run with ffmpeg's own edge-preserving and plain blurs on the same frames.
#
# The job: noisy 1280x720 I420 pictures, mostly skin (a face-sized skin ellipse and a skin band: the
# beauty filter's worst case, it works wherever the skin weight is above zero), luma smoothed.
# - studio: `PictureProcessor` with `beauty` 100 (and, for reference, 40, mirror, rotate 90, crop,
#   colour, and all of mirror + colour + beauty 40), in Benchmarks/picture-bench: CPU time of its one
#   thread per frame, after a warm-up round over the frames.
# - ffmpeg: the same frames from the Y4M file picture-bench writes, one thread (`-threads 1
#   -filter_threads 1`), `-f null`: `bilateral` (edge-preserving, the same job), `smartblur` with a
#   threshold (edge-preserving Gaussian), `avgblur` (a plain box blur: a lower bound), each on luma
#   only. CPU time (user + system, ffmpeg's `-benchmark`) per frame, minus the same run with `-vf null`
#   (reading the file).
#
# Usage: scripts/bench-picture.sh [ROUNDS over the 60 frames for studio, default 10] [LOOPS of the file for ffmpeg, default 5]
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
rounds=${1:-10}
loops=${2:-5}
frames=60
swift build -c release --product picture-bench 2>&1 | tail -n 1
work=$(mktemp -d /tmp/studio-bench-picture.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$(swift build -c release --show-bin-path)/picture-bench" "$work/noisy.y4m" "$frames" "$rounds" | tee "$work/studio.txt"

# ffmpeg_ms FILTER: CPU milliseconds per frame of one single-threaded ffmpeg run of FILTER.
ffmpeg_ms() {
  ffmpeg -hide_banner -nostdin -benchmark -threads 1 -filter_threads 1 -stream_loop $((loops - 1)) \
    -i "$work/noisy.y4m" -vf "$1" -f null - 2>&1 |
    awk -v n=$((frames * loops)) '/bench: utime/ { sub("utime=", "", $2); sub("s", "", $2); sub("stime=", "", $3); sub("s", "", $3);
      printf "%.3f\n", ($2 + $3) * 1000 / n }'
}
base=$(ffmpeg_ms null)
declare -A peer
peer[bilateral]="bilateral=sigmaS=4:sigmaR=0.1:planes=1"
peer[smartblur]="smartblur=lr=5:ls=1:lt=10"
peer[avgblur]="avgblur=sizeX=9:planes=1"
studio=$(awk '$1 == "beauty-100" { print $2 }' "$work/studio.txt")

{
  echo
  echo "### Picture processing per 1280x720 frame, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
  echo
  echo "| run | CPU ms per frame | ratio studio beauty-100 / run |"
  echo "|---|---|---|"
  while read -r name ms; do echo "| studio $name | $ms | |"; done <"$work/studio.txt"
  echo "| ffmpeg -vf null (reading, subtracted below) | $base | |"
  for name in bilateral smartblur avgblur; do
    ms=$(ffmpeg_ms "${peer[$name]}")
    net=$(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.3f", a - b }')
    echo "| ffmpeg \`${peer[$name]}\` | $net | $(awk -v s="$studio" -v f="$net" 'BEGIN { printf "%.2f", s / f }') |"
  done
  echo
  echo "Cameras with beauty 100 at 30 fps within 2 cores' CPU: $(awk -v s="$studio" 'BEGIN { printf "%d", 2000 / (30 * s) }')"
} | tee -a "$work/table.md"
mkdir -p bench-results
cat "$work/table.md" >>bench-results/latest.md
