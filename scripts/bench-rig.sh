# Sourced (not run) by the benchmark scripts that feed studio from PipeWire and push to nginx-rtmp:
# the set-up they share, written once.
#
#   bench_build PRODUCT...  scripts/setup.sh, then a release build of each product; sets `binpath`.
#   bench_rig NAME          a work directory (`work`, /tmp/studio-bench-NAME.XXXXXX), nginx-rtmp on a
#                           free loopback port (`port`, `url`) and a private PipeWire daemon
#                           (`daemon_pid`; XDG_RUNTIME_DIR and PIPEWIRE_REMOTE exported), both ready;
#                           on exit every PID in `producer_pids`, the daemon and nginx are ended (only
#                           what the script started) and the work directory removed.
# Also sets `ticks` (clock ticks a second, for /proc CPU times) and defines:
#   cpu_ticks PID...        "pid:ticks" (user + system) per PID
#   thread_ticks PID        "comm:ticks" per thread of PID
#   peak_rss_kb PID...      the sum of the processes' peak resident set sizes (VmHWM), in KiB
#   bench_stop SECONDS PID... SIGINT to each (a clean stop: files finished), SIGKILL to any still
#                           running after SECONDS; then reaps them (children of the calling shell)
#   bench_measure NAME PREFIX CMD...  runs CMD for a start-up pause of 5 s (then calls the script's
#                           `bench_started NAME`, if it defines one: the cut), measures `seconds` and
#                           prints "NAME CPU_s/s PREFIX*_threads_s/s peak_RSS_MiB late_ticks frames" (the
#                           last two from `$bin status` on `$work/studio.sock` for a run named studio*)

bench_build() {
  scripts/setup.sh
  local product
  for product in "$@"; do swift build -c release --product "$product" 2>&1 | tail -n 1; done
  # `studio serve` runs in the engine library, which studio loads from beside itself.
  if [[ " $* " == *" studio "* ]]; then swift build -c release --product StudioEngine 2>&1 | tail -n 1; fi
  binpath=$(swift build -c release --show-bin-path)
}

producer_pids=()
bench_cleanup() {
  local p
  for p in "${producer_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$daemon_pid" "$nginx_pid" 2>/dev/null || true
  rm -rf "$work"
}

bench_rig() {
  work=$(mktemp -d "/tmp/studio-bench-$1.XXXXXX")
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  nginx_pid=$(scripts/nginx-rtmp.sh "$work/nginx" "$port")
  mkdir -m 700 "$work/run"
  export XDG_RUNTIME_DIR="$work/run" PIPEWIRE_REMOTE="$work/run/pipewire-0"
  pipewire -c "$PWD/deploy/pipewire-test.conf" >"$work/pipewire.log" 2>&1 &
  daemon_pid=$!
  trap bench_cleanup EXIT
  for _ in $(seq 50); do [ -S "$PIPEWIRE_REMOTE" ] && break; sleep 0.1; done
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
  url="rtmp://127.0.0.1:$port/live"
  ticks=$(getconf CLK_TCK)
}

cpu_ticks() { for p in "$@"; do [ -r "/proc/$p/stat" ] && echo "$p:$(awk '{print $14 + $15}' "/proc/$p/stat")"; done; }
# thread_ticks PID: "comm:ticks" per thread of PID (comm without spaces).
thread_ticks() {
  for t in /proc/"$1"/task/*; do
    [ -r "$t/stat" ] || continue
    # The name is in parentheses; the times are fields 14 and 15 counted after it.
    sed -E 's/^[0-9]+ \((.*)\) /\1\t/' "$t/stat" | awk -F'\t' '{ split($2, f, " "); gsub(/ /, "_", $1); print $1 ":" f[12] + f[13] }'
  done
}

peak_rss_kb() { local p sum=0 kb; for p in "$@"; do kb=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || true); sum=$((sum + ${kb:-0})); done; echo "$sum"; }
bench_stop() {
  local grace=$1 p deadline
  shift
  for p in "$@"; do kill -INT "$p" 2>/dev/null || true; done
  deadline=$((SECONDS + grace))
  for p in "$@"; do
    while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -0 "$p" 2>/dev/null && { echo "bench: PID $p did not stop within ${grace} s of SIGINT: killed" >&2; kill -KILL "$p" 2>/dev/null || true; }
    wait "$p" 2>/dev/null || true
  done
}

bench_measure() {
  local name=$1 prefix=$2
  shift 2
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$!
  sleep 5   # start-up: connect, probe, open files
  if declare -F bench_started >/dev/null; then bench_started "$name"; fi
  local s0 s1 t0 t1 w0 w1 before after
  before=$([[ "$name" == studio* ]] && "$bin" status --json --socket "$work/studio.sock" 2>/dev/null || echo '{}')
  s0=$(cpu_ticks "$pid"); t0=$(thread_ticks "$pid"); w0=$(date +%s.%N)
  sleep "$seconds"
  s1=$(cpu_ticks "$pid"); t1=$(thread_ticks "$pid"); w1=$(date +%s.%N)
  after=$([[ "$name" == studio* ]] && "$bin" status --json --socket "$work/studio.sock" 2>/dev/null || echo '{}')
  local rss; rss=$(peak_rss_kb "$pid")
  bench_stop 15 "$pid"
  python3 - "$name" "$prefix" "$s0" "$s1" "$t0" "$t1" "$w0" "$w1" "$rss" "$ticks" "$before" "$after" <<'PY'
import sys, json
name, prefix, s0, s1, t0, t1, w0, w1, rss, ticks, before, after = sys.argv[1:]
sys.path.insert(0, "scripts")
from bench_ticks import parse
wall = float(w1) - float(w0); hz = int(ticks)
def rate(a, b): return sum(b[k] - a[k] for k in a if k in b) / hz / wall
threads0, threads1 = parse(t0), parse(t1)
group = sum(threads1[k] - threads0[k] for k in threads0 if k.startswith(prefix) and k in threads1) / hz / wall
def program(status, key): return (json.loads(status).get("program") or {}).get(key, 0)
late = program(after, "late_ticks") - program(before, "late_ticks")
frames = program(after, "frames") - program(before, "frames")
print(f"{name} {rate(parse(s0), parse(s1)):.3f} {group:.3f} {int(rss) / 1024:.1f} {late} {frames}")
PY
}
