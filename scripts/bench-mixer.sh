#!/usr/bin/env bash
# Benchmark: the program's audio mixer (issue 13) per second of audio, side by side in one run with the
# ffmpeg CLI doing the same job on the same inputs.
#
# The inputs: 8 stereo 48 kHz inputs of camera-like audio (speech-like noise bursts with a syllable-rate
# envelope and random gaps, over a quiet tone of its own per input), made by Benchmarks/mixer-bench
# and written as float WAV files.
# The job: per input gain (-6..+6 dB), pan (one mono-to-both), one 40 ms delay, one input following a
# camera that is on air 2 s out of 4; summed; a brickwall limiter at -1 dBFS; the EBU R128 meter
# (momentary, short-term, integrated, range, true peak).
# - studio: `Mixer.AudioMixer` in 10 ms blocks as the audio thread runs it, with its per input and
#   program meters and libebur128: CPU time of its one thread per second of audio, the least of REPEATS
#   runs (the inputs already in memory, as capture hands them over). Also the R128 meter alone (part of it).
# - ffmpeg: the filter graph mixer-bench prints for the same settings (volume, pan, adelay, a volume
#   expression for the follow, amix=normalize=0, alimiter, ebur128=peak=true), single-threaded, `-f null`;
#   CPU time (user + system, `-benchmark`) per second of audio, minus the same 8 files read through a
#   graph that mixes nothing (anull + anullsink: reading and converting the files, one output).
# Both report the integrated loudness of what they made: equal when they did the same job.
#
# Usage: scripts/bench-mixer.sh [SECONDS of audio, default 60] [REPEATS, the least CPU counts, default 3]
# Results: printed, and appended as a Markdown table to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-60}
repeats=${2:-3}
swift build -c release --product mixer-bench 2>&1 | tail -n 1
work=$(mktemp -d /tmp/studio-bench-mixer.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$(swift build -c release --show-bin-path)/mixer-bench" "$work" "$seconds" "$repeats" >"$work/studio.tsv"
graph=$(awk -F'\t' '$1 == "graph" { print $2 }' "$work/studio.tsv")
read -r studio limited studio_lufs <<<"$(awk -F'\t' '$1 == "mixer" { print $2, $3, $4 }' "$work/studio.tsv")"
loudness=$(awk -F'\t' '$1 == "loudness" { print $2 }' "$work/studio.tsv")

# ffmpeg_run GRAPH: "CPU_SECONDS INTEGRATED_LUFS" of a single-threaded ffmpeg run of GRAPH over the 8
# inputs (the least CPU of REPEATS runs); an empty GRAPH reads the inputs and mixes nothing.
ffmpeg_run() {
  local args=(-hide_banner -nostdin -nostats -benchmark -filter_threads 1 -filter_complex_threads 1) index
  for index in 1 2 3 4 5 6 7 8; do args+=(-threads 1 -i "$work/mic$index.wav"); done
  local graph=$1
  if [ -z "$graph" ]; then
    graph="[0:a]anull"
    for index in 1 2 3 4 5 6 7; do graph+=";[$index:a]anullsink"; done
  fi
  for _ in $(seq "$repeats"); do
    ffmpeg "${args[@]}" -filter_complex "$graph" -f null - 2>&1 |
      awk '/bench: utime/ { sub("utime=", "", $2); sub("s", "", $2); sub("stime=", "", $3); sub("s", "", $3); cpu = $2 + $3 }
           /^ +I: / { lufs = $2 } END { if (cpu == "") exit 1; print cpu, (lufs == "" ? "-" : lufs) }'
  done | sort -n | head -n 1
}

read -r base _ <<<"$(ffmpeg_run "")"
read -r cpu ffmpeg_lufs <<<"$(ffmpeg_run "$graph")"
ffmpeg_ms=$(awk -v c="$cpu" -v b="$base" -v s="$seconds" 'BEGIN { printf "%.3f", (c - b) * 1000 / s }')
base_ms=$(awk -v b="$base" -v s="$seconds" 'BEGIN { printf "%.3f", b * 1000 / s }')
ratio=$(awk -v s="$studio" -v f="$ffmpeg_ms" 'BEGIN { if (f > 0) printf "%.2f", s / f; else printf "(below noise)" }')
{
  echo
  echo "### Audio mixer, 8 inputs, per second of audio, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
  echo
  echo "| job | studio CPU ms per s of audio | of which R128 | ffmpeg CPU ms per s (net of reading) | ratio studio / ffmpeg | integrated LUFS studio / ffmpeg |"
  echo "|---|---|---|---|---|---|"
  echo "| 8 inputs: gain, pan, delay, follow, limiter, meters, R128 | $studio | $loudness | $ffmpeg_ms | $ratio | $studio_lufs / $ffmpeg_lufs |"
  echo
  echo "$seconds s of audio, the least of $repeats runs. Reading the 8 WAV files (subtracted above): $base_ms ms per second of audio."
  echo "studio's limiter acted on $limited frames. One core is 1000 ms per second: studio's mixer uses $(awk -v s="$studio" 'BEGIN { printf "%.2f", s / 10 }') % of one core."
  echo
  echo "ffmpeg graph: \`$graph\`"
} | tee -a "$work/table.md"
mkdir -p bench-results
cat "$work/table.md" >>bench-results/latest.md
