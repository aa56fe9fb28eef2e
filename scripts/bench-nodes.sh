#!/usr/bin/env bash
# Benchmark (issue 32, capture nodes): what a node's hop costs, against the same cameras local to a
# studio and against the ffmpeg CLI receiving the node's stream, in the same run:
#   1. the latency a hop adds: a picture's capture on the node to its packet in the switcher's program
#      on the wire, against the same camera local to a studio (capture to program on the wire);
#   2. the switcher's CPU per remote 1280x720@30 camera, against a local one and against
#      `ffmpeg -i srt://... -f null -` receiving and decoding the same stream;
#   3. how many remote cameras the switcher takes in real time (late ticks, pictures dropped);
#   4. the node's clock-offset measurement's error against the offset injected into its clock.
#
# One machine: node and switcher are two `studio serve` processes on loopback (the switcher's SRT
# listener names node pc2; the node's tally_from and clock read the switcher's HTTP API), each node
# camera sent as x264 veryfast 3000k MPEG-TS over SRT (libsrt's 120 ms latency).
# Latency runs (alternating, each ROUNDS times): one PipeWire virtual camera (pw-virtual-camera --stamp
# 1: 1280x720@30 I420 with camera-like noise NOISE, each picture carrying the CLOCK_MONOTONIC time it
# is sent at as a `CaptureStamp` bar code); the program (1280x720@30, x264 veryfast zerolatency 3000k)
# pushed to a private nginx-rtmp and read by latency-probe (wire latency = the packet's arrival - the
# stamp, same clock):
#   local:     a studio capturing the camera itself (--backends pipewire), the camera on program;
#   nodeSHIFT: a node capturing it (--backends pipewire, --inject-clock-offset SHIFT ms) into a
#              switcher with no camera of its own, pc2/CAM on program. The hop = its p50 - local's
#              p50 in the same round. Every second of the probe's window the node's `status --json`
#              (switcher_clock: offset_ms, rtt_ms) and the switcher's `cameras --json`
#              (network.capture_time.capture_latency_ms) are sampled: error = |offset_ms + SHIFT|.
# CPU runs (bench_measure, scripts/bench-rig.sh: SECONDS after a start-up pause, alternating): test-
# pattern cameras 1280x720@30 with sensor noise NOISE (moving pattern, timecode), program as above but
# x264 PRESET (default veryfast) pushed to nginx, no ISO files:
#   studio-none:     the switcher with no camera (the program on the slate): the base;
#   studio-localN:   the switcher with N local test cameras (cam1 on program), N in LOCAL;
#   studio-remoteN:  the switcher with no camera of its own and a node of N test cameras (nice NODE_NICE,
#                    its own program 640x360@30), pc2/cam1 on program, N in COUNTS: the switcher's CPU,
#                    its net.* threads' (receive, demux, decode, convert, play out), late ticks, and
#                    per camera the pictures in, dropped and repeated (network.pictures_*) and frames
#                    dropped; the node's CPU beside it (it shares the 2 cores: say so with the numbers);
#   ffmpeg:          `ffmpeg -i srt://127.0.0.1:PORT?mode=listener -f null -` taking one node camera's
#                    stream (the node sends to it instead of a switcher): receive, demux, decode.
#
# Usage: scripts/bench-nodes.sh [SECONDS per run, default 20] [ROUNDS, default 2]
#        COUNTS="1 2 4 6 8" (remote cameras), LOCAL="1 4" (local cameras), SHIFTS="0 3000" (ms),
#        NOISE=12, PRESET=veryfast, NODE_NICE=10, PARTS="latency cpu" (either alone)
# Results: printed, and appended to bench-results/nodes-latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-20}
rounds=${2:-2}
counts=${COUNTS:-1 2 4 6 8}
locals=${LOCAL:-1 4}
shifts=${SHIFTS:-0 3000}
noise=${NOISE:-12}
preset=${PRESET:-veryfast}
node_nice=${NODE_NICE:-10}
parts=${PARTS:-latency cpu}
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera latency-probe
bin=$binpath/studio
bench_rig nodes
# A node started inside a command substitution (bench_measure's) is no child of this shell: its PID is
# in $work/node.pid, ended on exit too.
trap 'kill "$(cat "$work/node.pid" 2>/dev/null)" 2>/dev/null || true; bench_cleanup' EXIT

free_port() { python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_$1); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }

# ports: fresh ports for the next switcher (SRT listener, HTTP API) and the configs that name them.
ports() {
  srt_port=$(free_port DGRAM)
  http_port=$(free_port STREAM)
  printf 'network:\n  srt:\n    listen: 127.0.0.1:%s\n    nodes: [pc2]\n' "$srt_port" >"$work/switcher.yaml"
  printf 'node:\n  name: pc2\n  send: srt://127.0.0.1:%s\n  tally_from: http://127.0.0.1:%s\n  video: {bitrate: 3000k}\n' \
    "$srt_port" "$http_port" >"$work/node.yaml"
}

# switcher STREAM PRESET MORE...: the switcher's command line (no camera unless MORE gives some).
switcher() {
  local stream=$1 x264=$2
  shift 2
  switcher_cmd=("$bin" serve --config "$work/switcher.yaml" --audio silence --rtmp "$url/$stream" --program 1280x720@30
    --preset "$x264" --bitrate 3000k --no-iso --http "127.0.0.1:$http_port" --db "$work/switcher-$stream.db"
    --socket "$work/studio.sock" "$@")
}

# node_start NICE MORE...: starts the node (its cameras and clock shift in MORE); `node_pid`.
node_start() {
  local niceness=$1
  shift
  rm -f "$work/node.db"*
  nice -n "$niceness" "$bin" serve --config "$work/node.yaml" --audio silence --program 640x360@30 --no-iso --no-http \
    --db "$work/node.db" --socket "$work/node.sock" "$@" >"$work/node.out" 2>&1 &
  node_pid=$!
  echo "$node_pid" >"$work/node.pid"
}
node_ticks() { [ -z "${node_pid:-}" ] || cpu_ticks "$node_pid" || true; }

# remote_live N: waits (30 s at most) until N node cameras are live on the switcher, then puts the
# first on program; prints its name (nothing if they never came).
remote_live() {
  local names=""
  for _ in $(seq 300); do
    names=$("$bin" cameras --json --socket "$work/studio.sock" 2>/dev/null | python3 -c '
import sys, json
live = sorted(c["name"] for c in json.load(sys.stdin)["cameras"] if c["name"].startswith("pc2/") and c["state"] == "live")
print(" ".join(live) if len(live) >= int(sys.argv[1]) else "")' "$1" 2>/dev/null || true)
    [ -n "$names" ] && break
    sleep 0.1
  done
  [ -n "$names" ] || { echo "bench: $1 node camera(s) never live on the switcher; node: $(tail -n 3 "$work/node.out")" >&2; return 0; }
  "$bin" switch "${names%% *}" --socket "$work/studio.sock" >/dev/null || true
  echo "${names%% *}"
}

# counters: "pictures_in pictures_dropped pictures_repeated frames_dropped" summed over the switcher's cameras.
counters() {
  "$bin" cameras --json --socket "$work/studio.sock" 2>/dev/null | python3 -c '
import sys, json
cams = json.load(sys.stdin)["cameras"]
net = lambda c, k: (c.get("network") or {}).get(k) or 0
print(*(sum(net(c, k) for c in cams) for k in ["pictures_in", "pictures_dropped", "pictures_repeated"]), sum(c.get("frames_dropped") or 0 for c in cams))' \
    2>/dev/null || echo "0 0 0 0"
}

# ---- 1 and 4: latency, local against through a node; the node's clock offset ----

latency_rows=()
if [[ " $parts " == *" latency "* ]]; then
  "$binpath/pw-virtual-camera" --node vcam-node --camera cam1 --size 1280x720 --rate 30 --format i420 --stamp 1 --noise "$noise" \
    >"$work/vcam.log" 2>&1 &
  producer_pids+=($!)
  for _ in $(seq 100); do grep -q ready "$work/vcam.log" 2>/dev/null && break; sleep 0.1; done

  # clock_samples FILE SHIFT: every second until $work/stop-sampling exists, "offset rtt capture_latency"
  # (the node's switcher_clock and the switcher's capture_latency_ms for pc2/*) appended to FILE.
  clock_samples() {
    while [ ! -e "$work/stop-sampling" ]; do
      python3 - "$("$bin" status --json --socket "$work/node.sock" 2>/dev/null || echo '{}')" \
        "$("$bin" cameras --json --socket "$work/studio.sock" 2>/dev/null || echo '{}')" >>"$1" <<'PY' || true
import sys, json
clock = json.loads(sys.argv[1]).get("switcher_clock") or {}
cams = json.loads(sys.argv[2]).get("cameras") or []
capture = [((c.get("network") or {}).get("capture_time") or {}).get("capture_latency_ms") for c in cams if c["name"].startswith("pc2/")]
value = lambda v: "nan" if v is None else v
if clock.get("measured"):
    print(value(clock.get("offset_ms")), value(clock.get("rtt_ms")), value(capture[0] if capture else None))
PY
      sleep 1
    done
  }

  # latency ROUND NAME [SHIFT]: one run (local without SHIFT, through the node with it); prints
  # "ROUND NAME frames misread wire_p50 wire_p95 wire_min wire_max".
  latency() {
    local round=$1 name=$2 shift_ms=${3:-} pids=() line
    ports
    if [ -z "$shift_ms" ]; then
      switcher "$name" veryfast --backends pipewire
      "${switcher_cmd[@]}" >"$work/$name.out" 2>&1 & pids+=($!)
    else
      switcher "$name" veryfast --backends none
      "${switcher_cmd[@]}" >"$work/$name.out" 2>&1 & pids+=($!)
      for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$http_port) 2>/dev/null && break; sleep 0.1; done
      node_start 0 --backends pipewire --inject-clock-offset "$shift_ms"
      pids+=("$node_pid")
      remote_live 1 >/dev/null
      rm -f "$work/stop-sampling"
      clock_samples "$work/clock-$shift_ms.txt" >/dev/null 2>&1 &
      pids+=($!)
    fi
    sleep 3
    line=$("$binpath/latency-probe" "$url/$name" --seconds "$seconds" --warmup 2 --label "$name" 2>"$work/$name.probe.err" || true)
    touch "$work/stop-sampling"
    bench_stop 10 "${pids[@]}"
    [ -n "$line" ] || { echo "$name: nothing measured; $(tail -n 3 "$work/$name.probe.err" "$work/$name.out" 2>/dev/null)" >&2; line="latency $name frames=0"; }
    python3 -c '
import sys
f = dict(x.split("=") for x in sys.argv[3].split()[2:])
print(sys.argv[1], sys.argv[2], *(f.get(k, "nan") for k in ["frames", "misread", "wire_p50", "wire_p95", "wire_min", "wire_max"]))' \
      "$round" "$name" "$line"
  }

  for round in $(seq "$rounds"); do
    latency_rows+=("$(latency "$round" local)")
    for s in $shifts; do latency_rows+=("$(latency "$round" "node$s" "$s")"); done
  done
  kill "${producer_pids[@]}" 2>/dev/null || true   # the camera: not beside the CPU runs
  wait "${producer_pids[@]}" 2>/dev/null || true
  producer_pids=()
fi

# ---- 2 and 3: the switcher's CPU per remote camera, and how many it takes ----

# After bench_measure's start-up pause: for a remote run, the node and the cut, then a sampler of the
# window's pictures and the node's CPU into $work/extra-NAME ("node_cpu pictures_in/s/camera dropped
# repeated frames_dropped"); for ffmpeg, the node sending it one camera.
bench_started() {
  local name=$1 n=0
  case $name in
    ffmpeg) node_start "$node_nice" --cameras 1 --camera-size 1280x720 --camera-noise "$noise"; sleep 3 ;;
    studio-remote*) n=${name#studio-remote}
      for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$http_port) 2>/dev/null && break; sleep 0.1; done
      node_start "$node_nice" --cameras "$n" --camera-size 1280x720 --camera-noise "$noise"
      remote_live "$n" >/dev/null
      sleep 1 ;;
    studio-local*) "$bin" switch cam1 --socket "$work/studio.sock" >/dev/null 2>&1 || true ;;
  esac
  (
    # Ends 2 s before bench_measure's window does: `cameras` is slow on a loaded machine. `pid` is
    # bench_measure's, the measured process (bash's dynamic scoping: this runs inside bench_measure).
    local c0 c1 w0 w1 k0 k1 t0 t1
    c0=$(counters); k0=$(node_ticks); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
    sleep "$(python3 -c "print(max($seconds - 2, 1))")"
    c1=$(counters); k1=$(node_ticks); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
    # Its net.* threads one by one, busiest first, for the report ("NAME thread:s/s,...").
    python3 -c '
import sys
sys.path.insert(0, "scripts")
from bench_ticks import parse
name, t0, t1, w0, w1, hz = sys.argv[1:]
a, b = parse(t0), parse(t1)
rates = sorted(((k, (b[k] - a[k]) / int(hz) / (float(w1) - float(w0))) for k in b if k.startswith("net.") and k in a), key=lambda x: -x[1])
print(name, ",".join(f"{k}:{r:.3f}" for k, r in rates[:8]) or "-")' "$1" "$t0" "$t1" "$w0" "$w1" "$ticks" >>"$work/threads.txt"
    python3 -c '
import sys
n, c0, c1, k0, k1, w0, w1, hz = sys.argv[1:]
wall = float(w1) - float(w0)
d = [b - a for a, b in zip(map(int, c0.split()), map(int, c1.split()))]
ticks = lambda s: int(s.split(":")[1]) if ":" in s else 0
node = (ticks(k1) - ticks(k0)) / int(hz) / wall
print(f"{node:.3f} {d[0] / wall / max(int(n), 1):.1f} {d[1]} {d[2]} {d[3]}")' "$n" "$c0" "$c1" "${k0:-}" "${k1:-}" "$w0" "$w1" "$ticks"
  ) >"$work/extra-$name" &
}

# cpu_run NAME CMD...: bench_measure's row, the sampler's columns after it; the node stopped after.
cpu_run() {
  local name=$1 row
  shift
  node_pid=""
  rm -f "$work/extra-$name" "$work/switcher-"*.db* "$work/node.pid"
  row=$(bench_measure "$name" net. "$@")
  if [ -s "$work/node.pid" ]; then bench_stop 10 "$(cat "$work/node.pid")"; rm -f "$work/node.pid"; fi
  for _ in $(seq 100); do [ -s "$work/extra-$name" ] && break; sleep 0.1; done
  echo "$row $(cat "$work/extra-$name" 2>/dev/null || echo "0 0 0 0 0")"
}

cpu_rows=()
if [[ " $parts " == *" cpu "* ]]; then
  for round in $(seq "$rounds"); do
    ports
    cpu_rows+=("$(cpu_run ffmpeg ffmpeg -nostdin -v error -i "srt://127.0.0.1:$srt_port?mode=listener" -f null -)")
    ports; switcher none "$preset" --backends none
    cpu_rows+=("$(cpu_run studio-none "${switcher_cmd[@]}")")
    for n in $locals; do
      ports; switcher "local$n" "$preset" --cameras "$n" --camera-size 1280x720 --camera-noise "$noise"
      cpu_rows+=("$(cpu_run "studio-local$n" "${switcher_cmd[@]}")")
    done
    for n in $counts; do
      ports; switcher "remote$n" "$preset" --backends none
      cpu_rows+=("$(cpu_run "studio-remote$n" "${switcher_cmd[@]}")")
    done
  done
fi

mkdir -p bench-results
python3 - "$seconds" "$rounds" "$noise" "$preset" "$node_nice" "$(cut -d' ' -f1-3 /proc/loadavg)" "$work" "${#latency_rows[@]}" \
  "${latency_rows[@]}" "${cpu_rows[@]}" <<'PY' | tee -a bench-results/nodes-latest.md
import sys, math, statistics, glob, os
sys.path.insert(0, "scripts")
from bench_report import by_round, grouped, heading, measure_table
seconds, rounds, noise, preset, niceness, load, work, count, *rows = sys.argv[1:]
latency_rows, cpu_rows = rows[:int(count)], rows[int(count):]
print(heading("Capture nodes", seconds, rounds).rstrip() + f"; noise {noise}, load average {load} at the end\n")
med = statistics.median

if latency_rows:
    runs = by_round(latency_rows)
    local = runs.get("local", {})
    print("| run | frames read (sum) | misread (sum) | wire p50 ms (median) | wire p95 ms (median) | wire min-max ms | the hop: p50 - local's (median) | p95 - local's (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, by_round in runs.items():
        values = list(by_round.values())
        hop = lambda i: [v[i] - local[r][i] for r, v in by_round.items() if r in local]
        shown = lambda i: f"{med(hop(i)):.1f}" if name != "local" and hop(i) else "—"
        print(f"| {name} | {int(sum(v[0] for v in values))} | {int(sum(v[1] for v in values))} | {med(v[2] for v in values):.1f} "
              f"| {med(v[3] for v in values):.1f} | {min(v[4] for v in values):.1f}-{max(v[5] for v in values):.1f} | {shown(2)} | {shown(3)} |")
    print("\n| node clock shift (injected) | samples | measured offset ms (median) | error ms (median) | error ms (max) | round trip ms (median) | switcher's capture_latency_ms (median) |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(work, "clock-*.txt")), key=lambda p: int(p.rsplit("-", 1)[1][:-4])):
        shift = int(path.rsplit("-", 1)[1][:-4])
        samples = [[float(x) for x in line.split()] for line in open(path) if line.strip()]
        if not samples:
            print(f"| +{shift} ms | 0 | — | — | — | — | — |")
            continue
        errors = [abs(s[0] + shift) for s in samples]
        capture = [s[2] for s in samples if not math.isnan(s[2])]
        print(f"| +{shift} ms | {len(samples)} | {med(s[0] for s in samples):+.3f} | {med(errors):.3f} | {max(errors):.3f} "
              f"| {med(s[1] for s in samples):.2f} | {med(capture) if capture else float('nan'):.1f} |")

if cpu_rows:
    by = grouped(cpu_rows)
    print(f"\nCPU runs: program 1280x720@30 x264 {preset} 3000k; the node (nice {niceness}) on the same 2 cores.\n")
    measure_table(by, "net.*")
    print("\n| run | node CPU s/s (median) | pictures in /s per camera (min) | pictures dropped (max) | pictures repeated (max) | frames dropped (max) |")
    print("|---|---|---|---|---|---|")
    for name, values in by.items():
        values = [v for v in values if len(v) >= 10]
        if values and (name.startswith("studio-remote") or name == "ffmpeg"):
            print(f"| {name} | {med(v[5] for v in values):.3f} | {min(v[6] for v in values):.1f} | {max(v[7] for v in values):.0f} "
                  f"| {max(v[8] for v in values):.0f} | {max(v[9] for v in values):.0f} |")
    threads = os.path.join(work, "threads.txt")
    if os.path.exists(threads):
        print("\nThe switcher's net.* threads, CPU s/s (busiest first, the first round's run):\n")
        seen = set()
        for line in open(threads):
            name, listing = line.split(maxsplit=1)
            if name.startswith("studio-remote") and name not in seen:
                seen.add(name)
                print(f"- {name}: {listing.strip().replace(',', ', ')}")
    m = lambda name, i: med(v[i] for v in by[name])
    if "studio-remote1" in by and "ffmpeg" in by and m("ffmpeg", 0) > 0:
        print(f"\nOne remote camera's net.* threads (receive, demux, decode, convert, play out) / ffmpeg -i srt://... -f null -: "
              f"**{m('studio-remote1', 1) / m('ffmpeg', 0):.2f}**")
    if "studio-none" in by:
        for name in by:
            if name.startswith("studio-local"):
                n = int(name[len("studio-local"):])
                remote = f"studio-remote{n}"
                if remote in by:
                    per_local = (m(name, 0) - m("studio-none", 0)) / n
                    per_remote = (m(remote, 0) - m("studio-none", 0)) / n
                    ratio = f"**{per_remote / per_local:.2f}**" if per_local > 0 else "—"
                    print(f"Per camera with {n}: a remote one costs the switcher {per_remote:.3f} CPU s/s, a local test camera "
                          f"{per_local:.3f} (each less studio-none); remote / local: {ratio}")
PY
