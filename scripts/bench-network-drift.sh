#!/usr/bin/env bash
# Benchmark (issue 30): a network camera's A/V sync and buffer over a long run. A phone (ffmpeg to a
# private nginx-rtmp, its clock PPM fast against this PC's) sends a flash and a beep together every
# second; studio pulls it, keeps it on program and records the program. Prints the camera's buffer,
# drift estimate and picture counts every minute, then the recording's flash-to-beep offsets per tenth
# of the run. The run is StudioServerTests' NetworkAVDriftBenchmark (debug build, as the suite),
# enabled by STUDIO_NETWORK_DRIFT_SECONDS.
#
# Usage: scripts/bench-network-drift.sh [SECONDS, default 3600] [PPM, default 300]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-3600}
ppm=${2:-300}
swift build --build-tests 2>&1 | tail -n 1
mkdir -p bench-results
out=$(mktemp /tmp/studio-bench-netdrift.XXXXXX)
trap 'rm -f "$out"' EXIT
STUDIO_NETWORK_DRIFT_SECONDS=$seconds STUDIO_NETWORK_DRIFT_PPM=$ppm \
  swift test --skip-build --filter NetworkAVDriftBenchmark >"$out" 2>&1 || { grep 'net-drift:' "$out"; tail -n 40 "$out"; exit 1; }
{
  echo "### Network A/V drift run, $(date -u +%Y-%m-%d) ($seconds s, $ppm ppm, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo '```'
  grep 'net-drift:' "$out" | sed 's/^net-drift: //'
  echo '```'
} | tee -a bench-results/latest.md
