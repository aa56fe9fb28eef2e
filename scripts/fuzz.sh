#!/usr/bin/env bash
# The long fuzz (issue 34): every input surface of a running `studio serve` (control socket lines,
# HTTP requests, config files applied with `reload`, CLI invocations) drawn by grammar for MINUTES
# minutes each, by Tests/StudioServerTests/Fuzz/fuzz_surfaces.py (Hypothesis, /usr/bin/python3; its
# docstring has the properties checked). CI runs the same fuzzer short, seeded
# (FuzzEndToEndTests). A failure prints the surface, the (shrunk) input and what went wrong; fix it
# and add its input to a regression test.
#
# Usage: scripts/fuzz.sh [MINUTES per surface, default 10] [SEED, default: the time] [SURFACES]
#   SURFACES: comma-separated among control,http,config,cli,osc (default: the first four, one after
#   another; osc gives the servers osc.listen and draws OSC datagrams for it)
#   FUZZ_TOKEN=1: the servers get http.token and HTTP requests draw it, near misses and none (with http)
# Results: the fuzzer's JSON line (examples and seconds per surface, late ticks idle, fuzzing and of the
# unfuzzed witness server),
# printed and appended to bench-results/fuzz.md (record it in docs/security.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
minutes=${1:-10}
seed=${2:-$(date +%s)}
surfaces=${3:-control,http,config,cli}
/usr/bin/python3 -c 'import hypothesis' 2>/dev/null || { echo "fuzz: python3-hypothesis is missing: run scripts/setup.sh" >&2; exit 1; }
swift build --product studio 2>&1 | tail -n 1
swift build 2>&1 | tail -n 1  # the engine library `serve` loads
bin=$(swift build --show-bin-path)/studio
echo "fuzz: $minutes min per surface ($surfaces), seed $seed"
result=$(/usr/bin/python3 Tests/StudioServerTests/Fuzz/fuzz_surfaces.py --binary "$bin" --seed "$seed" \
  --minutes "$minutes" --surfaces "$surfaces" --idle 30 ${FUZZ_TOKEN:+--token} | tail -n 1) || true  # a failure is judged below, after it is printed
echo "$result"
mkdir -p bench-results
echo "- $(date -u +%Y-%m-%dT%H:%MZ) seed $seed, $minutes min per surface: \`$result\`" >> bench-results/fuzz.md
case "$result" in *'"failed"'*|'') exit 1 ;; esac
