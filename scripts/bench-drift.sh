#!/usr/bin/env bash
# Benchmark (issue 13): audio inputs whose clocks drift. Two virtual microphones in a private PipeWire
# rig (pw-virtual-camera --mic: each its own graph driver, one 300 ppm fast and one 300 ppm slow
# against CLOCK_MONOTONIC) captured by an AudioInputSet on the program clock for SECONDS. Prints the
# buffer delay each input adds, its target, the estimated clock ratio and the last-resort counters every
# 30 s, then the delay's trend after the first minute (least squares) extrapolated to 8 hours.
# The run is CaptureTests' AudioDriftBenchmark (debug build, as the suite), enabled by
# STUDIO_DRIFT_BENCH_SECONDS.
#
# Usage: scripts/bench-drift.sh [SECONDS, default 600]
#   STUDIO_DRIFT_BENCH_BLOCK_MS=20 in the environment runs the program clock in 20 ms blocks (default 10).
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-600}
swift build --build-tests 2>&1 | tail -n 1
mkdir -p bench-results
out=$(mktemp /tmp/studio-bench-drift.XXXXXX)
trap 'rm -f "$out"' EXIT
STUDIO_DRIFT_BENCH_SECONDS=$seconds swift test --skip-build --filter AudioDriftBenchmark >"$out" 2>&1 || { tail -n 40 "$out"; exit 1; }
{
  echo "### Drift run, $(date -u +%Y-%m-%d) ($seconds s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo '```'
  grep 'drift-bench:' "$out" | sed 's/^drift-bench: //'
  echo '```'
} | tee -a bench-results/latest.md
