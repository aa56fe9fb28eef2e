#!/usr/bin/env bash
# Benchmark: the switcher's compositor (issue 11) per program frame, side by side in one run with
# ffmpeg's own filters making the same composition from the same frames.
#
# The frames: four 640x480 and four 1280x720 cameras, 30 fps, camera-like (a scene of value noise at
# three scales and hard-edged stripes, panning a few pixels a frame, plus sensor noise new every
# frame), made by Benchmarks/compose-bench and written as Y4M.
# The jobs:
# - a 2x2 grid of the 640x480 cameras into 1280x720 (each cropped to 16:9, the grid's `fill`),
# - a PiP of two 1280x720 cameras into 1280x720 (the inset 0.3 of the width, scaled),
# - a mix of two 1280x720 cameras (every frame mid-mix),
# - a 2x2 grid of the 1280x720 cameras into 1920x1080 (each scaled to 960x540),
# - the 1080p30 show: that grid plus a translucent lower-third band (opacity 0.7) over it.
# - studio: `Switcher.CompositorBenchmark` (the program thread's own `Compositor` and
#   `TransitionRenderer`) in Benchmarks/compose-bench: CPU time of its one thread per program frame,
#   after a warm-up round over the frames, the least of REPEATS runs. Before each frame (untimed) each
#   camera's frame is copied into the buffer it arrives in, so the compositor reads it warm, as it
#   reads a frame a capture thread just delivered, and as ffmpeg reads one it just read from the file.
# - ffmpeg: the filter graph compose-bench prints for each job, built from the rectangles and crops the
#   compositor placed (crop + scale + xstack for grids, scale + overlay for the PiP, xfade=fade and
#   blend for the mix, drawbox for the band), single-threaded (`-threads 1 -filter_threads 1
#   -filter_complex_threads 1`), `-f null`; scale with flags=bilinear (studio's libswscale filter) and,
#   for reference, bicubic (ffmpeg's default). CPU time (user + system, ffmpeg's `-benchmark`; also user
#   alone, as the system time of reading the files varies by more than a small job costs) per
#   output frame, minus the same inputs read through a graph that composes nothing (`null` on the
#   first, `nullsink` on the others: reading and decoding the files, one output).
#
# Then each bilinear graph makes its pictures once more, compared (ffmpeg's psnr) with the compositor's
# pictures of the same job: the two did the same composition when they are equal.
#
# Usage: scripts/bench-compose.sh [ROUNDS over the 30 frames for studio, default 10] [LOOPS of the files for ffmpeg, default 10]
#        [REPEATS of each measurement, studio's and ffmpeg's: the least CPU counts, default 3]
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
rounds=${1:-10}
loops=${2:-10}
repeats=${3:-3}
frames=30
swift build -c release --product compose-bench 2>&1 | tail -n 1
work=$(mktemp -d /tmp/studio-bench-compose.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$(swift build -c release --show-bin-path)/compose-bench" "$work" "$frames" "$rounds" "$repeats" >"$work/jobs.tsv"

# ffmpeg_run INPUTS GRAPH: "CPU_SECONDS USER_SECONDS OUTPUT_FRAMES" of a single-threaded ffmpeg run of GRAPH (the least
# CPU of REPEATS runs: the one the shared machine disturbed least) on the
# comma-separated INPUTS (each looped LOOPS times); an empty GRAPH reads the inputs the same way and
# composes nothing.
ffmpeg_run() {
  local args=(-hide_banner -nostdin -benchmark -filter_threads 1 -filter_complex_threads 1) input index
  IFS=, read -ra inputs <<<"$1"
  for input in "${inputs[@]}"; do args+=(-threads 1 -stream_loop $((loops - 1)) -i "$input"); done
  local graph=$2
  if [ -z "$graph" ]; then
    # Every input through the filter graph and dropped there but the first, which goes out unchanged:
    # the same reading, decoding and one output as a real run, without the composition.
    graph="[0:v]null"
    for ((index = 1; index < ${#inputs[@]}; index++)); do graph+=";[$index:v]nullsink"; done
  fi
  args+=(-filter_complex "$graph")
  for _ in $(seq "$repeats"); do
    ffmpeg "${args[@]}" -f null - 2>&1 | tr '\r' '\n' |
      awk '/^frame=/ { sub("frame=", ""); n = $1 } /bench: utime/ { sub("utime=", "", $2); sub("s", "", $2); sub("stime=", "", $3); sub("s", "", $3); cpu = $2 + $3; user = $2 }
        END { if (n == 0 || cpu == "") exit 1; print cpu, user, n }'
  done | sort -n | head -n 1
}

# same_pictures INPUTS GRAPH PICTURES: ffmpeg's psnr of the pictures GRAPH makes from INPUTS (once over
# them) against PICTURES, the ones studio made.
same_pictures() {
  local args=(-hide_banner -nostdin) input
  IFS=, read -ra inputs <<<"$1"
  for input in "${inputs[@]}"; do args+=(-i "$input"); done
  ffmpeg "${args[@]}" -i "$3" -filter_complex "$2[c];[c][${#inputs[@]}:v]psnr" -f null - 2>&1 |
    awk '/PSNR y:/ { for (i = 1; i <= NF; i++) if ($i ~ /^(y|u|v|average):/) printf "%s ", $i }'
}

declare -A base base_user
{
  echo
  echo "### Compositor per program frame, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
  echo
  echo "| job | studio CPU ms per frame | ffmpeg peer | ffmpeg CPU ms per frame (net of reading) | ratio studio / ffmpeg | ffmpeg user-only ms (net) | ratio to user-only |"
  echo "|---|---|---|---|---|---|---|"
  while IFS=$'\t' read -r job studio peer inputs graph _; do
    if [ "$peer" = "-" ]; then
      echo "| $job | $studio | (none: studio only) | | | | |"
      continue
    fi
    if [ -z "${base[$inputs]:-}" ]; then
      read -r cpu user _ <<<"$(ffmpeg_run "$inputs" "")"
      base[$inputs]=$(awk -v c="$cpu" -v n=$((frames * loops)) 'BEGIN { printf "%.3f", c * 1000 / n }')
      base_user[$inputs]=$(awk -v c="$user" -v n=$((frames * loops)) 'BEGIN { printf "%.3f", c * 1000 / n }')
    fi
    read -r cpu user count <<<"$(ffmpeg_run "$inputs" "$graph")"
    net=$(awk -v c="$cpu" -v n="$count" -v b="${base[$inputs]}" 'BEGIN { printf "%.3f", c * 1000 / n - b }')
    net_user=$(awk -v c="$user" -v n="$count" -v b="${base_user[$inputs]}" 'BEGIN { printf "%.3f", c * 1000 / n - b }')
    ratio() { awk -v s="$studio" -v f="$1" 'BEGIN { if (f > 0) printf "%.2f", s / f; else printf "(below noise)" }'; }
    echo "| $job | $studio | $peer | $net | $(ratio "$net") | $net_user | $(ratio "$net_user") |"
  done <"$work/jobs.tsv"
  echo
  echo "Reading the inputs (subtracted above), ms per program frame (user + system, user): $(for k in "${!base[@]}"; do printf '%s: %s, %s; ' "$(tr ',' '\n' <<<"$k" | xargs -n1 basename | paste -sd' ')" "${base[$k]}" "${base_user[$k]}"; done)"
  show=$(awk -F'\t' '$1 ~ /^show-/ { print $2; exit }' "$work/jobs.tsv")
  echo "1080p30 show (4 cameras + band): $show ms of the 33.3 ms a frame lasts, $(awk -v s="$show" 'BEGIN { printf "%.0f", s * 100 / 33.333 }')% of one core."
  echo
  echo "The same pictures? PSNR of studio's against the bilinear ffmpeg graph's, over the $frames frames (Y U V average, dB):"
  echo
  while IFS=$'\t' read -r job _ peer inputs graph pictures; do
    [[ -n "$pictures" && "$peer" == *bilinear* ]] || continue
    echo "- $job: $(same_pictures "$inputs" "$graph" "$pictures")"
  done <"$work/jobs.tsv"
  echo
  echo "ffmpeg graphs:"
  echo
  cut -f1,3,5 "$work/jobs.tsv" | awk -F'\t' '$2 != "-" { printf "- %s, %s: `%s`\n", $1, $2, $3 }'
} | tee -a "$work/table.md"
mkdir -p bench-results
cat "$work/table.md" >>bench-results/latest.md
