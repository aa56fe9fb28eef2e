#!/usr/bin/env bash
# Soak (issue 34): a real show for HOURS (fractional allowed: 0.25 is a quarter hour), with an operator and
# the world misbehaving around it, then a check that nothing was lost. See scripts/soak.py for what it does
# and checks, and docs/benchmarks.md ("Soak") for the figures.
#
#   scripts/soak.sh HOURS              # e.g. scripts/soak.sh 2
#   SOAK_BUILD=release scripts/soak.sh 2   # the release build (default: debug); built if missing
#
# Needs root for the recording disk (a private tmpfs it fills and frees); without root that part is
# skipped and said so. Loopback only; ends only what it started (by PID); exits non-zero on a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
hours=${1:?usage: scripts/soak.sh HOURS (e.g. 0.5)}
build=${SOAK_BUILD:-debug}
binpath=$(swift build -c "$build" --show-bin-path)
for product in studio StudioEngine pw-virtual-camera; do
  case $product in StudioEngine) file=libStudioEngine.so ;; *) file=$product ;; esac
  if [ ! -e "$binpath/$file" ]; then
    echo "soak: building $product ($build)"
    swift build -c "$build" --product "$product" 2>&1 | tail -n 1
  fi
done

work=$(mktemp -d /tmp/studio-soak.XXXXXX)
record="$work/disk"
mkdir -p "$record"
mounted=0
cleanup() {
  # SOAK_KEEP=1: the work directory (logs, database, samples.csv) and the recordings stay, for a look after.
  [ "${SOAK_KEEP:-0}" = 1 ] && { echo "soak: kept $work (recordings on the tmpfs $record: umount it after)"; return; }
  if [ "$mounted" = 1 ]; then umount -l "$record" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# The recording disk: a tmpfs big enough for the whole run (tmpfs takes memory only for what is written);
# the soak shrinks it to what is used to fill it, and grows it back to free it.
# Its size: 8 GiB an hour of show, at least 4 GiB (the program and five ISOs fit with room to spare).
disk_gib=$(awk -v h="$hours" 'BEGIN { g = int(h * 8 + 0.999); print (g < 4 ? 4 : g) }')
export SOAK_DISK="${disk_gib}g"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o "size=$SOAK_DISK,mode=0700" tmpfs "$record"; then
  mounted=1
else
  echo "soak: cannot mount a tmpfs (needs root): the disk-full phase is skipped"
fi
/usr/bin/python3 scripts/soak.py --hours "$hours" --bin "$binpath" --work "$work" --record "$record" \
  --tmpfs "$mounted" --build "$build"
