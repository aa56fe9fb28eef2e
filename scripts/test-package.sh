#!/usr/bin/env bash
# The Debian package on a clean Debian 12: builds it (scripts/package.sh, lintian included), installs it
# with apt into a fresh minimal Debian 12 root (debootstrap, in a chroot), and runs it there:
# `studio version`, `studio doctor` as root and as the service user with the packaged config, the user,
# group, config and unit the package makes; then a reinstall (the maintainer scripts run twice) and a purge.
#
#   scripts/test-package.sh [--skip-build] [DEB]
#
# The debootstrap'd root and the packages apt fetched for it are cached under ~/.cache/studio
# (XDG_CACHE_HOME), so only the first run downloads Debian; each run installs into an overlay on the
# cached root, which stays clean. The root part runs through sudo when not root. Exit status: 0 all
# checks passed, 1 not, 2 a wrong argument.
set -euo pipefail
cd "$(dirname "$0")/.."

deb=""
package_args=()
for argument in "$@"; do
  case "$argument" in
    --skip-build) package_args+=(--skip-build) ;;
    *.deb) deb=$(realpath "$argument") ;;
    *) echo "test-package: unknown argument $argument (usage: scripts/test-package.sh [--skip-build] [DEB])" >&2; exit 2 ;;
  esac
done
started=$(date +%s)
say() { echo "test-package: [$(( $(date +%s) - started ))s] $*"; }
fail() { echo "test-package: FAILED: $*" >&2; exit 1; }

if [ -z "$deb" ]; then
  out=$(realpath -m .build/package-out)
  rm -rf "$out"
  scripts/package.sh --output "$out" "${package_args[@]}"
  deb=$(ls "$out"/studio_*.deb)
fi
# The package is built as the caller; installing it into a root needs root (debootstrap, chroot, mounts).
if [ "$(id -u)" -ne 0 ]; then
  exec sudo "$0" "$deb"
fi
say "testing $deb"

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# The cached Debian 12 root: made once (into a temporary directory, renamed when complete, so an
# interrupted debootstrap is redone rather than used), from the mirror this machine's apt uses.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/studio"
base="$cache/debian12-root"
archives="$cache/debian12-apt-archives"
mkdir -p "$cache" "$archives/partial"
if [ ! -f "$base/.complete" ]; then
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  say "debootstrap bookworm (minbase) from $mirror into $base (once)"
  rm -rf "$base.partial" "$base"
  debootstrap --variant=minbase --cache-dir="$archives" bookworm "$base.partial" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log" >&2; fail "debootstrap (log: $cache/debootstrap.log)"; }
  # The same suites as a Debian 12 machine: updates and security too.
  rm -f "$base.partial/etc/apt/sources.list"
  cat > "$base.partial/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  touch "$base.partial/.complete"
  mv "$base.partial" "$base"
fi

# A clean root for this run: an overlay on the cached one (its writes go to a temporary directory; a copy
# where overlayfs is not allowed), with
# /proc (studio finds its engine library through /proc/self/exe) and the shared apt cache mounted.
run_dir=$(mktemp -d /tmp/studio-test-package.XXXXXX)
root="$run_dir/root"
mkdir -p "$root" "$run_dir/upper" "$run_dir/work"
mounts=()
cleanup() {
  local i
  for (( i=${#mounts[@]}-1; i>=0; i-- )); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" || true; done
  rm -rf "$run_dir"
}
trap cleanup EXIT
if mount -t overlay overlay -o "lowerdir=$base,upperdir=$run_dir/upper,workdir=$run_dir/work" "$root" 2>/dev/null; then
  mounts+=("$root")
else
  say "no overlayfs here: copying the cached root instead"
  cp -a "$base/." "$root/"
fi
mount -t proc proc "$root/proc"
mounts+=("$root/proc")
mount --bind "$archives" "$root/var/cache/apt/archives"
mounts+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

say "apt-get install ./$(basename "$deb") in the clean root"
in_root apt-get update -qq >"$run_dir/apt.log" 2>&1 || { cat "$run_dir/apt.log" >&2; fail "apt-get update in the root"; }
in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >>"$run_dir/apt.log" 2>&1 ||
  { tail -30 "$run_dir/apt.log" >&2; fail "apt-get install of the package"; }
say "installed ($(in_root dpkg-query -W -f='${Version}' studio))"

dev_packages=$(in_root dpkg-query -W -f='${Package}\n' | grep -E -- '-dev$' || true)
[ -z "$dev_packages" ] || fail "installing studio brought -dev packages: $dev_packages"

version=$(in_root studio version) || fail "studio version exited $?"
expected="studio $(in_root dpkg-query -W -f='${Version}' studio)"
[ "$version" = "$expected" ] || fail "studio version printed '$version', expected '$expected'"
say "studio version: $version"

in_root ldd /usr/bin/studio /usr/lib/studio/libStudioEngine.so >"$run_dir/ldd.txt" 2>&1 || fail "ldd: $(cat "$run_dir/ldd.txt")"
! grep -q "not found" "$run_dir/ldd.txt" || fail "unresolved libraries: $(grep 'not found' "$run_dir/ldd.txt")"

# `studio doctor` loads the engine library (FFmpeg, PipeWire, libva...) and checks the machine: in a bare
# root it finds problems (no cameras, no PipeWire) and says so, exit 1; what must not happen is a
# failure to run at all (a missing library, a crash: any other exit status, or no summary line).
check_doctor() {
  local who="$1"; shift
  local status=0
  in_root "$@" >"$run_dir/doctor.txt" 2>&1 || status=$?
  cat "$run_dir/doctor.txt"
  [ "$status" -le 1 ] || fail "studio doctor ($who) exited $status"
  grep -Eq '^[0-9]+ problem\(s\), [0-9]+ warning\(s\)$' "$run_dir/doctor.txt" || fail "studio doctor ($who) printed no summary"
  ! grep -q "engine library" "$run_dir/doctor.txt" || fail "studio doctor ($who) did not load the engine library"
  grep -Eq '^OK +ffmpeg +libx264 encoder present' "$run_dir/doctor.txt" || fail "studio doctor ($who) found no libx264 in the installed libavcodec"
}
say "studio doctor (root)"
check_doctor root studio doctor
say "studio doctor as the service runs it (user studio, /etc/studio/studio.yaml)"
check_doctor "user studio" setpriv --reuid=studio --regid=studio --init-groups \
  studio doctor --config /etc/studio/studio.yaml --db /var/lib/studio/studio.db
grep -q "no RTMP destination configured" "$run_dir/doctor.txt" || fail "the packaged config streams somewhere"

in_root getent passwd studio >/dev/null || fail "no user studio"
in_root getent group studio >/dev/null || fail "no group studio"
mode=$(in_root stat -c '%U:%G %a' /etc/studio/studio.yaml)
[ "$mode" = "root:studio 640" ] || fail "/etc/studio/studio.yaml is $mode, expected root:studio 640"
in_root dpkg-query -W -f='${Conffiles}' studio | grep -q "/etc/studio/studio.yaml" || fail "studio.yaml is not a conffile"
grep -q "^ExecStart=/usr/bin/studio serve" "$root/lib/systemd/system/studio.service" || fail "the unit does not run /usr/bin/studio"

say "reinstall (the maintainer scripts again), then purge"
in_root dpkg -i "/tmp/$(basename "$deb")" >>"$run_dir/apt.log" 2>&1 || { tail -20 "$run_dir/apt.log" >&2; fail "reinstall"; }
in_root apt-get purge -y -q studio >>"$run_dir/apt.log" 2>&1 || { tail -20 "$run_dir/apt.log" >&2; fail "purge"; }
[ ! -e "$root/usr/bin/studio" ] && [ ! -e "$root/etc/studio/studio.yaml" ] || fail "purge left /usr/bin/studio or the config"

say "all checks passed"
