#!/usr/bin/env bash
# Benchmark (issue 15): eight MJPEG webcams on a small PC. Eight PipeWire virtual cameras send MJPEG
# 1280x720@30 with sensor noise (pw-virtual-camera --replay: each camera's 60-frame loop of its moving
# pattern with noise, JPEG qscale 3 like a webcam, encoded once at start and then replayed, so the
# producers cost almost nothing; each loop is also written to a file for the peers). The same job,
# done by each in turn in the same run, interleaved (studio, a, b, studio, ...):
#   studio:      studio serve --config (1920x1080@30 program, x264 veryfast 6000k, AAC tone, RTMP to a
#                private nginx and recorded; ISO for all eight cameras, which for MJPEG cameras is the
#                default passthrough: their JPEGs copied into Matroska; a 2x2 scene `quad` defined;
#                cam1 on program). Decode by demand (the default): cam1 at full size and rate, the
#                others not decoded (nobody watches the console's tiles; no backup rule).
#   ffmpeg-full: (a) how OBS and ffmpeg users do it: one ffmpeg reading the eight loops (-re
#                -stream_loop -1), decoding every camera at full size and rate, cam1 scaled to the
#                1080p program (libx264 veryfast 6000k + AAC tone, FLV to the same nginx), and every
#                camera re-encoded to its own Matroska ISO with libx264 ultrafast 4500k.
#   ffmpeg-copy: (b) eight `ffmpeg -c copy` recorders (loop -> Matroska) plus one ffmpeg transcoding
#                cam1 to the 1080p program (the same settings as above) to the same nginx: 9 processes.
# The peers read the JPEG loops from files: Debian 12's ffmpeg has no PipeWire input, and the loop
# files hold exactly the frames the virtual cameras send; reading a file costs less than a PipeWire
# capture, which favours the peers slightly. Every x264 encode (studio's and the peers') uses tune
# zerolatency, no B-frames, a keyframe every 2 s (program) or 1 s (ISO), as studio's encoders do.
#
# Measured over SECONDS after a settle: CPU (user + system, all threads; for (b) the sum of the nine
# processes) per second of wall time, peak RSS (VmHWM; for (b) the sum), studio's per-thread CPU, its
# skipped program ticks (status program.late_ticks), program frames the encoder dropped
# (encoder.frames_dropped), ISO frames skipped (iso[].frames_skipped) and the frames per second it
# delivered (program, ISO); the peers' program frames per second (ffmpeg -progress). The virtual
# cameras' own CPU is reported apart.
#
# Usage: scripts/bench-eight-cameras.sh [SECONDS per run, default 30] [ROUNDS, default 2]
# Results: printed, and appended to bench-results/latest.md (copy into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=${1:-30}
rounds=${2:-2}
settle=${SETTLE:-5}
cameras=8
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 5 ]] || { echo "bench-eight-cameras: SECONDS must be a whole number, at least 5 (got '$seconds')" >&2; exit 2; }
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || { echo "bench-eight-cameras: ROUNDS must be a whole number, at least 1 (got '$rounds')" >&2; exit 2; }
source scripts/bench-rig.sh
bench_build studio pw-virtual-camera
bin=$binpath/studio
for tool in ffmpeg pipewire nginx python3; do
  command -v "$tool" >/dev/null || { echo "bench-eight-cameras: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
bench_rig eight
# The jobs being measured: stopped on any exit too (only these PIDs, then the rig's).
job_pids=()
trap 'bench_stop 10 "${job_pids[@]}"; bench_cleanup' EXIT
fail() { echo "bench-eight-cameras: $*" >&2; exit 1; }

# Eight cameras, each its own loop (its own pattern colour, noise, and a different phase).
for n in $(seq "$cameras"); do
  "$binpath/pw-virtual-camera" --node "vcam$n" --camera "cam$n" --size 1280x720 --rate 30 --format mjpeg \
    --noise 8 --quality 3 --replay 60 --replay-phase $((n * 7)) --replay-file "$work/loop$n.mjpeg" >"$work/vcam$n.log" 2>&1 &
  producer_pids+=($!)
done
# Making the loops (60 JPEG encodes each) takes a few seconds a camera on a loaded machine.
deadline=$((SECONDS + 240))
for n in $(seq "$cameras"); do
  until grep -q '^ready' "$work/vcam$n.log" 2>/dev/null; do
    kill -0 "${producer_pids[n - 1]}" 2>/dev/null || fail "virtual camera vcam$n exited: $(tail -n 3 "$work/vcam$n.log")"
    [ "$SECONDS" -lt "$deadline" ] || fail "virtual camera vcam$n not ready after 240 s: $(tail -n 3 "$work/vcam$n.log")"
    sleep 0.2
  done
done
loop_bytes=$(cat "$work"/loop*.mjpeg | wc -c)

cat >"$work/studio.yaml" <<EOF
program:
  format: 1920x1080@30
video:
  encoder: x264
  preset: veryfast
  bitrate: 6000k
  keyframe_interval: 2
audio:
  source: tone
outputs:
  - url: $url/studio
    name: nginx
socket: $work/studio.sock
cameras:
  backends: [pipewire]
  iso: true
  pins:
$(for n in $(seq "$cameras"); do printf '    - match: "pipewire:vcam%d"\n      name: cam%d\n' "$n" "$n"; done)
scenes:
  - name: quad
    layout: grid
    sources: [cam1, cam2, cam3, cam4]
http:
  enabled: false
EOF

x264_program=(-c:v libx264 -preset veryfast -tune zerolatency -b:v 6000k -maxrate 6000k -bufsize 6000k -g 60 -keyint_min 60
              -sc_threshold 0 -bf 0 -pix_fmt yuv420p -c:a aac -b:a 128k -ar 48000 -ac 2)
x264_iso=(-c:v libx264 -preset ultrafast -tune zerolatency -b:v 4500k -maxrate 4500k -bufsize 4500k -g 30 -keyint_min 30 -sc_threshold 0 -bf 0)
loop_input() { echo -re -stream_loop -1 -f mjpeg -framerate 30 -i "$work/loop$1.mjpeg"; }
tone_input=(-re -f lavfi -i "sine=frequency=1000:sample_rate=48000")

# start_job NAME ROUND: starts the job's process(es) into job_pids.
start_job() {
  local name=$1 round=$2 n
  mkdir -p "$work/rec-$name-$round"
  case $name in
    studio)
      rm -f "$work/studio.sock"
      "$bin" serve --config "$work/studio.yaml" --record "$work/rec-$name-$round" --db "$work/studio-$round.db" \
        >"$work/studio-$round.out" 2>&1 &
      job_pids=($!) ;;
    ffmpeg-full)
      local args=()
      for n in $(seq "$cameras"); do read -ra input <<<"$(loop_input "$n")"; args+=("${input[@]}"); done
      args+=("${tone_input[@]}" -filter_complex "[0:v]scale=1920:1080[program]"
             -map "[program]" -map "$cameras:a" "${x264_program[@]}" -f flv "$url/ffmpeg-full")
      for n in $(seq "$cameras"); do args+=(-map "$((n - 1)):v" "${x264_iso[@]}" -f matroska "$work/rec-$name-$round/cam$n.mkv"); done
      ffmpeg -hide_banner -nostdin -loglevel error -y -progress "$work/$name-$round.progress" "${args[@]}" >"$work/$name-$round.out" 2>&1 &
      job_pids=($!) ;;
    ffmpeg-copy)
      job_pids=()
      for n in $(seq "$cameras"); do
        read -ra input <<<"$(loop_input "$n")"
        ffmpeg -hide_banner -nostdin -loglevel error -y "${input[@]}" -c copy -f matroska "$work/rec-$name-$round/cam$n.mkv" \
          >"$work/$name-$round-cam$n.out" 2>&1 &
        job_pids+=($!)
      done
      read -ra input <<<"$(loop_input 1)"
      ffmpeg -hide_banner -nostdin -loglevel error -y -progress "$work/$name-$round.progress" "${input[@]}" "${tone_input[@]}" \
        -map 0:v -map 1:a -vf scale=1920:1080 "${x264_program[@]}" -f flv "$url/ffmpeg-copy" >"$work/$name-$round.out" 2>&1 &
      job_pids+=($!) ;;
  esac
}

status_json() { timeout 10 "$bin" status --json --socket "$work/studio.sock" 2>/dev/null; }
cameras_json() { timeout 10 "$bin" cameras --json --socket "$work/studio.sock" 2>/dev/null; }

# wait_ready NAME ROUND: studio: all eight cameras up and cam1 on program; the peers: their program
# encoder is writing (-progress has a frame count). Deadline 60 s.
wait_ready() {
  local name=$1 round=$2 deadline=$((SECONDS + 60)) p
  while :; do
    for p in "${job_pids[@]}"; do
      kill -0 "$p" 2>/dev/null || fail "$name (round $round) exited during start-up: $(tail -n 5 "$work"/"$name"-"$round"*.out)"
    done
    if [ "$name" = studio ]; then
      if status_json >"$work/ready.json" && python3 - "$work/ready.json" "$cameras" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["cameras"] >= int(sys.argv[2]) and s["encoder"]["frames_encoded"] > 0 else 1)
PY
      then
        timeout 10 "$bin" switch cam1 --socket "$work/studio.sock" >/dev/null || fail "studio switch cam1 failed"
        return 0
      fi
    else
      grep -q '^frame=[1-9]' "$work/$name-$round.progress" 2>/dev/null && return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "$name (round $round) not ready after 60 s: $(tail -n 5 "$work"/"$name"-"$round"*.out)"
    sleep 0.5
  done
}

last_progress_frame() { { grep '^frame=' "$work/$1.progress" 2>/dev/null || echo frame=0; } | tail -n 1 | cut -d= -f2; }

# measure NAME ROUND: one run; appends "NAME cpu rss_mib producers_cpu json" to results.txt and the
# studio thread breakdown to threads-ROUND.txt.
measure() {
  local name=$1 round=$2
  start_job "$name" "$round"
  wait_ready "$name" "$round"
  sleep "$settle"
  local c0 c1 p0 p1 t0= t1= w0 w1 f0=0 f1=0 rss p last
  if [ "$name" = studio ]; then
    status_json >"$work/status0.json" || fail "studio status failed"
    cameras_json >"$work/cameras0.json" || fail "studio cameras failed"
    t0=$(thread_ticks "${job_pids[0]}")
  else
    f0=$(last_progress_frame "$name-$round")
  fi
  c0=$(cpu_ticks "${job_pids[@]}"); p0=$(cpu_ticks "${producer_pids[@]}"); w0=$(date +%s.%N)
  sleep "$seconds"
  c1=$(cpu_ticks "${job_pids[@]}"); p1=$(cpu_ticks "${producer_pids[@]}"); w1=$(date +%s.%N)
  if [ "$name" = studio ]; then
    t1=$(thread_ticks "${job_pids[0]}")
    status_json >"$work/status1.json" || fail "studio status failed"
    cameras_json >"$work/cameras1.json" || fail "studio cameras failed"
  else
    f1=$(last_progress_frame "$name-$round")
  fi
  for p in "${job_pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "$name (round $round) exited while measured: $(tail -n 5 "$work"/"$name"-"$round"*.out)"; done
  rss=$(peak_rss_kb "${job_pids[@]}")
  last=${job_pids[-1]}
  bench_stop 20 "${job_pids[@]}"
  job_pids=()
  # The recordings (about 30 MB a second for eight passthrough or copied cameras) are not kept.
  rm -rf "$work/rec-$name-$round"
  python3 - "$name" "$round" "$work" "$ticks" "$c0" "$c1" "$p0" "$p1" "$w0" "$w1" "$rss" "$f0" "$f1" "$t0" "$t1" "$last" <<'PY'
import sys, json, collections
name, rnd, work, hz, c0, c1, p0, p1, w0, w1, rss, f0, f1, t0, t1, transcoder = sys.argv[1:]
hz, wall = int(hz), float(w1) - float(w0)
sys.path.insert(0, "scripts")
from bench_ticks import parse
def rates(a, b):
    a, b = parse(a), parse(b)
    return {k: (b[k] - a[k]) / hz / wall for k in a if k in b}
per_process = rates(c0, c1)
row = {"cpu": sum(per_process.values()), "rss": int(rss) / 1024, "producers": sum(rates(p0, p1).values()), "wall": wall}
if name == "studio":
    s0, s1 = json.load(open(f"{work}/status0.json")), json.load(open(f"{work}/status1.json"))
    span = s1["uptime_s"] - s0["uptime_s"]          # the server's own time between the two snapshots
    d = lambda f: f(s1) - f(s0)
    row["late_ticks"] = d(lambda s: s["program"]["late_ticks"])
    row["late_ticks_total"] = s1["program"]["late_ticks"]
    row["encoder_dropped"] = d(lambda s: s["encoder"]["frames_dropped"])
    row["encoder_dropped_total"] = s1["encoder"]["frames_dropped"]
    row["program_fps"] = d(lambda s: s["encoder"]["frames_encoded"]) / span
    row["tick_fps"] = d(lambda s: s["program"]["frames"]) / span
    row["program_source"] = s1["program"]["source"]
    row["probe_fps"] = s1["encoder"].get("probe_fps")
    iso0 = {i["camera"]: i for i in s0["iso"]}
    before = lambda i, key: iso0.get(i["camera"], {key: 0})[key]
    row["iso"] = len(s1["iso"])
    row["iso_modes"] = ",".join(sorted({i["mode"] + "/" + i["codec"] for i in s1["iso"]}))
    row["iso_skipped"] = sum(i["frames_skipped"] - before(i, "frames_skipped") for i in s1["iso"])
    row["iso_skipped_total"] = sum(i["frames_skipped"] for i in s1["iso"])
    row["iso_fps"] = sum(i["frames_encoded"] - before(i, "frames_encoded") for i in s1["iso"]) / span / max(1, len(s1["iso"]))
    # Capture-to-file of each ISO (its last 300 frames, p50 / p95 in ms): the largest over the feeds.
    to_file = [i.get("latency_ms", {}).get("capture_to_written") for i in s1["iso"]]
    row["iso_to_file"] = [max(q[k] for q in to_file if q) for k in ("p50", "p95")] if any(to_file) else None
    row["program_to_wire"] = [s1["outputs"][0].get("latency_ms", {}).get("capture_to_written", {}).get(k) for k in ("p50", "p95")]
    # All of studio's CPU charged to the program's pace (conservative: its ISO copies and the unseen
    # cameras' decodes run at the cameras' pace whatever the program encoder manages).
    k0 = {c["name"]: c for c in json.load(open(f"{work}/cameras0.json"))["cameras"]}
    k1 = json.load(open(f"{work}/cameras1.json"))["cameras"]
    was = lambda c, key: k0.get(c["name"], {key: 0})[key]
    # Received: an MJPEG camera's JPEGs decoded in full, reduced, or not decoded (its `decode` counters),
    # and those dropped before that because a newer one had come (`frames_dropped`).
    received = lambda c: (sum(c["decode"][k] for k in ("full", "reduced", "skipped")) if c.get("decode") else c["frames"]) + c["frames_dropped"]
    row["camera_fps"] = sum(received(c) - (received(k0[c["name"]]) if c["name"] in k0 else 0) for c in k1) / span / max(1, len(k1))
    row["camera_dropped"] = sum(c["frames_dropped"] - was(c, "frames_dropped") for c in k1)
    row["cpu_per_output"] = row["cpu"] / max(row["program_fps"] / 30, 1e-3)
    t = collections.Counter(); n = collections.Counter()
    a, b = parse(t0), parse(t1)
    for line in t1.split(): n[line.rsplit(":", 1)[0]] += 1
    for k in b: t[k] = (b[k] - a.get(k, 0)) / hz / wall
    # The same with only the program encoder charged to the program's pace (libx264's worker threads
    # take the name of the thread that opens the encoder: `studio`; `encode.video` feeds them), the
    # rest at the cameras' pace, as ffmpeg-copy's recorders are counted.
    encoder = t["studio"] + t["encode.video"]
    row["cpu_per_output_split"] = row["cpu"] - encoder + encoder / max(row["program_fps"] / 30, 1e-3)
    with open(f"{work}/threads-{rnd}.txt", "w") as out:
        for k, v in t.most_common(): out.write(f"{k} {v:.4f} {n[k]}\n")
else:
    row["program_fps"] = (int(f1) - int(f0)) / wall
    # The program transcoder's CPU charged to its pace; ffmpeg-copy's stream-copy recorders keep the
    # cameras' pace (copying is cheap) and count as they are. ffmpeg-full is one process: all of it
    # runs at the program's pace (its inputs are read in step).
    speed = max(row["program_fps"] / 30, 1e-3)
    row["cpu_per_output"] = sum(v / speed if (k == transcoder or name == "ffmpeg-full") else v for k, v in per_process.items())
print(name, json.dumps(row, separators=(",", ":")))
PY
}

mkdir -p bench-results
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/results.txt"
for round in $(seq "$rounds"); do
  for name in studio ffmpeg-full ffmpeg-copy; do
    echo "bench-eight-cameras: round $round: $name ..." >&2
    measure "$name" "$round" >>"$work/results.txt"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
producers_alone=$(p0=$(cpu_ticks "${producer_pids[@]}"); w0=$(date +%s.%N); sleep 5; p1=$(cpu_ticks "${producer_pids[@]}"); w1=$(date +%s.%N)
  python3 -c 'import sys, collections
hz, w0, w1, a, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split()
p = lambda t: dict(x.rsplit(":", 1) for x in t)
a, b = p(a), p(b)
print(f"{sum(int(b[k]) - int(a[k]) for k in a if k in b) / hz / (w1 - w0):.3f}")' "$ticks" "$w0" "$w1" "$p0" "$p1")

python3 - "$seconds" "$rounds" "$load_before" "$load_after" "$work" "$loop_bytes" "$producers_alone" <<'PY' | tee -a bench-results/latest.md
import sys, json, statistics, subprocess, datetime, glob, collections
seconds, rounds, load_before, load_after, work, loop_bytes, producers_alone = sys.argv[1:]
by = collections.OrderedDict()
for line in open(f"{work}/results.txt"):
    name, row = line.split(" ", 1)
    by.setdefault(name, []).append(json.loads(row))
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"\n### Eight MJPEG cameras, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), "
      f"{cpu_model}, {subprocess.getoutput('nproc')} cores, load average {load_before} before, {load_after} after\n")
med = lambda rows, k: statistics.median(r[k] for r in rows)
print("| run | CPU s/s (median) | program fps encoded (median) | CPU s per s of program output (median) | peak RSS MiB (max) | virtual cameras CPU s/s (median) |")
print("|---|---|---|---|---|---|")
for name, rows in by.items():
    print(f"| {name} | {med(rows, 'cpu'):.3f} | {med(rows, 'program_fps'):.1f} | {med(rows, 'cpu_per_output'):.3f} | {max(r['rss'] for r in rows):.1f} | {med(rows, 'producers'):.3f} |")
if "studio" in by:
    s = by["studio"]
    print(f"\nstudio, per run (in the window; totals since start in brackets): "
          + "; ".join(f"skipped program ticks {r['late_ticks']} ({r['late_ticks_total']}), program frames the encoder dropped "
                      f"{r['encoder_dropped']} ({r['encoder_dropped_total']}), ISO frames skipped {r['iso_skipped']} ({r['iso_skipped_total']}) "
                      f"over {r['iso']} ISO ({r['iso_modes']}) at {r['iso_fps']:.1f} fps each, cameras received at {r['camera_fps']:.1f} fps each "
                      f"({r['camera_dropped']} of them dropped before decoding: a newer one had come), program ticks {r['tick_fps']:.1f} / s, "
                      f"encoded {r['program_fps']:.1f} fps from {r['program_source']}, encoder start probe {r['probe_fps']} fps, "
                      f"ISO capture-to-file p50/p95 {r['iso_to_file']} ms (the slowest feed), program capture-to-write "
                      f"{r['program_to_wire']} ms" for r in s))
    for peer, target in (("ffmpeg-full", 0.5), ("ffmpeg-copy", 1.0)):
        if peer in by:
            ratio = med(s, "cpu") / med(by[peer], "cpu")
            normalized = med(s, "cpu_per_output") / med(by[peer], "cpu_per_output")
            split = med(s, "cpu_per_output_split") / med(by[peer], "cpu_per_output")
            print(f"\nstudio/{peer} (target at most {target}): CPU s/s ratio **{ratio:.2f}**, per second of program output "
                  f"**{normalized:.2f}** (all of studio's CPU charged to its program's pace; {split:.2f} with only its program "
                  f"encoder's threads charged so); peak RSS ratio {max(r['rss'] for r in s) / max(r['rss'] for r in by[peer]):.2f}")
    print(f"\nstudio peak RSS {max(r['rss'] for r in s):.1f} MiB (target at most 250 MB = 238.4 MiB)")
    threads, count = collections.defaultdict(list), {}
    for path in glob.glob(f"{work}/threads-*.txt"):
        for line in open(path):
            k, v, n = line.split(); threads[k].append(float(v)); count[k] = n
    total = sum(statistics.median(v) for v in threads.values()) or 1
    print("\nstudio's threads (CPU s/s, median over runs; threads of the same name summed):\n")
    print("| thread | threads | CPU s/s | share |")
    print("|---|---|---|---|")
    for k, v in sorted(threads.items(), key=lambda kv: -statistics.median(kv[1])):
        m = statistics.median(v)
        if m >= 0.002: print(f"| {k} | {count[k]} | {m:.3f} | {100 * m / total:.0f} % |")
print(f"\nThe virtual cameras (8 replayed 60-frame loops, {int(loop_bytes) / 8 / 60 / 1024:.0f} KiB a JPEG on average): "
      f"{producers_alone} CPU s/s for all eight with nobody measured running (the last 5 s).")
PY
