#!/usr/bin/env bash
# Prints the kernel version the test VM boots (scripts/vm/run.sh) and that scripts/setup.sh builds the
# v4l2loopback module for: $STUDIO_VM_KERNEL_VERSION when set, else the kernel that Debian's
# linux-image-amd64 meta-package (in scripts/setup.sh's list) installed, e.g. 6.1.0-57-amd64.
set -euo pipefail
if [ -n "${STUDIO_VM_KERNEL_VERSION:-}" ]; then echo "$STUDIO_VM_KERNEL_VERSION"; exit 0; fi
depends=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) ||
  { echo "vm: linux-image-amd64 is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
kver=$(printf '%s\n' "$depends" | tr ',|' '\n\n' | sed -n 's/^ *linux-image-\([0-9][^ ]*\) .*/\1/p' | head -1)
[ -n "$kver" ] || { echo "vm: cannot tell the kernel from linux-image-amd64's dependencies: $depends" >&2; exit 1; }
echo "$kver"
