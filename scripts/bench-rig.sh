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
