#!/usr/bin/env bash
# Benchmark (issue 13): the whole program audio path with 8 microphones, in a running `studio serve`,
# against the ffmpeg CLI doing the same job in the same run (rounds interleaved: studio, ffmpeg, ...).
#
# studio: a private headless PipeWire daemon (deploy/pipewire-test.conf without its test microphone,
# own XDG_RUNTIME_DIR) and 8 virtual microphones (pw-virtual-camera --mic, each its own graph driver,
# tones of 300..1000 Hz, clocks +-100, +-150, +-200, +-300 ppm against CLOCK_MONOTONIC) captured by
# `studio serve --audio pipewire:all` (one 320x180@30 test-pattern camera for the picture, program
# recorded to a file). The audio path: every input's capture and adaptive resampling, the mixer with
# its per input and program meters, the limiter and EBU R128 loudness (thread cap.audio), PipeWire's
# loops that copy the quanta (threads pw.mic, data-loop*, and cap.audio.conn: each input's connect thread
# starts its PipeWire loops, which keep that name), AAC (thread encode.audio). Measured: their
# CPU (utime + stime from /proc/PID/task/TID/stat) per second, after 20 s of settling, over SECONDS;
# and each input's latency, capture to the encoder's input (`studio audio --json`: its jitter buffer,
# the clock's 10 ms block, the mixer's 100 ms lag), at the start and at the end of the window.
#
# ffmpeg (the peer): the same job on 8 generated sines (`-f lavfi sine`, made stereo float): each
# resampled at its own ratio (asetrate 48000 * (1 + ppm), aresample 48000: the same off-unity
# resampling), a gain and a per input meter (volume, volumedetect), amix=normalize=0, alimiter,
# ebur128=peak=true, AAC 128 kb/s (FFmpeg's own encoder, as studio's); single-threaded, `-f null`;
# CPU (`-benchmark` utime + stime) per second of audio, minus the same 8 sines made and dropped
# (generation is no part of the job). Twice: as fast as it goes, and at the pace of live audio (`-re`
# on every input), as studio has to run: a stage that wakes for each frame finds its caches cold
# (FFmpeg's AAC encoder alone, paced one frame at a time, costs more than the same frames back to back).
#
# Usage: scripts/bench-audio-path.sh [SECONDS per run, default 60] [ROUNDS, default 2]
#   (SWIFT_SCRATCH_PATH=DIR: build the release binaries there, e.g. beside a debug build in use;
#    STUDIO_BIN_DIR=DIR: run the studio (with its libStudioEngine.so) and pw-virtual-camera found in DIR
#    instead of building, e.g. a copy of the build before a change, to measure before and after in the
#    same session)
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-60}
rounds=${2:-2}
settle=20
if [ -n "${STUDIO_BIN_DIR:-}" ]; then
  binpath=$STUDIO_BIN_DIR
else
  build=(swift build -c release ${SWIFT_SCRATCH_PATH:+--scratch-path "$SWIFT_SCRATCH_PATH"})
  "${build[@]}" --product studio 2>&1 | tail -n 1
  "${build[@]}" --product pw-virtual-camera 2>&1 | tail -n 1
  # `studio serve` runs in the engine library, found beside the binary.
  "${build[@]}" --product StudioEngine 2>&1 | tail -n 1
  binpath=$("${build[@]}" --show-bin-path)
fi
bin=$binpath/studio

work=$(mktemp -d /tmp/studio-bench-audio.XXXXXX)
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR="$work/run" PIPEWIRE_REMOTE="$work/run/pipewire-0"
# The test config without its own microphone (exactly the 8 below are the inputs).
python3 - deploy/pipewire-test.conf "$work/pipewire.conf" <<'PY'
import sys
text = open(sys.argv[1]).read()
at = text.index("node.name        = studio-test-mic")
start = text.rindex("{ factory = adapter", 0, at)
depth, end = 0, start
for end in range(start, len(text)):
    depth += {"{": 1, "}": -1}.get(text[end], 0)
    if depth == 0:
        break
open(sys.argv[2], "w").write(text[:start] + text[end + 1:])
PY
pipewire -c "$work/pipewire.conf" >"$work/pipewire.log" 2>&1 &
daemon_pid=$!
producer_pids=()
studio_pid=
cleanup() {
  [ -n "$studio_pid" ] && kill "$studio_pid" 2>/dev/null || true
  for p in "${producer_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 50); do [ -S "$PIPEWIRE_REMOTE" ] && break; sleep 0.1; done
ppms=(100 -100 150 -150 200 -200 300 -300)
tones=(300 400 500 600 700 800 900 1000)
for n in 1 2 3 4 5 6 7 8; do
  "$binpath/pw-virtual-camera" --mic "mic-$n" --tone "${tones[$((n - 1))]}" --ppm "${ppms[$((n - 1))]}" >"$work/mic$n.log" 2>&1 &
  producer_pids+=($!)
done
for n in 1 2 3 4 5 6 7 8; do
  for _ in $(seq 100); do grep -q ready "$work/mic$n.log" && break; sleep 0.1; done
done
ticks=$(getconf CLK_TCK)

# thread_ticks PID: "name:ticks" for each thread of PID (names without spaces).
thread_ticks() {
  for t in /proc/"$1"/task/*; do
    [ -r "$t/stat" ] || continue
    sed -E 's/^[0-9]+ \((.*)\) /\1\t/' "$t/stat" | awk -F'\t' '{ split($2, f, " "); gsub(/ /, "_", $1); print $1 ":" f[12] + f[13] }'
  done
}

# studio_run ROUND: "latency-at-start latency-at-end cpu-breakdown" of one studio run.
studio_run() {
  local round=$1
  "$bin" serve --audio pipewire:all --backends none --cameras 1 --camera-size 320x180 --program 320x180@30 --no-iso \
    --record "$work/rec$round" --db "$work/db$round.sqlite" --socket "$work/s$round.sock" >"$work/studio$round.log" 2>&1 &
  studio_pid=$!
  local playing=0
  for _ in $(seq 300); do
    playing=$("$bin" audio --json --socket "$work/s$round.sock" 2>/dev/null |
      python3 -c 'import json, sys; print(sum(1 for i in json.load(sys.stdin)["inputs"] if i["latency_ms"] is not None))' 2>/dev/null || echo 0)
    [ "$playing" = 8 ] && break
    sleep 0.1
  done
  # (This runs in a subshell: the EXIT trap does not know this studio, so it is stopped here.)
  [ "$playing" = 8 ] || { echo "studio: $playing of 8 inputs playing" >&2; tail -n 20 "$work/studio$round.log" >&2
                          kill -INT "$studio_pid"; wait "$studio_pid" || true; exit 1; }
  sleep "$settle"
  local l0 l1 t0 t1 w0 w1
  l0=$("$bin" audio --json --socket "$work/s$round.sock")
  t0=$(thread_ticks "$studio_pid"); w0=$(date +%s.%N)
  sleep "$seconds"
  t1=$(thread_ticks "$studio_pid"); w1=$(date +%s.%N)
  l1=$("$bin" audio --json --socket "$work/s$round.sock")
  kill -INT "$studio_pid"
  wait "$studio_pid" || true
  studio_pid=
  python3 - "$l0" "$l1" "$t0" "$t1" "$w0" "$w1" "$ticks" <<'PY'
import sys, json, collections
l0, l1, t0, t1, w0, w1, hz = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
a, b = parse(t0), parse(t1)
wall = float(w1) - float(w0)
def share(match): return sum(b[k] - a[k] for k in a if match(k)) / int(hz) / wall
groups = {"cap.audio": share(lambda k: k == "cap.audio"), "encode.audio": share(lambda k: k == "encode.audio"),
          "pipewire": share(lambda k: k.startswith(("pw.mic", "data-loop", "pw-data", "cap.audio.conn")))}
busy = {k: round(100 * (b[k] - a[k]) / int(hz) / wall, 2) for k in a if k in b and b[k] > a[k]}
def latencies(text): return [i["latency_ms"] for i in json.loads(text)["inputs"]]
ppm = [i["clock_ppm"] for i in json.loads(l1)["inputs"]]
print(json.dumps({"start": latencies(l0), "end": latencies(l1), "ppm": ppm, "cpu": groups, "wall": wall, "threads": busy}))
PY
}

# ffmpeg_run PACE GRAPH: CPU seconds (user + system) of a single-threaded ffmpeg run of GRAPH over the 8
# sines, as fast as it can (PACE "fast") or at the pace of live audio (PACE "live": -re on every input, as
# studio runs, each stage waking as the audio comes, its caches cold after each wait).
ffmpeg_run() {
  local args=(-hide_banner -nostdin -nostats -benchmark -filter_threads 1 -filter_complex_threads 1) n
  for n in 0 1 2 3 4 5 6 7; do
    [ "$1" = live ] && args+=(-re)
    args+=(-f lavfi -i "sine=frequency=${tones[$n]}:sample_rate=48000:duration=$seconds")
  done
  ffmpeg "${args[@]}" -filter_complex "$2" "${@:3}" 2>&1 |
    awk '/bench: utime/ { sub("utime=", "", $2); sub("s", "", $2); sub("stime=", "", $3); sub("s", "", $3); print $2 + $3 }'
}
job="" base=""
for n in 0 1 2 3 4 5 6 7; do
  ratio=$(awk -v p="${ppms[$n]}" 'BEGIN { printf "%.3f", 48000 * (1 + p / 1e6) }')
  job+="[$n:a]aformat=sample_fmts=flt:channel_layouts=stereo,asetrate=$ratio,aresample=48000,volume=-3dB,volumedetect[a$n];"
  base+="[$n:a]aformat=sample_fmts=flt:channel_layouts=stereo"
  [ "$n" = 0 ] && base+="[out];" || base+=",anullsink;"
done
job+="[a0][a1][a2][a3][a4][a5][a6][a7]amix=inputs=8:normalize=0,alimiter=limit=0.9,ebur128=peak=true:framelog=verbose[out]"
base=${base%;}

rows=()
for round in $(seq "$rounds"); do
  rows+=("studio $(studio_run "$round")")
  rows+=("ffmpeg $(ffmpeg_run fast "$job" -map '[out]' -c:a aac -b:a 128k -f null -) $(ffmpeg_run fast "$base" -map '[out]' -f null -)")
  rows+=("paced $(ffmpeg_run live "$job" -map '[out]' -c:a aac -b:a 128k -f null -) $(ffmpeg_run live "$base" -map '[out]' -f null -)")
done

mkdir -p bench-results
python3 - "$seconds" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)" "${rows[@]}" <<'PY' | tee -a bench-results/latest.md
import sys, json, statistics, datetime, subprocess
seconds, rounds, load, *rows = sys.argv[1:]
seconds = float(seconds)
studio, peer, paced = [], [], []
for row in rows:
    kind, rest = row.split(" ", 1)
    if kind == "studio": studio.append(json.loads(rest))
    else:
        job, base = map(float, rest.split())
        (peer if kind == "ffmpeg" else paced).append((job - base) / seconds)
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Audio path, 8 microphones, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC: {seconds:.0f} s per run, {rounds} round(s), {cpu_model}, {subprocess.getoutput('nproc')} cores, load at the end {load}\n")
# The ratio leaves the PipeWire threads out: ffmpeg captures nothing.
print("| round | studio audio path CPU, % of one core (cap.audio + encode.audio) | cap.audio | encode.audio | PipeWire threads (cap.audio.conn, pw.mic, data-loop) | all three | ffmpeg same job, % of one core | ratio studio (cap.audio + encode.audio) / ffmpeg | ffmpeg same job at live pace (-re) | ratio studio / ffmpeg at live pace | latency capture to encoder, ms, start (min..max of 8) | at the end | growth, ms (max of 8) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for i, (s, f, live) in enumerate(zip(studio, peer, paced), 1):
    c = s["cpu"]; total = sum(c.values()); path = c["cap.audio"] + c["encode.audio"]
    pairs = [(b, e) for b, e in zip(s["start"], s["end"]) if b is not None and e is not None]
    growth = max((abs(e - b) for b, e in pairs), default=float("nan"))
    def span(values):
        known = [v for v in values if v is not None]
        missing = len(values) - len(known)
        return (f"{min(known):.1f}..{max(known):.1f}" if known else "-") + (f" ({missing} not playing)" if missing else "")
    print(f"| {i} | {path * 100:.2f} | {c['cap.audio'] * 100:.2f} | {c['encode.audio'] * 100:.2f} | {c['pipewire'] * 100:.2f} | {total * 100:.2f} | "
          f"{f * 100:.2f} | {path / f:.2f} | {live * 100:.2f} | {path / live:.2f} | {span(s['start'])} | {span(s['end'])} | {growth:.1f} |")
print(f"\nThe inputs' clocks as studio measured them at the end of the last run: {', '.join('-' if p is None else f'{p:+.0f}' for p in studio[-1]['ppm'])} ppm "
      "(set: +100, -100, +150, -150, +200, -200, +300, -300).")
top = sorted(studio[-1]["threads"].items(), key=lambda kv: -kv[1])[:12]
print("studio's busiest threads in the last run, % of one core: " + ", ".join(f"{k} {v:.2f}" for k, v in top) + ".")
PY
