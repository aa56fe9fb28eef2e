#!/usr/bin/env bash
# Runs one command inside a throwaway qemu VM that boots Debian's own kernel (which ships the `vivid`
# virtual V4L2 driver as a module; the host kernel here has no V4L2), and returns its exit status.
#
#   scripts/vm/run.sh [--timeout SECONDS] [--share DIR]... [--no-vivid | --vivid "ARGS"] [--loopback N] [--cwd DIR] -- COMMAND [ARGS...]
#
# - The host's root filesystem is the VM's root, shared read-only over virtio-9p; each --share DIR (and
#   the current directory) is shared read-write at the same path. /tmp, /run, /dev/shm are tmpfs in the VM.
# - Nothing is compiled inside the VM: build on the host, run the binaries here.
# - vivid is loaded as two webcam-like capture devices (/dev/video0, /dev/video1) unless --no-vivid
#   (--vivid "ARGS" replaces the module parameters).
# - --loopback N loads v4l2loopback (built for the VM's kernel by scripts/setup.sh, with DKMS) as N MJPEG
#   camera nodes, /dev/video10 on (scripts/vm/loopback.sh says how).
# - The kernel is scripts/vm/kernel-version.sh's: $STUDIO_VM_KERNEL_VERSION, else linux-image-amd64's.
# - Exit status: the command's own; 97 when the VM hit the hard timeout (default 600 s); 98 when the VM
#   ended without reporting a status (boot failure, kernel panic). So a failing VM never hangs CI.
# - The uncompressed kernel (PVH boot, about 3 s faster than the bzImage under TCG) and the busybox
#   initramfs are made at run time into a cache directory ($STUDIO_VM_CACHE, default ~/.cache/studio-vm).
set -euo pipefail

kver="$("$(dirname "$0")/kernel-version.sh")" || exit 98
bzimage="/boot/vmlinuz-$kver"
cache="${STUDIO_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/studio-vm}"
timeout_s=600
vivid=1
vivid_args="n_devs=2 node_types=0x1,0x1 num_inputs=1,1 input_types=0x0,0x0"
loopback=0
cwd="$PWD"
shares=()
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout_s="$2"; shift 2 ;;
    --share) shares+=("$(realpath "$2")"); shift 2 ;;
    --no-vivid) vivid=0; shift ;;
    --vivid) vivid_args="$2"; shift 2 ;;
    --loopback) loopback="$2"; shift 2 ;;
    --cwd) cwd="$(realpath "$2")"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--timeout S] [--share DIR]... [--no-vivid] [--loopback N] [--cwd DIR] -- COMMAND [ARGS...]" >&2; exit 2; }
case "$loopback" in [0-8]) ;; *) echo "vm: --loopback takes 0-8 (nodes)" >&2; exit 2 ;; esac
if [ "$loopback" -gt 0 ] && ! modinfo -k "$kver" v4l2loopback >/dev/null 2>&1; then
  echo "vm: no v4l2loopback module for $kver (scripts/setup.sh builds it with DKMS)" >&2; exit 99
fi
shares+=("$cwd")
for tool in qemu-system-x86_64 xz cpio; do
  command -v "$tool" >/dev/null || { echo "vm: $tool is missing (scripts/setup.sh installs the VM's packages)" >&2; exit 98; }
done
[ -r "$bzimage" ] || { echo "vm: no kernel at $bzimage (package linux-image-amd64)" >&2; exit 98; }
[ -x /bin/busybox ] || { echo "vm: no /bin/busybox (package busybox-static)" >&2; exit 98; }
mkdir -p "$cache"

# 1. The uncompressed vmlinux (an ELF with a PVH entry note), cut out of the bzImage's xz payload.
vmlinux="$cache/vmlinux-$kver"
if [ ! -s "$vmlinux" ]; then
  offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bzimage" | head -1 | cut -d: -f1)
  [ -n "$offset" ] || { echo "vm: no xz payload in $bzimage" >&2; exit 98; }
  tail -c +"$((offset + 1))" "$bzimage" | xz -dcq > "$vmlinux.tmp" 2>/dev/null || true  # trailing data after the stream is expected
  [ "$(head -c 4 "$vmlinux.tmp" | od -An -c | tr -d ' ')" = "177ELF" ] || { echo "vm: could not extract vmlinux" >&2; rm -f "$vmlinux.tmp"; exit 98; }
  mv "$vmlinux.tmp" "$vmlinux"
fi

# 2. The initramfs: static busybox, the virtio/9p modules, and an init that mounts the host root
#    read-only, the shares read-write, runs the command in a chroot and powers off.
initrd="$cache/initramfs-$kver.cpio.gz"
init_version=4
if [ ! -s "$initrd" ] || [ "$(cat "$cache/initramfs.version" 2>/dev/null)" != "$init_version-$kver" ]; then
  staging=$(mktemp -d)
  mkdir -p "$staging"/{bin,proc,sys,dev,newroot,mods}
  cp /bin/busybox "$staging/bin/busybox"
  for m in virtio_pci 9pnet_virtio 9p; do modprobe --show-depends -S "$kver" "$m"; done |
    awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$staging/mods/order.full"
  : > "$staging/mods/order"
  while read -r ko; do cp "$ko" "$staging/mods/"; basename "$ko" >> "$staging/mods/order"; done < "$staging/mods/order.full"
  rm "$staging/mods/order.full"
  cat > "$staging/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
while read -r ko; do insmod "/mods/$ko"; done < /mods/order
fail() { echo "vm-init: $*"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /newroot || fail "no host root"
mount -t proc proc /newroot/proc; mount -t sysfs sys /newroot/sys; mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts; mount -t tmpfs shm /newroot/dev/shm
mount -t tmpfs tmp /newroot/tmp; chmod 1777 /newroot/tmp; mount -t tmpfs run /newroot/run
mkdir -p /newroot/run/studio-vm
mount -t 9p -o trans=virtio,version=9p2000.L,cache=mmap,msize=512000 control /newroot/run/studio-vm || fail "no control share"
. /newroot/run/studio-vm/shares
ifconfig lo 127.0.0.1 up
chroot /newroot /bin/sh /run/studio-vm/command.sh
echo $? > /newroot/run/studio-vm/status
sync
poweroff -f
INIT
  chmod +x "$staging/init"
  (cd "$staging" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.tmp"
  mv "$initrd.tmp" "$initrd"
  echo "$init_version-$kver" > "$cache/initramfs.version"
  rm -rf "$staging"
fi

# 3. The run's control directory: the command, the share mounts, and the status the VM writes back.
control=$(mktemp -d "${TMPDIR:-/tmp}/studio-vm.XXXXXX")
trap 'rm -rf "$control"' EXIT
virtfs=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=$control,mount_tag=control,security_model=none")
: > "$control/shares"
index=0
for dir in "${shares[@]}"; do
  virtfs+=(-virtfs "local,path=$dir,mount_tag=share$index,security_model=none")
  printf 'mkdir -p /newroot%q 2>/dev/null; mount -t 9p -o trans=virtio,version=9p2000.L,cache=loose,msize=512000 share%d /newroot%q || fail "share %q"\n' "$dir" "$index" "$dir" "$dir" >> "$control/shares"
  index=$((index + 1))
done
{
  echo 'export PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/home TMPDIR=/tmp'
  echo 'mkdir -p /tmp/home'
  if [ "$vivid" = 1 ]; then
    printf 'modprobe vivid %s || exit 99\n' "$vivid_args"
  fi
  if [ "$loopback" -gt 0 ]; then
    printf '%q load %d || { echo "vm: v4l2loopback did not load"; exit 99; }\n' "$(realpath "$(dirname "$0")")/loopback.sh" "$loopback"
  fi
  printf 'cd %q || exit 99\n' "$cwd"
  printf 'exec'; printf ' %q' "$@"; echo
} > "$control/command.sh"

started=$(date +%s.%N)
set +e
timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 2048 \
  -machine pc -nographic -no-reboot -nic none -serial mon:stdio -monitor none \
  -kernel "$vmlinux" -initrd "$initrd" -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" \
  "${virtfs[@]}" </dev/null
qemu_status=$?
set -e
elapsed=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if [ "$qemu_status" -eq 124 ] || [ "$qemu_status" -eq 137 ]; then
  echo "vm: hard timeout after ${timeout_s} s: the VM was killed" >&2
  exit 97
fi
if [ ! -s "$control/status" ]; then
  echo "vm: the VM ended without a status (qemu exit $qemu_status, ${elapsed} s)" >&2
  exit 98
fi
status=$(cat "$control/status")
echo "vm: command exited $status after ${elapsed} s (boot included)" >&2
exit "$status"
