#!/usr/bin/env bash
# Benchmark (issue 30, network cameras): what one 1280x720@30 network camera costs studio, against the
# ffmpeg CLI receiving the same stream (`ffmpeg -i URL -f null -`: receive and decode, nothing else),
# and whether eight of them plus a 1280x720 program keep up on this machine.
#
# The stream: camera-like content (ffmpeg's testsrc2, moving, with sensor noise) in H.264 (x264
# veryfast, 3 Mbit/s, a keyframe a second) and AAC, published once to a private nginx-rtmp; every
# receiver pulls it from nginx over loopback (as studio pulls a phone's stream).
# Runs, each SECONDS long after a start-up pause, alternating, ROUNDS times:
#   - ffmpeg: `ffmpeg -i rtmp://... -f null -`: its CPU s/s;
#   - studio1: studio pulling the stream as one network camera (cut to program), a 1280x720@30 program
#     (x264 ultrafast) pushed to nginx, one small test camera: the CPU of its net.* threads (receive,
#     decode, convert, play out) and studio's whole CPU;
#   - studio0: the same studio without the network camera: its whole CPU (studio1 minus this is the
#     network camera's whole cost, the program's composition of it included);
#   - studio8: eight network cameras of the same stream: net.* CPU, studio's CPU, peak RSS, and
#     whether the program kept up (late ticks, pictures dropped).
# CPU from /proc (utime + stime, per thread for net.*).
#
# Usage: scripts/bench-network.sh [SECONDS per run, default 20] [ROUNDS, default 2]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
source scripts/bench-rig.sh
bench_build studio
bin=$binpath/studio
bench_rig network
ffmpeg -nostdin -v error -re -f lavfi -i "testsrc2=s=1280x720:r=30,noise=alls=12:allf=t" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000" -c:v libx264 -preset veryfast -b:v 3000k -g 30 -pix_fmt yuv420p \
  -c:a aac -b:a 128k -f flv "$url/source" >"$work/publisher.log" 2>&1 &
producer_pids+=($!)
sleep 3

# config N: a config with N network cameras pulling the source (names net1..netN).
config() {
  local n=$1 file="$work/studio-$1.yaml"
  {
    echo "http: {enabled: false}"
    if [ "$n" -gt 0 ]; then
      echo "network:"
      echo "  pull:"
      for i in $(seq "$n"); do echo "    - {name: net$i, url: \"$url/source\", latency_ms: 300}"; done
    fi
  } >"$file"
  echo "$file"
}

# After the start-up pause of each run (bench_measure): the cut.
bench_started() {
  if [[ "$1" == studio[1-9]* ]]; then "$bin" switch net1 --socket "$work/studio.sock" >/dev/null 2>&1 || true; fi
}

results=()
for round in $(seq "$rounds"); do
  results+=("$(bench_measure ffmpeg net. ffmpeg -nostdin -v error -i "$url/source" -f null -)")
  for n in 0 1 8; do
    rm -f "$work/bench.db"*
    results+=("$(bench_measure "studio$n" net. "$bin" serve --config "$(config "$n")" --cameras 1 --camera-size 320x180 --audio silence \
        --rtmp "$url/program$n" --program 1280x720@30 --preset ultrafast --bitrate 3000k --no-iso \
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
print(heading("Network cameras", seconds, rounds))
measure_table(by, "net.*")
med = lambda name, i: median(by, name, i)
print(f"\nOne network camera's threads (receive, decode, convert, play out) / ffmpeg -i URL -f null -: **{med('studio1', 1) / med('ffmpeg', 0):.2f}**")
print(f"One network camera's whole cost (studio1 - studio0) / ffmpeg: **{(med('studio1', 0) - med('studio0', 0)) / med('ffmpeg', 0):.2f}**")
print(f"Eight network cameras' threads / eight times ffmpeg's: **{med('studio8', 1) / (8 * med('ffmpeg', 0)):.2f}**")
PY
